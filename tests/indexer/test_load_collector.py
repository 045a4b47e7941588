"""An index load runs without the cyclic garbage collector, and leaves it as it found it (issue 32 item 5)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from indexer import collector
from indexer.embed import HashingEmbedder
from indexer.generations import Layout
from indexer.index import Index
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from vault import Vault


def test_the_garbage_collector_waits_while_an_index_loads_its_files_and_is_on_again_after(
        hashing_root: Path, monkeypatch):
    """Checked where the load reads: counting collections stopped telling the two apart once rows were decoded when
    first read (300 memories load with one collection or none either way, and the owed one may come in two parts)."""
    for i in range(300):
        write(hashing_root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"words of note {i} about x{i}"))
    open_index(hashing_root).close()
    generation = Layout(hashing_root).current()
    index = Index(Vault(hashing_root), HashingEmbedder(), generation, writable=False)
    on_while_reading: list[bool] = []
    real = Index._read_generation
    monkeypatch.setattr(Index, "_read_generation",
                        lambda self, g: on_while_reading.append(gc.isenabled()) or real(self, g))
    try:
        assert gc.isenabled()
        index.swap(generation)  # a reader's reload: the same load as an open
        assert on_while_reading == [False]
        assert gc.isenabled()
        assert index.memory_count() == 300
    finally:
        index.close()


def test_the_pause_gives_the_collector_back_as_it_found_it_even_when_the_block_fails():
    with pytest.raises(RuntimeError):
        with collector.paused():
            assert not gc.isenabled()
            raise RuntimeError("a damaged file")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()


def test_overlapping_loads_keep_the_collector_off_until_the_last_one_ends():
    first, second = collector.paused(), collector.paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    try:
        assert not gc.isenabled()  # the second load is still under way
    finally:
        second.__exit__(None, None, None)
    assert gc.isenabled()
