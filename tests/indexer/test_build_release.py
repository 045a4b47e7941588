"""A fresh build gives back what it held before the same process opens the generation it built (issue 32 item 1)."""

from __future__ import annotations

import gc
from pathlib import Path

import indexer.index as index_module
from indexer.chunking import Chunk
from indexer.rebuild import reindex
from tests.indexer.helpers import open_index, plain_notes


def test_a_reindexed_generation_loads_into_the_running_index_with_none_of_the_builds_chunks_still_held(
        tmp_path: Path, monkeypatch):
    """`memdir reindex` through a server loads the generation it built into the running index. That load runs with
    the collector paused, so whatever of the build a collection had not yet freed stayed under it (at 100k the end
    of a first open's build rose 264 MB above the slices' peak, when it too loaded the built generation)."""
    root = tmp_path / "vault"
    plain_notes(root, 90, ", about the ledger")
    running = open_index(root)
    held_at_open: list[int] = []
    real = index_module.Index._load

    def counted(self, generation):  # type: ignore[no-untyped-def]
        held_at_open.append(sum(type(item) is Chunk for item in gc.get_objects()))  # type(), not isinstance: torch warns on a __class__ lookup
        return real(self, generation)

    monkeypatch.setattr(index_module.Index, "_load", counted)
    monkeypatch.setattr(index_module, "BUILD_SLICE", 30)
    was_on = gc.isenabled()
    gc.collect()
    gc.disable()  # no collection comes between the build and the open on its own: the build must make one
    try:
        reindex(running)
    finally:
        if was_on:
            gc.enable()
    try:
        assert len(held_at_open) == 2, held_at_open  # the filling index's load, then the built generation's
        assert held_at_open[1] == 0, f"{held_at_open[1]} chunks of the build still held when its generation loaded"
        assert running.memory_count() == 90 and running.keyword_search("ledger", 5)
    finally:
        running.close()
