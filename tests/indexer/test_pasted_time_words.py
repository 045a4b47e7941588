"""A long paste's time words date what was pasted, not the memory that answers: an alert "since 14:05", "I'm on call
this week", a traceback's "most recent call last" boost no note for being written this week, while a question's
own "this week" still does (bench/results/s9-book9.md)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from indexer.search import SearchRequest, Searcher, time_words_share, window_used
from indexer.settings import SearchSettings
from tests.conftest import write
from tests.indexer.helpers import open_index

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)
QUESTION = "celery workers active tasks this week"
PASTE = ("Alert from the dashboard: celery workers active tasks stuck since 14:05, queue depth climbing on every "
         "node, no sign of recovery after two restarts and the retries pile up behind them. I am the one holding "
         "the pager this week. What do we check first and who has to be told about it?")


def _two_notes(root: Path) -> None:
    """An older note that answers better, and a note written this week that answers slightly worse."""
    this_week = (NOW - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    long_ago = (NOW - timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(root, "patterns/old.md", f"---\nid: m-00000001\ntype: learning\ntitle: Celery workers active tasks\n"
                                   f"created_at: {long_ago}\n---\nWhen celery workers are stuck and the queue depth climbs, celery "
                                   f"inspect active lists the tasks they run; check it before restarts.\n")
    write(root, "history/new.md", f"---\nid: m-00000002\ntype: learning\ntitle: Celery workers active\n"
                                  f"created_at: {this_week}\n---\nThe celery workers restarted after the deploy.\n")


def test_a_long_paste_is_past_long_query_full_and_a_question_is_not():
    settings = SearchSettings()
    assert time_words_share(PASTE, settings) == 0.0
    assert time_words_share(QUESTION, settings) == 1.0


def test_a_long_paste_saying_this_week_lifts_no_note_written_this_week(tmp_path: Path):
    _two_notes(tmp_path)
    searcher = Searcher(open_index(tmp_path), SearchSettings())
    try:
        asked = [h.memory.id for h in searcher.search(SearchRequest(query=QUESTION, now=NOW))]
        pasted = searcher.search(SearchRequest(query=PASTE, now=NOW))
    finally:
        searcher.index.close()
    assert asked[0] == "m-00000002", "a question's own time word still lifts what was written in its window"
    assert pasted[0].memory.id == "m-00000001", "the note that answers the paste better stays first"
    # The time words' own part (a learning written yesterday keeps its type's recency lift, as any young memory does).
    assert all(h.explain is not None and h.explain["time_match"] == 0.0 for h in pasted), "the paste's week boosts nothing"


def test_the_window_shown_for_a_long_paste_is_none_and_a_question_keeps_its_boost():
    settings = SearchSettings()
    assert window_used(SearchRequest(query=PASTE, now=NOW), settings=settings) is None
    used = window_used(SearchRequest(query=QUESTION, now=NOW), settings=settings)
    assert used is not None and used.use == "boost" and used.words == "this week"


def test_a_paste_longer_than_a_query_is_read_is_still_a_paste_for_its_time_words(tmp_path: Path):
    """Read by its salient lines (a short query), its share was measured on those lines and its "this week" lifted a
    note written this week fully, while the window shown said none (review of session 9)."""
    log = "".join(f"2026-11-25T11:{n % 60:02d}:00Z worker-{n} celery.worker.strategy received task tasks.sync[{n:08x}]\n"
                  for n in range(40))
    paste = log + "I am the one holding the pager this week for the celery workers.\n"
    settings = SearchSettings()
    assert len(paste) > settings.max_query_chars
    this_week = (NOW - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(tmp_path, "history/new.md", f"---\nid: m-00000002\ntype: learning\ntitle: Celery workers pager\n"
                                      f"created_at: {this_week}\n---\nThe celery workers pager rota is in the wiki.\n")
    write(tmp_path, "patterns/old.md", "---\nid: m-00000001\ntype: learning\ntitle: Celery workers\n"
                                       "created_at: 2026-09-01T00:00:00Z\n---\nCelery workers stuck: inspect active.\n")
    searcher = Searcher(open_index(tmp_path), settings)
    try:
        hits = searcher.search(SearchRequest(query=paste, now=NOW))
    finally:
        searcher.index.close()
    assert hits and window_used(SearchRequest(query=paste, now=NOW), settings=settings) is None
    assert [h.explain["time_match"] for h in hits if h.explain is not None] == [0.0] * len(hits)
