"""One outward model and one vocabulary: hook lines, tool results and CLI output call a memory the same."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from indexer.search import SearchRequest
from mcp_server import client
from mcp_server.clients import context
from mcp_server.views import outward, render
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.cli.commands import cli
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service.memory_service import MemoryService
from mcp_server.views.view import MemoryView, view_of
from vault.model import BANK_DEFAULT, Memory

from ..conftest import memory_text, write
from .processes import start_server, stop_all
from mcp_server.service import operations as ops

NOW = datetime(2026, 11, 25, tzinfo=timezone.utc)


def view(**fields) -> MemoryView:
    memory = Memory(id="m-1", path="notes/a.md", collection=fields.pop("collection", "patterns"), type="fact",
                    title="A «title»", body="Some » text", created_at=datetime(2026, 11, 20, tzinfo=timezone.utc),
                    **fields)
    return view_of(memory, NOW)


def test_a_real_zero_importance_stays_zero_in_the_hook_the_cli_and_the_tools():
    bank = view(collection="memory_bank", importance=0.0, confidence=0.0)
    assert bank.importance == bank.confidence == 0.0
    assert "imp:0.0" in context.memory_line(bank.model_copy(update={"relevance": 0.9}), 200)
    assert "imp:0.0" in render.stats_label(bank) and "conf:0.0" in render.stats_label(bank)
    assert outward.hit(bank).track == "uncertain: importance 0.0"


def test_a_bank_fact_without_weights_reads_as_stated_at_the_default():
    bank = view(collection="memory_bank")
    assert bank.importance == bank.confidence == BANK_DEFAULT
    assert outward.hit(bank).track == f"stated: importance {BANK_DEFAULT:.1f}"


def test_only_a_memory_bank_fact_carries_weights_and_only_a_hit_carries_relevance():
    shape = view().as_json()
    assert "importance" not in shape and "relevance" not in shape and "fields" not in shape
    assert list(shape)[:3] == ["id", "collection", "type"]
    assert MemoryView.model_validate(shape).as_json() == shape  # the JSON a server sends reads back unchanged


def test_the_hook_and_the_tools_use_the_same_word_for_a_track_record():
    for uses, word in ((0, "unproven"), (1, "emerging"), (3, "established"), (10, "proven")):
        memory = view(uses=uses).model_copy(update={"relevance": 0.6})
        assert f", {word}, " in context.memory_line(memory, 200)
        assert outward.hit(memory).track.startswith(f"{word}: ")


def test_a_hit_quotes_title_and_text_so_neither_can_close_its_quote():
    hit = outward.hit(view().model_copy(update={"relevance": 0.42, "successor": "m-2", "status": "archived"}))
    assert hit.title == "«A ‹title›»" and hit.text == "«Some › text»"
    line = outward.hit_line(1, hit)
    assert line.startswith("1. [id:m-1] (patterns, fact, 5d, relevance 0.42, unproven: 0 uses)")
    assert line.endswith("[archived] (superseded by [id:m-2])")


def test_a_search_hit_carries_the_memory_and_why_it_matched(service):
    hit = service.hits(SearchRequest(query="celery retries idempotent", limit=1, now=NOW))[0]
    shown = view_of(hit.memory, NOW, hit=hit)
    assert shown.id == hit.memory.id and shown.relevance == round(hit.shown, 4)  # what the hit shows
    assert 0.0 <= shown.relevance <= 1.0 and shown.channel in ("vector", "keyword", "both")
    assert shown.final_score is not None and shown.age


BANK_ZERO = memory_text("m-00000b00", "Flaky clock", "The CI clock drifts.", collection="memory_bank", type="fact",
                        extra="importance: 0.0\nconfidence: 0.0\n")


def test_a_memory_bank_fact_scored_zero_reads_zero_in_show_search_and_the_tools(hashing_root: Path):
    write(hashing_root, "memory_bank/clock.md", BANK_ZERO)
    shown = CliRunner().invoke(cli, ["show", "m-00000b00", "--json", "--vault", str(hashing_root)])
    assert json.loads(shown.output)["importance"] == 0.0 and json.loads(shown.output)["confidence"] == 0.0
    text = CliRunner().invoke(cli, ["show", "m-00000b00", "--vault", str(hashing_root)]).output
    assert "imp:0.0, conf:0.0" in text
    found = CliRunner().invoke(cli, ["search", "CI clock drifts", "--vault", str(hashing_root)]).output
    assert "imp:0.0, conf:0.0" in found


@pytest.mark.anyio
async def test_a_memory_bank_fact_scored_zero_reads_uncertain_to_the_model(hashing_root: Path):
    write(hashing_root, "memory_bank/clock.md", BANK_ZERO)
    app = App(hashing_root)
    try:
        async with Client(tools.build(MemoryService(app))) as client:
            result = await client.call_tool("search_memory", {"id": "m-00000b00"})
            read = await client.call_tool("read_memory", {"id": "m-00000b00"})
    finally:
        app.close()
    assert result.structured_content["results"][0]["track"] == "uncertain: importance 0.0"
    assert read.structured_content["importance"] == 0.0 and "imp:0.0, conf:0.0" in read.content[0].text


def test_a_result_read_back_from_the_json_the_server_sends_is_the_same_model_and_every_renderer_reads_it(service):
    results = service.search(ops.Search(query="deploy to fly", limit=3)).results
    read_back = [MemoryView.model_validate(view.as_json()) for view in results]
    assert read_back == results  # the keys a memory did not set stay unset on the far side too
    assert render.search_results(read_back).count("[id:") == 3
    assert all(outward.hit(v).id == v.id for v in read_back)


def test_known_context_quotes_the_section_of_a_long_document_that_matched_as_search_memory_does(service):
    query = "how do we lock statement imports"
    runbook = next(h for h in service.hits(SearchRequest(query=query, limit=10)) if h.memory.id == "m-d2e9f4a0")
    assert runbook.heading.endswith("Locking") and runbook.excerpt
    block = HookHandler(service).prompt({"session_id": "s-1", "prompt": query})["additionalContext"]
    line = next(line for line in block.splitlines() if "[id:m-d2e9f4a0]" in line)
    assert line.startswith("• «Imports and ledger writes take a transaction-level advisory lock")  # not the book's opening
    assert f" {outward.relevance_label(runbook.shown)}, reference, shared)" in line  # the words for its shown number


def memdir(root: Path, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "mcp_server", *args, "--vault", str(root)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_show_and_list_read_the_same_through_the_running_server_as_without_one(hashing_example: Path):
    config = hashing_example / "memdir.toml"
    config.write_text(config.read_text() + '[lifecycle]\nevery = "off"\n')  # the vault stays as it is meanwhile
    alone = [memdir(hashing_example, "show", "m-0c4fa8d2"), memdir(hashing_example, "list"),
             json.loads(memdir(hashing_example, "list", "--json"))]
    process = start_server(hashing_example)
    try:
        served = [memdir(hashing_example, "show", "m-0c4fa8d2"), memdir(hashing_example, "list"),
                  json.loads(memdir(hashing_example, "list", "--json"))]
        assert client.serving(hashing_example) is not None  # the second round went through the server
    finally:
        stop_all(hashing_example, process)
    assert served == alone
