"""A served vault's owner reconciles its files after its first search is answered (or after a bound without one): at
100k memories the reconcile's heal and deep sync held the index lock and the CPU for tens of seconds while the first
search waited (bench/README, issue 32 item 5, session 8)."""

from __future__ import annotations

import threading
from pathlib import Path

from indexer import live as live_module
from indexer.live import LiveIndex
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, top_ids
from tests.indexer.test_open_reconcile_later import FAST, TIMEOUT, _open_later, _vault


def _reconcile_started(index) -> threading.Event:
    started = threading.Event()
    real = index.reconcile
    index.reconcile = lambda: started.set() or real()
    return started


def test_the_reconcile_waits_for_the_first_answer_and_then_finds_the_edits(hashing_root: Path, monkeypatch) -> None:
    monkeypatch.setattr(live_module, "RECONCILE_AFTER_SECONDS", 60.0)
    _vault(hashing_root)
    open_index(hashing_root).close()
    write(hashing_root, "history/fresh.md", memory_text("m-00000005", "Fresh", "a pelican in the release notes"))
    index = _open_later(hashing_root)
    started = _reconcile_started(index)
    try:
        with LiveIndex(index, FAST):
            assert not started.wait(0.5)  # the watcher is up, nobody asked yet: the CPU and the lock stay free
            assert top_ids(index, "pelican") == []  # the first answer, from the committed generation
            assert started.wait(TIMEOUT) and index.reconciled.wait(TIMEOUT)
            assert top_ids(index, "pelican")[:1] == ["m-00000005"]
    finally:
        index.close()


def test_without_a_search_the_reconcile_starts_after_its_bound_and_a_stop_does_not_wait_for_it(
        hashing_root: Path, monkeypatch) -> None:
    _vault(hashing_root)
    open_index(hashing_root).close()
    monkeypatch.setattr(live_module, "RECONCILE_AFTER_SECONDS", 0.0)
    index = _open_later(hashing_root)
    try:
        with LiveIndex(index, FAST):
            assert index.reconciled.wait(TIMEOUT)  # nobody searched: it ran anyway
    finally:
        index.close()
    monkeypatch.setattr(live_module, "RECONCILE_AFTER_SECONDS", 600.0)
    index = _open_later(hashing_root)
    started = _reconcile_started(index)
    try:
        live = LiveIndex(index, FAST).start()
        live.stop()  # returns without waiting out the bound, and without reconciling
        assert not started.is_set() and index.reconcile_pending
    finally:
        index.close()


def test_a_heal_after_a_lazy_open_reads_the_rows_columns_and_decodes_none(hashing_root: Path, monkeypatch) -> None:
    from tests.indexer.test_lazy_rows import decoded_rows

    _vault(hashing_root)
    open_index(hashing_root).close()
    decoded = decoded_rows(monkeypatch)
    index = _open_later(hashing_root)
    try:
        at_open = set(decoded)
        assert index.heal() == 0 and set(decoded) == at_open  # nothing to heal, and no row decoded to know it
    finally:
        index.close()
