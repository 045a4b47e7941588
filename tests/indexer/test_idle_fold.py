"""The vectors' log is folded into their snapshot while the owner is idle, beside its searches and writes, and a
closing owner gives the fold up past its time budget (issue 32 item 5): a long session leaves the next open little
to replay, and a SIGTERM ends the server promptly without losing the log."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from indexer.embed import HashingEmbedder
from indexer.index import Index
from indexer.live import LiveIndex
from indexer.vectors import LOG_FILE, SETTLE_SHARE
from tests.conftest import memory_text, write
from tests.indexer.helpers import fresh_rebuild, open_index, state, top_ids
from tests.indexer.test_vectors_settle import FAST, TIMEOUT, _edited, _notes
from vault import Vault


def _log(index: Index) -> Path:
    return index.generation / LOG_FILE


def _state_of(index: Index) -> dict:
    try:
        return state(index)
    finally:
        index.close()


def _reopened_and_rebuilt(root: Path) -> tuple[dict, dict]:
    """The next owner's open (the log replayed, then healed and reconciled), then a rebuild from the files."""
    return _state_of(open_index(root)), _state_of(fresh_rebuild(root))


class _HeldFsync:
    """The fold's snapshot write held at its fsync, in the thread named `thread`, until released."""

    def __init__(self, monkeypatch, thread: str) -> None:
        self.reached, self.released, self._thread = threading.Event(), threading.Event(), thread
        fsync = os.fsync

        def held(fd: int) -> None:
            if threading.current_thread().name == self._thread and not self.reached.is_set():
                self.reached.set()
                assert self.released.wait(TIMEOUT)
            fsync(fd)

        monkeypatch.setattr(os, "fsync", held)


def _fold_held_at_its_fsync(index: Index, monkeypatch) -> tuple[_HeldFsync, threading.Thread, list[bool]]:
    """The owner folds its log in a thread, held at its snapshot's fsync."""
    held = _HeldFsync(monkeypatch, "fold")
    folded: list[bool] = []
    fold = threading.Thread(name="fold", target=lambda: folded.append(index.settle_vectors()), daemon=True)
    fold.start()
    assert held.reached.wait(TIMEOUT)
    return held, fold, folded


def _answered_while_held(work, held: _HeldFsync) -> bool:
    """Run `work` while the fold is held; whether it ended before the fold went on (bounded)."""
    done = threading.Event()
    thread = threading.Thread(target=lambda: (work(), done.set()), daemon=True)
    thread.start()
    answered = done.wait(TIMEOUT / 4)
    held.released.set()
    thread.join(TIMEOUT)
    return answered


def test_an_idle_owner_folds_the_log_once_it_passed_its_share_with_no_request(hashing_root: Path):
    _notes(hashing_root)
    index = open_index(hashing_root)
    live = LiveIndex(index, FAST, fold_idle=0.0).start()
    try:
        assert live.caught_up.wait(TIMEOUT)
        syncs = live.syncs
        write(hashing_root, "history/fresh.md", memory_text("m-00000009", "Fresh", "a kestrel in the release notes"))
        assert live.wait_for_sync(syncs, TIMEOUT)  # the watcher's sync: its vectors are in the log
        assert live.idle_fold.wait_folds(1, TIMEOUT), "no fold while the owner was idle"
        assert not _log(index).exists() and index.log_share() <= SETTLE_SHARE
        expected = state(index)
    finally:
        live.stop()
        index.close()
    assert _reopened_and_rebuilt(hashing_root) == (expected, expected)


def test_a_search_during_a_fold_answers_and_the_fold_completes(hashing_root: Path, monkeypatch):
    _notes(hashing_root)
    index = open_index(hashing_root)
    _edited(index)
    expected = state(index)
    held, fold, folded = _fold_held_at_its_fsync(index, monkeypatch)
    try:
        hits: list[list[str]] = []
        assert _answered_while_held(lambda: hits.append(top_ids(index, "pelican gate")), held), \
            "the search waited for the fold"
        fold.join(TIMEOUT)
        assert hits[0][0] == "m-00000001" and folded == [True]
        assert not _log(index).exists() and state(index) == expected
    finally:
        held.released.set()
        index.close()
    assert _reopened_and_rebuilt(hashing_root) == (expected, expected)


def test_a_sync_during_a_fold_is_not_held_up_and_the_fold_gives_up(hashing_root: Path, monkeypatch):
    _notes(hashing_root)
    index = open_index(hashing_root)
    _edited(index)
    held, fold, folded = _fold_held_at_its_fsync(index, monkeypatch)

    def edit() -> None:
        write(hashing_root, "history/n3.md", memory_text("m-00000003", "Note 3", "an osprey took the heron queue"))
        index.sync()

    try:
        assert _answered_while_held(edit, held), "the sync waited for the fold"
        fold.join(TIMEOUT)
        assert folded == [False]  # the snapshot it wrote lacks the sync's change: given up, not put in place
        assert not list(index.generation.glob("*.tmp"))
        expected = state(index)
    finally:
        held.released.set()
        index.close()
    assert _reopened_and_rebuilt(hashing_root) == (expected, expected)


def test_a_close_past_its_fold_budget_returns_with_the_log_intact_and_the_next_open_replays_it(hashing_root: Path):
    _notes(hashing_root)
    index = open_index(hashing_root)
    live = LiveIndex(index, FAST, close_fold_seconds=0.0).start()  # a SIGTERM whose fold would take too long
    try:
        assert live.caught_up.wait(TIMEOUT)
        _edited(index)
        expected = state(index)
        log_bytes = _log(index).read_bytes()
        live.stop()
        assert _log(index).read_bytes() == log_bytes and not list(index.generation.glob("*.tmp"))
    finally:
        index.close()
    replayed = Index.open(Vault(hashing_root), HashingEmbedder(), reconcile=False)  # as a server opens it
    assert _log(replayed).exists() and _state_of(replayed) == expected
    assert _reopened_and_rebuilt(hashing_root) == (expected, expected)
