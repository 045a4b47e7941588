"""Two memdir commands at once on a vault without an index (two terminals, the first search of a fresh clone):
the one that does not own the index waits for the other's build instead of failing with "no usable index"."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from indexer.generations import Layout
from indexer.index import Index, IndexUnusable, build_index
from indexer.rebuild import rebuild
from tests.conftest import memory_text, write
from tests.indexer.helpers import HashingEmbedder
from vault import Vault


def test_an_open_while_another_process_builds_the_first_index_waits_for_that_build(hashing_root: Path, monkeypatch):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    builder = Layout(hashing_root).try_own()  # the other command: it owns the index and is still building it
    looked = threading.Event()  # the second open found no generation yet
    current = Layout.current

    def current_seen(self: Layout) -> Path | None:
        found = current(self)
        if found is None and threading.current_thread().name == "second":
            looked.set()
        return found

    monkeypatch.setattr(Layout, "current", current_seen)
    opened: list[Index | BaseException] = []

    def second() -> None:
        try:
            opened.append(Index.open(Vault(hashing_root), HashingEmbedder()))
        except BaseException as exc:  # noqa: BLE001 - the assertion below shows it
            opened.append(exc)

    thread = threading.Thread(target=second, name="second")
    thread.start()
    assert looked.wait(10)
    build_index(Vault(hashing_root), HashingEmbedder(), Layout(hashing_root)).close()
    builder.release()
    thread.join(30)
    assert not thread.is_alive()
    [index] = opened
    assert isinstance(index, Index), index
    try:
        assert list(index.memory_ids()) == ["m-0000000a"]
    finally:
        index.close()


def test_a_reindex_while_another_command_owns_the_index_says_what_to_do(hashing_root: Path):
    other = Layout(hashing_root).try_own()  # a second `memdir reindex` (or a search building) in another terminal
    try:
        with pytest.raises(IndexUnusable, match="another command building or changing it.*again when it is done"):
            rebuild(Vault(hashing_root), HashingEmbedder())
    finally:
        other.release()
