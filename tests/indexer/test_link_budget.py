"""A file of more links than anyone writes by hand is indexed up to the link budget, with a warning, and
costs what a file at the budget does: a teammate's pushed file of 100,000 links must not stall the vault."""

from __future__ import annotations

import logging
from pathlib import Path

from indexer.links import MAX_LINKS
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import write
from tests.indexer.helpers import open_index


def test_a_file_past_the_link_budget_is_indexed_up_to_it_with_a_warning(hashing_root: Path, caplog):
    links = " ".join(f"[[t-{i}]]" for i in range(MAX_LINKS * 4))
    write(hashing_root, "history/bomb.md", f"---\nid: m-0000b0b0\ntitle: Link hub\n---\nzebrafront {links} zebratail\n")
    write(hashing_root, "history/ok.md", "---\nid: m-00000a0a\ntitle: Ordinary\n---\nSee [[bomb]] for the hub.\n")
    with caplog.at_level(logging.WARNING, logger="memdir.graph"):
        index = open_index(hashing_root)
    try:
        assert len(index.links.outgoing("m-0000b0b0")) == MAX_LINKS
        searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
        keyword = lambda word: [h.memory.id for h in searcher.search(SearchRequest(query=word, mode="keyword"))]
        assert keyword("zebrafront")[:1] == ["m-0000b0b0"] and "m-0000b0b0" not in keyword("zebratail")
        assert "history/bomb.md: more than 5000 [[links]]" in caplog.text
    finally:
        index.close()
