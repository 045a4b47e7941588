"""`memdir reindex` on a served vault swaps a new index generation in under the running index. A memory captured
while the new generation goes live must be written and indexed without a failure: the old generation the running
index still uses stays on disk until the index has moved to the new one."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from indexer import generations
from mcp_server.service import operations as ops
from mcp_server.service.memory_service import MemoryService

BOUND = 60.0


def test_a_memory_added_while_reindex_puts_the_new_generation_live_is_indexed_without_a_failure(
        service: MemoryService, monkeypatch: pytest.MonkeyPatch):
    live, captured = threading.Event(), threading.Event()
    swap = generations.Layout.swap

    def swap_then_wait_for_the_capture(layout: generations.Layout, generation: Path, *rest: object) -> None:
        swap(layout, generation, *rest)  # CURRENT names the new generation; the running index still reads the old one
        live.set()
        assert captured.wait(BOUND), "the capture did not finish"

    monkeypatch.setattr(generations.Layout, "swap", swap_then_wait_for_the_capture)
    outcome: dict[str, object] = {}

    def reindex() -> None:
        try:
            outcome["report"] = service.reindex()
        except BaseException as exc:  # noqa: BLE001 - shown by the assertion below
            outcome["error"] = exc
            live.set()

    worker = threading.Thread(target=reindex)
    worker.start()
    try:
        assert live.wait(BOUND) and "error" not in outcome, outcome
        added = service.add(ops.Add(content="The nightly export runs at 02:00 UTC from the reporting replica",
                                    title="Nightly export window"))
    finally:
        captured.set()
        worker.join(BOUND)
    assert "error" not in outcome, outcome
    assert added.status == "created" and service.index.get(added.memory.id).title == "Nightly export window"
    found = service.search(ops.Search(query="nightly export reporting replica"))
    assert added.memory.id in [hit.id for hit in found.results]
