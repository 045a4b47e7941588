"""The present tense ("right now", "currently") asks when a question about a topic is about, not when its answer
was written: it boosts no memory for being new, while a vague question ("what am I working on right now") still
gets the last few days' timeline, and a real time word ("today") still boosts (bench/results/search.md, issue 26,
session 8)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from indexer.search import SearchRequest, Searcher, window_used
from indexer.settings import SearchSettings
from indexer.timewords import window
from tests.conftest import write
from tests.indexer.helpers import open_index

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("query", ["how do I see what the workers are running right now",
                                   "which bot proposes library upgrades these days",
                                   "what is the import job currently doing"])
def test_the_present_tense_names_no_window_for_a_topic_question(query: str):
    assert window(query, NOW, present=False) is None
    assert window(query, NOW) is not None  # a vague question's timeline still reads it
    assert window_used(SearchRequest(query=query, now=NOW)) is None


def test_a_vague_question_in_the_present_tense_still_lists_the_last_days():
    used = window_used(SearchRequest(query="what am I working on right now", now=NOW))
    assert used is not None and used.use == "filter" and used.start == NOW - timedelta(days=3)
    assert window("where did we leave off on the importer", NOW, present=False) is not None


def _two_notes(root: Path) -> None:
    """An older note that answers better, and a note written this morning that answers slightly worse."""
    this_morning = (NOW - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    long_ago = (NOW - timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(root, "patterns/old.md", f"---\nid: m-00000001\ntype: learning\ntitle: Celery workers active tasks\n"
                                   f"created_at: {long_ago}\n---\ncelery inspect active lists the tasks the workers run.\n")
    write(root, "history/new.md", f"---\nid: m-00000002\ntype: observation\ntitle: Celery workers active\n"
                                  f"created_at: {this_morning}\n---\nThe celery workers restarted after the deploy.\n")


def test_right_now_does_not_put_a_note_first_for_being_written_today(tmp_path: Path):
    _two_notes(tmp_path)
    searcher = Searcher(open_index(tmp_path), SearchSettings())
    try:
        plain = [h.memory.id for h in searcher.search(SearchRequest(query="celery workers active tasks", now=NOW))]
        present = [h.memory.id for h in searcher.search(
            SearchRequest(query="celery workers active tasks right now", now=NOW))]
        today = [h.memory.id for h in searcher.search(
            SearchRequest(query="celery workers active tasks today", now=NOW))]
    finally:
        searcher.index.close()
    assert plain[0] == "m-00000001"
    assert present == plain, "the present tense reorders nothing"
    assert today[0] == "m-00000002", "a real time word still lifts what was written in its window"
