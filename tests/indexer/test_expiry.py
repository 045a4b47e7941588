"""Memories the next lifecycle run removes are left out at read time, not served while they wait."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from vault.settings import LifecycleSettings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def searcher(root: Path, lifecycle: LifecycleSettings | None = LifecycleSettings()) -> Searcher:
    return Searcher(open_index(root), SearchSettings(), lifecycle=lifecycle)


def test_a_context_memory_past_its_ttl_is_not_returned_but_shown_with_all(hashing_root: Path):
    # memory_text dates memories 2026-11-01: 21 days before NOW, past the 7-day TTL of `context`.
    write(hashing_root, "history/ctx.md", memory_text("m-00c0ffee", "Staging freeze", "Staging is frozen for the audit",
                                                      type="context"))
    write(hashing_root, "history/keep.md", memory_text("m-00beef00", "Staging owner", "Staging is owned by Dana's team"))
    s = searcher(hashing_root)
    found = [h.memory.id for h in s.search(SearchRequest(query="staging frozen audit", now=NOW))]
    assert "m-00c0ffee" not in found and "m-00beef00" in found
    shown = [h.memory.id for h in s.search(SearchRequest(query="staging frozen audit", now=NOW, include_superseded=True))]
    assert "m-00c0ffee" in shown
    s.index.close()


def test_a_working_memory_left_unpromoted_past_a_day_is_not_served_and_a_promotable_one_is(hashing_root: Path):
    write(hashing_root, "working/idle.md", memory_text("m-0000a1d1", "Idle note", "Tried the flaky uploader retry",
                                                       collection="working"))
    write(hashing_root, "working/good.md", memory_text("m-0000a1d2", "Proven note", "The flaky uploader needs a retry",
                                                       collection="working", extra="score: 0.8\nuses: 3\n"))
    s = searcher(hashing_root)
    found = [h.memory.id for h in s.search(SearchRequest(query="flaky uploader retry", now=NOW))]
    assert found == ["m-0000a1d2"]
    s.index.close()


def test_without_lifecycle_rules_a_searcher_serves_everything(hashing_root: Path):
    write(hashing_root, "history/ctx.md", memory_text("m-00c0ffee", "Staging freeze", "Staging is frozen for the audit",
                                                      type="context"))
    s = searcher(hashing_root, lifecycle=None)
    assert [h.memory.id for h in s.search(SearchRequest(query="staging frozen audit", now=NOW))] == ["m-00c0ffee"]
    s.index.close()
