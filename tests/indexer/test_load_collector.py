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


def _open_rows(index: Index) -> list[tuple]:
    """The manifest rows an open holds undecoded (lazy_rows.py): a tuple of strings and numbers each."""
    return [held for held in index._entries._slots.values() if type(held) is tuple]


def test_in_a_process_that_keeps_its_loads_an_open_is_frozen_before_a_collector_pass_walks_it(
        hashing_root: Path, monkeypatch):
    """The server keeps what an open makes (collector.keeping_loads): frozen as the load ends, the row tuples are never
    walked (a pass untracks a tuple of strings and numbers; at 100k memories the first pass after the open walked
    every row to find nothing, 0.1 CPU s of the first answer). Elsewhere the collector sees them as before."""
    for i in range(50):
        write(hashing_root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"words of note {i}"))
    open_index(hashing_root).close()
    generation = Layout(hashing_root).current()
    plain = Index(Vault(hashing_root), HashingEmbedder(), generation, writable=False)
    try:
        gc.collect()
        assert _open_rows(plain) and not any(gc.is_tracked(row) for row in _open_rows(plain))
    finally:
        plain.close()
    frozen_before = gc.get_freeze_count()
    with collector.keeping_loads():
        kept = Index(Vault(hashing_root), HashingEmbedder(), generation, writable=False)
    try:
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen_before
        gc.collect()
        rows = _open_rows(kept)
        assert len(rows) == 50 and all(gc.is_tracked(row) for row in rows)  # no pass walked them
        walked = {id(o) for o in gc.get_objects()}
        assert not any(id(row) in walked for row in rows)
    finally:
        kept.close()
        gc.unfreeze()


def test_a_load_beside_another_threads_pause_leaves_what_it_made_to_the_collector():
    """A pull's sync holding its pause in another thread: its temporaries are not frozen with the load's objects."""
    frozen_before = gc.get_freeze_count()
    other = collector.Pause()
    other.hold()
    try:
        with collector.keeping_loads(), collector.loading():
            made = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen_before and not gc.isenabled()
    finally:
        other.let_go()
    assert gc.isenabled() and made
    with collector.keeping_loads(), collector.loading():
        made = [[i] for i in range(100)]
    try:
        assert gc.get_freeze_count() >= frozen_before + 100
    finally:
        gc.unfreeze()
