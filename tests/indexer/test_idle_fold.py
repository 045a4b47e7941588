"""The vectors' log is folded into their snapshot while the owner is idle, beside its searches and writes, and a
closing owner gives the fold up past its time budget (issue 32 item 5): a long session leaves the next open little
to replay, and a SIGTERM ends the server promptly without losing the log."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from indexer import stored_vectors
from indexer.embed import HashingEmbedder
from indexer.idle_fold import IDLE_SECONDS, LOOK_AGAIN_SECONDS, IdleFold
from indexer.index import Index
from indexer.live import LiveIndex
from indexer.vectors import LOG_FILE, SETTLE_SHARE, STORED_FILE
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


def _owner_with_a_log(root: Path) -> Index:
    """An owner whose edits' vectors are in the log, past its share, not yet folded."""
    _notes(root)
    index = open_index(root)
    _edited(index)
    return index


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
    index = _owner_with_a_log(hashing_root)
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
    index = _owner_with_a_log(hashing_root)
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


def test_a_second_fold_while_one_is_under_way_is_refused_and_the_first_puts_whole_vectors_in_place(
        hashing_root: Path, monkeypatch):
    """Two folds wrote the same temp files: the second's truncation left zeroed rows in the snapshot the first put
    in place, and the first removed the log (review of session 11: the open's fold and the idle fold met)."""
    index = _owner_with_a_log(hashing_root)
    expected = state(index)
    held, fold, folded = _fold_held_at_its_fsync(index, monkeypatch)
    try:
        assert index.settle_vectors() is False
        held.released.set()
        fold.join(TIMEOUT)
        assert folded == [True] and not list(index.generation.glob("*.tmp"))
    finally:
        held.released.set()
        index.close()
    assert _reopened_and_rebuilt(hashing_root) == (expected, expected)


def test_a_fold_of_a_generation_being_replaced_gives_up(hashing_root: Path, monkeypatch):
    index = _owner_with_a_log(hashing_root)
    log_bytes = _log(index).read_bytes()
    held, fold, folded = _fold_held_at_its_fsync(index, monkeypatch)
    try:
        index._vectors.retire()  # what a swap to a rebuilt generation does before it reads the new one
        held.released.set()
        fold.join(TIMEOUT)
        assert folded == [False]
        assert _log(index).read_bytes() == log_bytes and not list(index.generation.glob("*.tmp"))
    finally:
        held.released.set()
        index.close()


def test_a_fold_cut_short_midway_by_its_budget_leaves_the_log_and_no_temp_file(hashing_root: Path, monkeypatch):
    """The close's budget runs out while the stored part is being written (at 100k that write is the fold's
    seconds): the fold stops within a slice, and the log and the snapshot stay as they were."""
    _notes(hashing_root)
    for n in range(6):  # notes of several sentences: their sentence vectors are the stored part
        write(hashing_root, f"history/s{n}.md", memory_text(f"m-1000000{n}", f"Long {n}",
              f"The heron queue {n} stalled. The pelican gate drained it. A kestrel watched the release."))
    index = open_index(hashing_root)
    _edited(index)
    assert len(index._vectors._stored.ids()) > 10
    monkeypatch.setattr(stored_vectors, "_SLICE", 1)  # a row a slice: many chances to stop
    log_bytes = _log(index).read_bytes()
    stored_bytes = (index.generation / STORED_FILE).read_bytes()
    asked: list[bool] = []

    def budget() -> bool:
        asked.append(len(asked) >= 8)  # past the searched part's copy (3 asks), a few stored rows in
        return asked[-1]

    try:
        assert index.settle_vectors(budget) is False
        assert asked.count(True) == 1, "the fold went on past its budget"
        assert _log(index).read_bytes() == log_bytes
        assert (index.generation / STORED_FILE).read_bytes() == stored_bytes
        assert not list(index.generation.glob("*.tmp"))
    finally:
        index.close()


def test_a_fold_the_index_refuses_is_looked_at_again_later_not_at_once(hashing_root: Path, monkeypatch):
    """A failed sync leaves changes waiting for their persist, and every fold is refused until one succeeds: the
    idle thread tried again at once, a core spun (review of session 11)."""
    _notes(hashing_root)
    index = open_index(hashing_root)
    waits: list[float | None] = []

    class _RecordedWake(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(timeout)
            idle.stop_event.set()  # one round is enough to see what it waits for
            return True

    try:
        idle = IdleFold(index, idle=0.0)
        idle.stop_event = idle._stop  # type: ignore[attr-defined]
        idle._wake = _RecordedWake()
        monkeypatch.setattr(idle, "_due_in", lambda: 0.0)
        monkeypatch.setattr(index, "settle_vectors", lambda cancelled: False)
        idle._run()
        assert waits == [LOOK_AGAIN_SECONDS]
    finally:
        index.close()


def test_an_index_just_opened_is_not_yet_idle(hashing_root: Path):
    _notes(hashing_root)
    open_index(hashing_root).close()
    index = Index.open(Vault(hashing_root), HashingEmbedder(), reconcile=False)  # as a server opens it
    try:
        assert index.quiet_seconds() < IDLE_SECONDS  # time since the open, not since the machine's boot
    finally:
        index.close()
