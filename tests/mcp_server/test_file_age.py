"""A note without created_at shows its file's age wherever a memory's age is shown, as the time filters assume."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService

from ..conftest import write
from mcp_server.service import operations as ops


def test_a_note_without_created_at_shows_its_files_age_in_search_lookup_and_read(hashing_root: Path):
    undated = write(hashing_root, "notes/undated.md", "---\nid: m-0da7ed02\ntitle: Undated\n---\n"
                    "Hand-written note about the ledger import lock.\n")
    three_days = time.time() - 3 * 86400
    os.utime(undated, (three_days, three_days))
    app = App(hashing_root)
    try:
        service = MemoryService(app)
        ranked = service.search(ops.Search(query="ledger import lock")).results[0]
        looked_up = service.search(ops.Search(id="m-0da7ed02")).results[0]
        timeline = service.search(ops.Search(days_back=7)).results[0]
        read = service.read(ops.Read(ref="m-0da7ed02"))
    finally:
        app.close()
    assert ranked.created_at is None  # nothing is made up: the file has no created_at
    assert [ranked.age, looked_up.age, timeline.age, read.age] == ["3d"] * 4
