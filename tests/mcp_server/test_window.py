"""What a time window did to an answer is said in the answer: its source, whether it filtered or
boosted, and when the query's own time words were overridden or named an empty window."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from indexer.search import SearchRequest, window_used
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from mcp_server.service import operations as ops

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def service(hashing_example: Path):
    app = App(hashing_example)
    yield MemoryService(app)
    app.close()


def test_a_vague_question_is_filtered_by_the_window_its_words_name():
    used = window_used(SearchRequest(query="what did we do yesterday"), NOW)
    assert used is not None and (used.source, used.use, used.words) == ("query", "filter", "yesterday")
    assert used.end - used.start == timedelta(days=1)


def test_a_topic_question_is_only_boosted_by_its_time_words():
    used = window_used(SearchRequest(query="the celery retry fix from last week"), NOW)
    assert used is not None and (used.source, used.use) == ("query", "boost")


def test_an_explicit_window_wins_over_the_querys_time_words_and_says_so():
    used = window_used(SearchRequest(query="what did we do yesterday", days_back=10), NOW)
    assert used is not None and used.source == "days_back" and "'yesterday'" in used.note
    assert used.start == NOW - timedelta(days=10) and used.end == NOW
    dated = window_used(SearchRequest(query="postgres", after=NOW - timedelta(days=3)), NOW)
    assert dated is not None and dated.source == "after/before" and dated.end is None and not dated.note


def test_a_query_without_time_words_or_window_reports_none():
    assert window_used(SearchRequest(query="advisory locks"), NOW) is None
    assert window_used(SearchRequest(memory_id="m-8e2c4b07", days_back=3), NOW) is None


def test_search_memory_says_when_the_named_window_was_empty_and_older_memories_answer(service: MemoryService):
    # The example vault's newest shared memories are days old: "right now" names an empty window.
    answer = service.search(ops.Search(query="what am I working on right now"))
    assert answer.results and answer.window and answer.window["words"] == "right now"
    assert answer.window["note"].startswith("nothing was written in that window")


def test_a_vague_question_lists_memories_not_reference_documents(service: MemoryService):
    listed = service.search(ops.Search(query="what did we work on", limit=50)).results
    assert listed and all(hit.collection != "books" for hit in listed)
    books = service.search(ops.Search(query="what did we work on", collections=["books"], limit=50)).results
    assert books and all(hit.collection == "books" for hit in books)


def test_a_timeline_shows_no_relevance_number_where_a_ranked_answer_does(hashing_example: Path):
    """A timeline is ordered by time: its hits carry relevance 0, which must not read as "irrelevant"."""
    from click.testing import CliRunner

    from mcp_server.cli.commands import cli
    from mcp_server.views.outward import hit as outward_hit

    app = App(hashing_example)
    try:
        service = MemoryService(app)
        listed = service.search(ops.Search(query="what did we work on")).results
        ranked = service.search(ops.Search(query="deploy")).results
    finally:
        app.close()
    assert listed and {h.channel for h in listed} == {"timeline"}
    assert all(outward_hit(h).relevance is None for h in listed)
    assert all(outward_hit(h).relevance is not None for h in ranked)
    shown = CliRunner().invoke(cli, ["search", "what did we work on", "--vault", str(hashing_example)]).output
    assert "listed by time" in shown and "relevance 0.00" not in shown


@pytest.mark.parametrize("after, before", [("2026-11-20", "2026-11-01"), ("2026-11-01", "2026-11-01")])
def test_an_after_not_earlier_than_before_is_an_error_naming_both(service: MemoryService, after: str, before: str):
    from vault import ValidationError

    with pytest.raises(ValidationError, match=f"after \\({after}\\) is not earlier than before \\({before}\\)"):
        service.search(ops.Search(query="deploy", after=after, before=before))
    assert service.search(ops.Search(query="deploy", after=before if after > before else "2026-10-01", before="2026-11-21"))


def test_the_cli_says_so_too(hashing_example: Path):
    from click.testing import CliRunner

    from mcp_server.cli.commands import cli

    result = CliRunner().invoke(cli, ["search", "deploy", "--after", "2026-11-20", "--before", "2026-11-01",
                                      "--vault", str(hashing_example)])
    assert result.exit_code != 0 and "is not earlier than before" in result.output
