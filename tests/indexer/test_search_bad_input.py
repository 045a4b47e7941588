"""Whatever a person or a hook pastes into a search gets a ranked answer or a clearly empty one, never an error."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
LOG_LINE = "2026-11-21T10:05:33Z ERROR worker-3 celery.app.trace: Task import_statement[8f2c] raised ImportLockTimeout\n"


@pytest.fixture
def searcher(hashing_root: Path):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Import lock timeout",
                                                    "ImportLockTimeout means another worker holds the statement import lock"))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "Espresso", "Grind finer for espresso"))
    index = open_index(hashing_root)
    yield Searcher(index, SearchSettings())
    index.close()


def test_ten_kilobytes_of_pasted_log_are_asked_by_their_beginning(searcher):
    log = LOG_LINE * (10_000 // len(LOG_LINE) + 1)
    assert len(log) > 10_000
    hits = searcher.search(SearchRequest(query=log, now=NOW))
    assert hits and hits[0].memory.id == "m-0000000a"


@pytest.mark.parametrize("query", ["the of and to a in", "¿dónde está el bloqueo de importación?", "日本語の質問です",
                                   "def f(x):\n    return x ** 2  # {}[]()", "!!!???...", "ImportLockTimeout"])
def test_stop_words_code_symbols_and_other_languages_get_a_ranked_or_empty_answer(searcher, query):
    hits = searcher.search(SearchRequest(query=query, now=NOW))
    assert all(0.0 <= h.relevance <= 1.0 for h in hits)
    assert [h.final for h in hits] == sorted((h.final for h in hits), reverse=True)


def test_an_exact_token_is_found_even_among_unrelated_words(searcher):
    hits = searcher.search(SearchRequest(query="ImportLockTimeout", now=NOW))
    assert hits[0].memory.id == "m-0000000a"


def test_an_empty_query_without_a_window_gets_an_empty_answer(searcher):
    for empty in ("", "   ", None):
        assert searcher.search(SearchRequest(query=empty, now=NOW)) == []


def test_an_empty_query_with_a_window_gets_that_windows_timeline(searcher):
    assert {h.channel for h in searcher.search(SearchRequest(query="", days_back=3650, now=NOW))} == {"timeline"}


@pytest.mark.parametrize("days_back", [1e6, 1e300, float("inf")])
def test_a_days_back_past_the_first_calendar_day_reaches_back_to_it(searcher, days_back):
    # A model asking for "all of it" with days_back 1e6 (before year 1) or a huge number failed with an OverflowError.
    for query in ("import lock", None):
        hits = searcher.search(SearchRequest(query=query, days_back=days_back, now=NOW))
        assert {h.memory.id for h in hits} >= {"m-0000000a"}
