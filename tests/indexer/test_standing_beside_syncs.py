"""A prompt's standing facts read what its search just worked out, without waiting for the index lock behind the other
sessions' searches and captures; a change to the index is seen by the next reader (issue 32 item 6, session 12)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.indexer.helpers import open_index
from vault.errors import DiskFullError

BOUND = 60.0  # seconds: never reached unless something waits for what it must not
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
V2, V3 = "m-5d3f7a18", "m-8e2c4b07"  # the example's job-locking v2, superseded by v3


def held_elsewhere(lock: threading.RLock) -> tuple[threading.Event, threading.Event, threading.Thread]:
    """The index lock taken by another thread (a capture's sync), until `release` is set (the test's `finally`)."""
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            taken.set()
            release.wait()

    thread = threading.Thread(target=hold)
    thread.start()
    assert taken.wait(BOUND)
    return taken, release, thread


def test_what_is_out_of_sight_is_read_while_a_sync_holds_the_index_lock_after_a_search(hashing_example: Path):
    index = open_index(hashing_example)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    searcher.search(SearchRequest(query="Redis lock for statement imports", limit=10, now=NOW))
    _, release, holder = held_elsewhere(index.lock)
    reader = ThreadPoolExecutor(1)
    try:
        gone = reader.submit(searcher.out_of_sight, NOW).result(timeout=BOUND)
    finally:
        release.set()
        holder.join(BOUND)
        reader.shutdown()
    assert V2 in gone and V3 not in gone
    index.close()


def test_a_memory_superseded_after_the_search_is_out_of_sight_for_the_next_reader(hashing_example: Path):
    index = open_index(hashing_example)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    searcher.search(SearchRequest(query="Redis lock for statement imports", limit=10, now=NOW))
    assert V3 not in searcher.out_of_sight(NOW)
    v4 = hashing_example / "patterns" / "job-locking-v4.md"
    v4.write_text("---\nid: m-00c0ffee\ncollection: patterns\ntype: decision\ntitle: Job locking v4\n"
                  "created_at: 2026-11-21T10:00:00Z\nstatus: active\n"
                  "supersedes: [\"[[job-locking-v3-postgres-advisory-locks]]\"]\n---\nThis supersedes v3.\n")
    index.sync(["patterns/job-locking-v4.md"])
    assert V3 in searcher.out_of_sight(NOW)
    index.close()


def test_standing_facts_after_a_search_match_those_read_under_the_lock(hashing_example: Path):
    """The cached answer is the answer: a fresh Searcher, which has none, reads the same."""
    index = open_index(hashing_example)
    warm = Searcher(index, SearchSettings(embedder="hashing-256"))
    warm.search(SearchRequest(query="Redis lock for statement imports", limit=10, now=NOW))
    cold = Searcher(index, SearchSettings(embedder="hashing-256"))
    assert warm.out_of_sight(NOW) == cold.out_of_sight(NOW)
    index.close()


def test_a_supersede_whose_manifest_write_failed_is_still_out_of_sight_for_the_next_reader(hashing_example: Path,
                                                                                        monkeypatch):
    # The graph in memory holds the new link even when the manifest could not be written (a full disk): a cache kept
    # by index version must not go on serving the list from before it (review of session 12).
    index = open_index(hashing_example)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    assert V3 not in searcher.out_of_sight(NOW)
    v4 = hashing_example / "patterns" / "job-locking-v4.md"
    v4.write_text("---\nid: m-00c0ffee\ncollection: patterns\ntype: decision\ntitle: Job locking v4\n"
                  "created_at: 2026-11-21T10:00:00Z\nstatus: active\n"
                  "supersedes: [\"[[job-locking-v3-postgres-advisory-locks]]\"]\n---\nThis supersedes v3.\n")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index.manifest, "write", full)
    with pytest.raises(DiskFullError):
        index.sync(["patterns/job-locking-v4.md"])
    assert V3 in searcher.out_of_sight(NOW)
    index.close()


def test_a_prompts_standing_facts_are_read_while_a_sync_holds_the_index_lock_after_a_search(hashing_example: Path):
    # Session 19 found the standing facts by their ids kept in step (Index.standing_ids), asked under the index lock:
    # every prompt queued for it again behind the other sessions' captures, which the above had ended.
    from mcp_server.service.app import App
    from mcp_server.service.memory_service import MemoryService

    app = App(hashing_example)
    service = MemoryService(app)
    before = [m.id for m in service.always_inject()]
    service.hits(SearchRequest(query="Redis lock for statement imports", limit=10))
    _, release, holder = held_elsewhere(app.index.lock)
    reader = ThreadPoolExecutor(1)
    try:
        standing = reader.submit(service.always_inject).result(timeout=BOUND)
    finally:
        release.set()
        holder.join(BOUND)
        reader.shutdown()
    assert [m.id for m in standing] == before and before
    app.close()
