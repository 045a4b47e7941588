"""Vague questions about a time ("what did we work on", "right now", "yesterday") get a timeline."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from indexer.timewords import is_vague, vague_types, window
from tests.indexer.helpers import open_index

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def searcher(root: Path) -> Searcher:
    return Searcher(open_index(root), SearchSettings())


def created(hits) -> list[datetime]:
    """Creation times of the dated hits (a note without created_at is dated by its file's mtime)."""
    return [h.memory.created_at for h in hits if h.memory.created_at is not None]


D = timedelta(days=1)
MIDNIGHT = datetime(2026, 11, 22, tzinfo=timezone.utc)  # NOW is Sunday noon


@pytest.mark.parametrize("query, start, end", [
    ("what am I working on right now", NOW - 3 * D, NOW), ("where did we leave off?", NOW - 3 * D, NOW),
    ("what am I in the middle of?", NOW - 3 * D, NOW),
    ("what did we do yesterday", MIDNIGHT - D, MIDNIGHT), ("anything new today?", MIDNIGHT, NOW),
    ("the flaky test from two days ago", MIDNIGHT - 2 * D, MIDNIGHT - D),
    ("what did we decide the day before yesterday", MIDNIGHT - 2 * D, MIDNIGHT - D),
    ("what changed last week", MIDNIGHT - 13 * D, MIDNIGHT - 6 * D), ("this week so far", MIDNIGHT - 6 * D, NOW),
    ("what did we ship in the last 10 days", NOW - 10 * D, NOW), ("recent decisions", NOW - 14 * D, NOW),
    ("everything since Tuesday", MIDNIGHT - 5 * D, NOW), ("what happened on friday", MIDNIGHT - 2 * D, MIDNIGHT - D),
    ("the migration we did in October", datetime(2026, 10, 1, tzinfo=timezone.utc),
     datetime(2026, 11, 1, tzinfo=timezone.utc)),
    ("the outage in december", datetime(2025, 12, 1, tzinfo=timezone.utc), datetime(2026, 1, 1, tzinfo=timezone.utc)),
])
def test_time_words_name_calendar_windows_in_the_users_time_zone(query: str, start: datetime, end: datetime):
    named = window(query, NOW, timezone.utc)
    assert named is not None and named.start == start and abs((named.end - end).total_seconds()) <= 1


@pytest.mark.parametrize("query, start, end", [
    ("What did Joanna accomplish in January 2022?", datetime(2022, 1, 1), datetime(2022, 2, 1)),
    ("the outage in the beginning of november 2022", datetime(2022, 11, 1), datetime(2022, 12, 1)),
    ("What did Gina find for her store on 1 February, 2023?", datetime(2023, 2, 1), datetime(2023, 2, 2)),
    ("the painting she showed on October 13, 2023", datetime(2023, 10, 13), datetime(2023, 10, 14)),
    ("the forest picture from December 1,2023", datetime(2023, 12, 1), datetime(2023, 12, 2)),
    ("the book he finished on 8th December, 2023", datetime(2023, 12, 8), datetime(2023, 12, 9)),
    ("how many times did she go to the beach in 2023", datetime(2023, 1, 1), datetime(2024, 1, 1)),
    ("what did she do last weekend before April 10, 2023", datetime(2023, 4, 3), datetime(2023, 4, 11)),
    ("every schema change since March 2024", datetime(2024, 3, 1), NOW),
])
def test_a_date_written_with_its_year_names_that_day_month_or_year_not_the_latest_one(query: str, start: datetime,
                                                                                     end: datetime):
    named = window(query, NOW, timezone.utc)
    start, end = start.replace(tzinfo=start.tzinfo or timezone.utc), end.replace(tzinfo=end.tzinfo or timezone.utc)
    assert named is not None and named.start == start and abs((named.end - end).total_seconds()) <= 1


@pytest.mark.parametrize("query", ["the 31 February, 2023 incident", "port 2023 is taken", "in summer 2021"])
def test_a_year_without_a_real_date_or_a_preposition_names_no_window(query: str):
    assert window(query, NOW, timezone.utc) is None


@pytest.mark.parametrize("query", [
    "how does the billing retry work", "When did Caroline go to the support group?", "may I ask about the deploy",
    "the monday morning slowness",
])
def test_a_query_without_time_words_names_no_window(query: str):
    assert window(query, NOW, timezone.utc) is None


def test_the_window_follows_the_local_calendar_day_not_utc():
    amsterdam = timezone(timedelta(hours=1))
    sunday_late_in_utc = datetime(2026, 11, 22, 23, 30, tzinfo=timezone.utc)  # Monday 00:30 in Amsterdam
    named = window("what did we do today", sunday_late_in_utc, amsterdam)
    assert named is not None and named.start == datetime(2026, 11, 23, tzinfo=amsterdam)


@pytest.mark.parametrize("query, vague", [
    ("what did we work on", True), ("what am I working on right now", True), ("what happened yesterday?", True),
    ("what did we decide about the kafka consumer last week", False), ("postgres", False),
    ("What did Caroline do yesterday?", False), ("", False), ("where did we leave off", True),
    ("what did we decide this week", True), ("recap of yesterday", True),
    ("what did we do 2 days ago", True), ("what did we do two days ago", True),
    ("what happened in the last two weeks", True), ("what are we in the middle of", True),
    ("the middle of the ledger migration", False),
])
def test_a_query_is_vague_when_it_names_no_subject(query: str, vague: bool):
    assert is_vague(query) is vague


def test_a_vague_question_inside_a_window_returns_the_window_newest_first(example_root: Path):
    s = searcher(example_root)
    window = [h for h in s.search(SearchRequest(days_back=5, now=NOW)) if h.memory.collection != "books"]
    assert len(window) >= 2, "the example vault has memories in the last five days"
    hits = s.search(SearchRequest(query="what did we work on", days_back=5, now=NOW))
    assert [h.memory.id for h in hits] == [h.memory.id for h in window]  # activity: reference documents left out
    assert created(hits) == sorted(created(hits), reverse=True) and all(h.channel == "timeline" for h in hits)
    assert all(c >= NOW - timedelta(days=5) for c in created(hits))
    s.index.close()


def test_time_words_alone_set_the_window_of_a_vague_question(example_root: Path):
    s = searcher(example_root)
    hits = s.search(SearchRequest(query="what did we do in the last 4 days?", now=NOW))
    assert hits and all(c >= NOW - timedelta(days=4) for c in created(hits))
    assert created(hits) == sorted(created(hits), reverse=True)
    s.index.close()


@pytest.mark.parametrize("query", ["what am I working on right now", "what was I in the middle of?"])
def test_right_now_after_a_quiet_spell_still_answers_with_the_newest_memories(example_root: Path, query: str):
    s = searcher(example_root)
    later = NOW + timedelta(days=60)
    hits = s.search(SearchRequest(query=query, now=later, limit=3))

    def moment(m) -> datetime:  # created_at, else the file's mtime
        return m.created_at or datetime.fromtimestamp(s.index.entry(m.path).mtime_ns / 1e9, tz=timezone.utc)
    newest = sorted((m for m in s.index.all_memories() if m.collection != "books"), key=moment, reverse=True)[:3]
    assert [h.memory.id for h in hits] == [m.id for m in newest]
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


def test_a_vague_question_may_name_the_kind_of_memory_it_wants():
    assert vague_types("what did we decide this week") == ("decision",)
    assert vague_types("any lessons learned lately?") == ("learning",)
    assert vague_types("what did we work on") == ()


def test_a_topic_question_with_a_time_word_prefers_what_was_written_in_that_window(tmp_path: Path):
    from tests.conftest import write
    yesterday = (NOW - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    long_ago = (NOW - timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(tmp_path, "patterns/old.md", f"---\nid: m-00000001\ntype: learning\ntitle: Redis failover dropped lock keys\n"
                                        f"created_at: {long_ago}\n---\nA Redis failover dropped the import lock keys.\n")
    write(tmp_path, "history/new.md", f"---\nid: m-00000002\ntype: learning\ntitle: Redis evicted queued jobs\n"
                                       f"created_at: {yesterday}\n---\nRedis evicted the job queue keys under memory pressure.\n")
    s = searcher(tmp_path)
    plain = [h.memory.id for h in s.search(SearchRequest(query="the redis keys problem", now=NOW))]
    timed = [h.memory.id for h in s.search(SearchRequest(query="the redis keys problem from yesterday", now=NOW))]
    assert set(plain) == set(timed) == {"m-00000001", "m-00000002"}, "a time word boosts, it never filters"
    assert timed[0] == "m-00000002"
    s.index.close()


def test_a_topic_question_naming_a_past_month_prefers_what_was_written_in_that_month(tmp_path: Path):
    from tests.conftest import write
    for n, when in enumerate(("2022-01-21T14:00:00Z", "2026-01-21T14:00:00Z")):
        write(tmp_path, f"history/s{n}.md", f"---\nid: m-0000002{n}\ntype: history\ntitle: Joanna\ncreated_at: {when}\n"
                                            f"---\nJoanna: I finally finished my screenplay.\n")
    s = searcher(tmp_path)
    hits = s.search(SearchRequest(query="what did Joanna finish in January 2022?", now=NOW))
    assert [h.memory.id for h in hits] == ["m-00000020", "m-00000021"]  # not the latest January's
    s.index.close()


def test_a_vague_question_naming_a_kind_lists_that_kind_in_its_window(tmp_path: Path):
    from tests.conftest import write
    for n, kind in enumerate(("decision", "learning", "decision")):
        when = (NOW - timedelta(hours=3 + n)).strftime("%Y-%m-%dT%H:%M:%SZ")
        write(tmp_path, f"history/h{n}.md", f"---\nid: m-0000000{n}\ntype: {kind}\ntitle: t{n}\ncreated_at: {when}\n---\nbody {n}\n")
    s = searcher(tmp_path)
    hits = s.search(SearchRequest(query="what did we decide today", now=NOW))
    assert [h.memory.id for h in hits] == ["m-00000000", "m-00000002"]
    assert [h.memory.id for h in s.search(SearchRequest(query="what did we do today", now=NOW))] == [
        "m-00000000", "m-00000001", "m-00000002"]
    s.index.close()


def test_after_and_before_date_a_memory_without_created_at_by_its_file_mtime(tmp_path: Path):
    import os

    from tests.conftest import write
    old = write(tmp_path, "history/undated.md", "---\nid: m-00000011\ntype: learning\ntitle: Undated\n---\nRedis eviction.\n")
    os.utime(old, (NOW.timestamp() - 10 * 86400, NOW.timestamp() - 10 * 86400))
    write(tmp_path, "history/dated.md", "---\nid: m-00000012\ntype: learning\ntitle: Dated\n"
                                         f"created_at: {(NOW - timedelta(days=1)).strftime('%Y-%m-%dT%H:%M:%SZ')}\n---\nRedis eviction.\n")
    s = searcher(tmp_path)
    since_week = [h.memory.id for h in s.search(SearchRequest(query="redis eviction", after=NOW - timedelta(days=7), now=NOW))]
    earlier = [h.memory.id for h in s.search(SearchRequest(query="redis eviction", before=NOW - timedelta(days=7), now=NOW))]
    assert since_week == ["m-00000012"] and earlier == ["m-00000011"]
    s.index.close()


def test_an_explicit_window_wins_over_a_topic_querys_time_words_which_then_boost_nothing(example_root: Path):
    index = open_index(example_root)
    boosted, flat = Searcher(index, SearchSettings()), Searcher(index, SearchSettings(time_match_boost=0.0))
    query = "fx postings duplicate investigation from yesterday"
    try:
        def finals(s: Searcher, **window) -> dict[str, float]:
            return {h.memory.id: h.final for h in s.search(SearchRequest(query=query, now=NOW, include_superseded=True,
                                                                        **window))}
        yesterday = window(query, NOW)
        dated = {m.id for m in index.all_memories() if yesterday.holds(m.created_at)}
        assert dated & set(finals(boosted)), "a hit written yesterday, or this test proves nothing"
        assert finals(boosted) != finals(flat)  # without a window of its own, the query's words boost
        assert finals(boosted, days_back=30) == finals(flat, days_back=30)  # with one, they do not
    finally:
        index.close()
