"""A served vault's owner reconciles its files as soon as its watcher is up, without waiting for a search: until it
has, answers, the spool's replay and the lifecycle read the committed generation, which knows nothing of what was
edited, made private or deleted while no server ran (a first form waited for the first answer: review of session 8).
Its heal reads the rows' columns, so the first searches do not wait behind every row being decoded."""

from __future__ import annotations

import threading
from pathlib import Path

from indexer.live import LiveIndex
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, top_ids
from tests.indexer.test_open_reconcile_later import FAST, TIMEOUT, _open_later, _vault


def _reconcile_started(index) -> threading.Event:
    started = threading.Event()
    real = index.reconcile
    index.reconcile = lambda: started.set() or real()
    return started


def test_the_reconcile_starts_without_a_search_and_finds_the_edits_made_offline(hashing_root: Path) -> None:
    _vault(hashing_root)
    open_index(hashing_root).close()
    write(hashing_root, "history/fresh.md", memory_text("m-00000005", "Fresh", "a pelican in the release notes"))
    index = _open_later(hashing_root)
    started = _reconcile_started(index)
    try:
        with LiveIndex(index, FAST):
            assert started.wait(TIMEOUT) and index.reconciled.wait(TIMEOUT)  # nobody asked anything
            assert top_ids(index, "pelican")[:1] == ["m-00000005"]
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
