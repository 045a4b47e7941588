"""A served owner's reconcile starts at once but goes behind the searches: its heal parses the open's rows and its
deep sync reads the files before the index lock, each waiting for the searches running meanwhile, and a reconcile
that finds every file as the manifest has it builds no link graph (that decoded every row under the lock)."""

from __future__ import annotations

import threading
from pathlib import Path

from indexer.index import Index
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, rebuilt_state, state, top_ids
from tests.indexer.test_lazy_rows import decoded_rows
from tests.indexer.test_open_reconcile_later import TIMEOUT, _open_later, _vault


def _waits_seen(index: Index) -> threading.Event:
    """Set when the index first waits for the running searches."""
    seen = threading.Event()
    real = index.searches.wait_for_running

    def waiting(timeout: float) -> bool:
        seen.set()
        return real(timeout)
    index.searches.wait_for_running = waiting  # type: ignore[method-assign]
    return seen


def test_a_reconcile_waits_for_a_running_search_without_holding_the_lock(hashing_root: Path, tmp_path: Path) -> None:
    _vault(hashing_root)
    open_index(hashing_root).close()
    write(hashing_root, "history/fresh.md", memory_text("m-00000005", "Fresh", "a pelican in the release notes"))
    index = _open_later(hashing_root)
    waited = _waits_seen(index)
    reconciling = threading.Thread(target=index.reconcile)
    try:
        with index.searches.running():  # a search is being answered
            reconciling.start()
            assert waited.wait(TIMEOUT)
            assert not index.reconciled.is_set()
            assert index.lock.acquire(blocking=False)  # the search can take the lock: the reconcile does not hold it
            index.lock.release()
        reconciling.join(TIMEOUT)
        assert index.reconciled.is_set()
        assert top_ids(index, "pelican")[:1] == ["m-00000005"]
        assert _without_vectors(state(index)) == rebuilt_state(hashing_root, tmp_path)
    finally:
        reconciling.join(TIMEOUT)
        index.close()


def test_a_reconcile_under_the_lock_does_not_wait_for_the_searches_that_wait_for_it(hashing_root: Path) -> None:
    _vault(hashing_root)
    open_index(hashing_root).close()
    index = _open_later(hashing_root)
    waited = _waits_seen(index)
    try:
        with index.searches.running(), index.lock:  # a reader become owner reconciles holding the lock (Index.refresh)
            index.reconcile()
        assert index.reconciled.is_set() and not waited.is_set()
    finally:
        index.close()


def test_a_reconcile_that_finds_nothing_changed_decodes_no_row(hashing_root: Path, tmp_path: Path, monkeypatch) -> None:
    _vault(hashing_root)
    open_index(hashing_root).close()
    index = _open_later(hashing_root)
    decoded = decoded_rows(monkeypatch)
    try:
        report = index.reconcile()
        assert not report.changed and decoded == []
        assert _without_vectors(state(index)) == rebuilt_state(hashing_root, tmp_path)
    finally:
        index.close()


def _without_vectors(found: dict) -> dict:
    return {key: value for key, value in found.items() if key != "vectors"}
