"""Vague questions about a time ("what did we work on", "right now", "yesterday") get a timeline."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from indexer.timewords import is_vague, window_days
from tests.indexer.helpers import open_index

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def searcher(root: Path) -> Searcher:
    return Searcher(open_index(root), SearchSettings())


def created(hits) -> list[datetime]:
    return [h.memory.created_at for h in hits]


@pytest.mark.parametrize("query, days", [
    ("what am I working on right now", 3), ("what did we do yesterday", 2.5), ("anything new today?", 1.5),
    ("what changed last week", 14), ("what did we ship in the last 10 days", 10), ("recent decisions", 14),
    ("how does the billing retry work", None), ("When did Caroline go to the support group?", None),
])
def test_time_words_name_a_window_and_only_time_words_do(query: str, days: float | None):
    assert window_days(query) == days


@pytest.mark.parametrize("query, vague", [
    ("what did we work on", True), ("what am I working on right now", True), ("what happened yesterday?", True),
    ("what did we decide about the kafka consumer last week", False), ("postgres", False),
    ("What did Caroline do yesterday?", False), ("", False),
])
def test_a_query_is_vague_when_it_names_no_subject(query: str, vague: bool):
    assert is_vague(query) is vague


def test_a_vague_question_inside_a_window_returns_the_window_newest_first(example_root: Path):
    s = searcher(example_root)
    window = s.search(SearchRequest(days_back=5, now=NOW))
    assert len(window) >= 2, "the example vault has memories in the last five days"
    hits = s.search(SearchRequest(query="what did we work on", days_back=5, now=NOW))
    assert [h.memory.id for h in hits] == [h.memory.id for h in window]
    assert created(hits) == sorted(created(hits), reverse=True) and all(h.channel == "timeline" for h in hits)
    assert all(c >= NOW - timedelta(days=5) for c in created(hits))
    s.index.close()


def test_time_words_alone_set_the_window_of_a_vague_question(example_root: Path):
    s = searcher(example_root)
    hits = s.search(SearchRequest(query="what did we do in the last 4 days?", now=NOW))
    assert hits and all(c >= NOW - timedelta(days=4) for c in created(hits))
    assert created(hits) == sorted(created(hits), reverse=True)
    s.index.close()


def test_right_now_after_a_quiet_spell_still_answers_with_the_newest_memories(example_root: Path):
    s = searcher(example_root)
    later = NOW + timedelta(days=60)
    hits = s.search(SearchRequest(query="what am I working on right now", now=later, limit=3))
    newest = sorted((m.created_at for m in s.index.memories.values() if m.created_at), reverse=True)[:3]
    assert created(hits) == newest
    s.index.close()


def test_a_question_that_names_a_subject_is_searched_not_listed(example_root: Path):
    s = searcher(example_root)
    hits = s.search(SearchRequest(query="what did we decide about the deploy pipeline yesterday", now=NOW))
    assert hits and all(h.channel != "timeline" for h in hits)
    s.index.close()


def test_timelines_merged_from_several_vaults_stay_newest_first(example_root: Path):
    from dataclasses import replace

    from indexer.search import order_hits

    s = searcher(example_root)
    hits = s.search(SearchRequest(days_back=30, now=NOW, limit=20))
    # Two vaults' timelines concatenated, as the privacy layer merges the project and user vault.
    merged = order_hits(hits[1::2] + [replace(h) for h in hits[0::2]], "relevance")
    assert created(merged) == sorted(created(merged), reverse=True)
    s.index.close()
