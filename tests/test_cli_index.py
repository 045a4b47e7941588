"""reindex, search and links, driven as a user drives them, on a copy of the example vault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_reindex_reports_counts_and_time(hashing_example: Path):
    result = run("reindex", "--vault", str(hashing_example))
    assert result.exit_code == 0
    assert "indexed 36 memories" in result.output and "chunks" in result.output and " s;" in result.output


def test_reindex_embeds_with_the_vaults_int8_settings(hashing_example: Path, monkeypatch: pytest.MonkeyPatch):
    from indexer import embed
    from mcp_server.service import app

    asked: list[tuple] = []

    def recording(name: str, *args: object) -> embed.Embedder:
        asked.append(args)
        return embed.make_embedder(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(app, "make_embedder", recording)
    toml = hashing_example / "memdir.toml"
    toml.write_text(toml.read_text().replace("[search]\n", "[search]\nint8_documents = true\n", 1))
    assert run("reindex", "--vault", str(hashing_example)).exit_code == 0
    [(long_queries, _cache, documents, here)] = asked
    assert documents is True and long_queries is True, "as the server embeds: the vault's memdir.toml, not defaults"
    assert here is True, "and $MEMDIR_INT8 (the tests': always) read at the entry point"


def test_search_builds_the_index_when_missing_and_prints_json_results(hashing_example: Path):
    result = run("search", "advisory locks for ledger writes", "--json", "--limit", "3", "--vault", str(hashing_example))
    results = json.loads(result.output)["results"]
    assert result.exit_code == 0 and 1 <= len(results) <= 3
    for key in ("id", "title", "collection", "relevance", "score", "path", "channel"):
        assert key in results[0]


def test_search_filters_and_renders_readable_lines(hashing_example: Path):
    result = run("search", "ledger", "--collection", "working", "--all", "--vault", str(hashing_example))
    lines = [line for line in result.output.splitlines() if line[:1].isdigit()]
    # (--all: the example's working notes are days old and unpromoted, so search leaves them out without it)
    assert lines and all("[working]" in line and "[id:m-" in line for line in lines)


def test_a_timeline_needs_no_query_and_its_json_says_which_window_applied(hashing_example: Path):
    result = json.loads(run("search", "--days-back", "4000", "--limit", "2", "--json", "--vault", str(hashing_example)).output)
    assert [r["channel"] for r in result["results"]] == ["timeline", "timeline"]
    assert result["window"]["source"] == "days_back" and result["window"]["use"] == "filter"


def test_a_time_word_that_conflicts_with_days_back_is_overridden_and_the_answer_says_so(hashing_example: Path):
    answer = json.loads(run("search", "what did we do yesterday", "--days-back", "4000", "--json",
                            "--vault", str(hashing_example)).output)
    assert answer["window"]["source"] == "days_back"
    assert "'yesterday'" in answer["window"]["note"]
    text = run("search", "what did we do yesterday", "--days-back", "4000", "--vault", str(hashing_example)).output
    assert text.splitlines()[0].startswith("only memories written") and "wins over 'yesterday'" in text


def test_search_json_has_one_shape_whatever_the_query_says(hashing_example: Path):
    plain = json.loads(run("search", "advisory locks", "--json", "--limit", "2", "--vault", str(hashing_example)).output)
    timed = json.loads(run("search", "advisory locks from last week", "--json", "--limit", "2",
                           "--vault", str(hashing_example)).output)
    assert len(plain["results"]) == 2 and "window" not in plain
    assert timed["results"] and timed["window"]["use"] == "boost"


def test_links_shows_the_supersedes_chain_backlinks_and_ghosts(hashing_example: Path):
    v3 = json.loads(run("links", "m-8e2c4b07", "--json", "--vault", str(hashing_example)).output)
    assert [item["id"] for item in v3["supersedes_chain"]] == ["m-8e2c4b07", "m-5d3f7a18", "m-1b6e2d90"]
    assert any(e["relation"] == "supersedes" and e["id"] == "m-5d3f7a18" for e in v3["outgoing"])
    context = json.loads(run("links", "m-2f8b6d4e", "--json", "--vault", str(hashing_example)).output)
    assert "src/tidewater/ingest/parser.py" in {g["ghost"] for g in context["ghosts"]}
    text = run("links", "m-1b6e2d90", "--vault", str(hashing_example)).output
    assert "superseded by [id:m-8e2c4b07]" in text


def test_a_note_many_others_link_to_lists_fifty_backlinks_counts_the_rest_and_lists_more_when_asked(hashing_root: Path):
    """A teammate's push of notes that all link one memory (s21 wrote 2,000): the relationships tool answered every
    backlink with its title to the model, 91 KB of text and 135 KB of structured answer for 400 of them."""
    import anyio
    from mcp import Client

    from mcp_server.service.app import App
    from mcp_server.service.memory_service import MemoryService
    from mcp_server.tools import mcp_tools
    from tests.conftest import memory_text, write

    write(hashing_root, "history/hub.md", memory_text("m-0000abcd", "Hub", "the deploy runbook"))
    for i in range(120):
        write(hashing_root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Deploy note {i}", "see [[Hub]]"))
    text = run("links", "m-0000abcd", "--vault", str(hashing_root)).output
    assert text.count("[id:m-000000") == 50 and "… and 70 more not listed (`memdir links m-0000abcd --listed N`" in text
    every = json.loads(run("links", "m-0000abcd", "--listed", "500", "--json", "--vault", str(hashing_root)).output)
    assert len(every["backlinks"]) == 120 and every["unlisted"] == {}
    app = App(hashing_root)
    try:
        async def ask() -> dict:
            async with Client(mcp_tools.build(MemoryService(app))) as client:
                return (await client.call_tool("get_memory_relationships", {"id": "m-0000abcd"})).structured_content

        answer = anyio.run(ask)
    finally:
        app.close()
    assert len(answer["backlinks"]) == 50 and answer["unlisted"] == {"backlinks": 70}


def test_links_of_an_unknown_id_is_an_error(hashing_example: Path):
    result = run("links", "m-00000000", "--vault", str(hashing_example))
    assert result.exit_code == 1 and "no memory with id" in result.output
