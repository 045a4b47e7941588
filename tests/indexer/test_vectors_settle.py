"""The vectors' log is folded into their snapshot off the write path (issue 32 item 5): once the owner has reconciled,
and when it closes, so that the next open has little to replay before its first answer. A crash at any step of the
fold loses nothing."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from indexer.embed import HashingEmbedder
from indexer.index import Index
from indexer.live import LiveIndex
from indexer.settings import WatchSettings
from indexer.vectors import LOG_FILE, SETTLE_SHARE, VectorIndex
from tests.conftest import memory_text, write
from tests.indexer.helpers import fresh_rebuild, open_index, state, top_ids
from vault import Vault

TIMEOUT = 20.0
FAST = WatchSettings(debounce_seconds=0.1, max_wait_seconds=1.0, rescan_seconds=0.0)


class _Crash(Exception):
    """The process dies here: what is on disk at this point is what the next open finds."""


def _notes(root: Path) -> None:
    for n in range(6):
        write(root, f"history/n{n}.md", memory_text(f"m-0000000{n}", f"Note {n}", f"The heron queue number {n} stalled. "
                                                    "Its workers waited on the lock. Nobody was paged for an hour."))


def _edited(index: Index) -> None:
    """Edits synced by the owner: their vectors are in the log, not yet in the snapshot."""
    root = index.root
    write(root, "history/n1.md", memory_text("m-00000001", "Note 1", "The pelican gate replaced the heron queue. It drains "
                                             "the backlog overnight. The old queue stays read-only for a week."))
    (root / "history" / "n2.md").unlink()
    write(root, "history/fresh.md", memory_text("m-00000009", "Fresh", "a kestrel in the release notes"))
    index.sync()
    assert index._vectors.log_share(index.generation) > SETTLE_SHARE


def _killed_owner_left_a_log(root: Path) -> dict:
    """An owner that synced edits and ended without its live index's stop (killed): its log stays."""
    _notes(root)
    index = open_index(root)
    _edited(index)
    expected = state(index)
    index.close()
    assert (root_log(index)).stat().st_size > 0
    return expected


def root_log(index: Index) -> Path:
    return index.generation / LOG_FILE


def test_an_owner_folds_the_log_a_killed_owner_left_into_the_snapshot_once_it_has_reconciled(hashing_root: Path):
    expected = _killed_owner_left_a_log(hashing_root)
    index = Index.open(Vault(hashing_root), HashingEmbedder(), reconcile=False)  # as a server opens it
    try:
        assert root_log(index).exists() and state(index) == expected  # replayed at the open
        first_answer = top_ids(index, "the pelican gate and the heron queue")  # its stored rows read from the log
        assert index._vectors._stored._new_rows._lent is not None and first_answer
        live = LiveIndex(index, FAST).start()
        assert live.caught_up.wait(TIMEOUT), "the reconcile and the fold never finished"
        assert not root_log(index).exists()
        assert state(index) == expected
        live.stop()
    finally:
        index.close()
    reopened = open_index(hashing_root)
    assert state(reopened) == expected
    reopened.close()
    rebuilt = fresh_rebuild(hashing_root)
    assert state(rebuilt) == expected and top_ids(rebuilt, "the pelican gate and the heron queue") == first_answer


def test_a_closing_owner_folds_its_sessions_log_into_the_snapshot(hashing_root: Path):
    _notes(hashing_root)
    index = open_index(hashing_root)
    live = LiveIndex(index, FAST).start()
    try:
        assert live.caught_up.wait(TIMEOUT)
        _edited(index)
        expected = state(index)
        assert root_log(index).stat().st_size > 0
        live.stop()
        assert not root_log(index).exists()
    finally:
        index.close()
    reopened = open_index(hashing_root)
    assert state(reopened) == expected
    reopened.close()


@pytest.mark.parametrize("step", ["the searched part renamed", "the stored part renamed", "the log removed"])
def test_a_crash_at_any_step_of_the_fold_loses_nothing(hashing_root: Path, monkeypatch, step: str):
    expected = _killed_owner_left_a_log(hashing_root)
    index = Index.open(Vault(hashing_root), HashingEmbedder(), reconcile=False)
    renames, replace, unlink = [], os.replace, Path.unlink

    def crashing_replace(source, target):
        renames.append(Path(target).name)
        if step == ("the searched part renamed" if len(renames) == 1 else "the stored part renamed"):
            raise _Crash(step)
        return replace(source, target)

    def crashing_unlink(path: Path, missing_ok: bool = False):
        if path.name == LOG_FILE and step == "the log removed":
            raise _Crash(step)
        return unlink(path, missing_ok=missing_ok)

    try:
        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", crashing_replace)
            patch.setattr(Path, "unlink", crashing_unlink)
            with pytest.raises(_Crash):
                index.settle_vectors()
        assert root_log(index).exists()  # the log goes last: whatever was renamed, it is replayed over it
    finally:
        index.close()  # lets go of the files and the ownership; writes nothing of the vectors
    reopened = open_index(hashing_root)  # the next owner: the log replayed over what the crash left, then healed
    assert state(reopened) == expected
    reopened.close()


def test_a_reader_that_opened_during_a_fold_reloads_what_the_fold_wrote(hashing_root: Path, monkeypatch):
    """A reader reads the snapshot, then the log: an owner's fold between the two leaves it the old snapshot and no
    log. The fold changes no entry, so it tells readers itself, and the reader's next catch-up reloads."""
    _notes(hashing_root)
    owner = open_index(hashing_root)
    _edited(owner)
    expected = state(owner)
    opened, folded = threading.Event(), threading.Event()
    replay = VectorIndex._replay

    def fold_between_snapshot_and_log(self, path, *owner):  # type: ignore[no-untyped-def]
        if threading.current_thread().name == "reader":
            opened.set()
            assert folded.wait(10)
        return replay(self, path, *owner)

    monkeypatch.setattr(VectorIndex, "_replay", fold_between_snapshot_and_log)
    box: dict[str, Index] = {}
    reader = threading.Thread(name="reader", target=lambda: box.setdefault(
        "index", Index.open(Vault(hashing_root), HashingEmbedder(), writable=False)))
    reader.start()
    assert opened.wait(10)
    assert owner.settle_vectors()
    folded.set()
    reader.join(10)
    try:
        box["index"].refresh()
        assert state(box["index"])["vectors"] == expected["vectors"]
    finally:
        box["index"].close()
        owner.close()
