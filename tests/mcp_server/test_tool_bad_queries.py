"""Issue 26's bad input through the MCP tools themselves: an empty prompt, a pasted log, stop words only, code only
and other languages each get a ranked answer or a clearly empty one from get_context_insights and search_memory,
never a tool error."""

from __future__ import annotations

import pytest

from mcp import Client
from mcp_server.tools import mcp_tools as tools

pytestmark = pytest.mark.anyio

LOG_LINE = "2026-11-21T16:30:02.114Z worker-3 INFO fx.fetch_ecb_rates retry=2 status=503 upstream=ecb.europa.eu\n"
ASKED = ["", "   ", "the of and to a", "def f(x): return x ** 2 if x else None", "¿Cómo despliego la facturación?",
         "数据库迁移怎么做", LOG_LINE * 110, "🙂" * 40]


@pytest.mark.parametrize("tool", ["get_context_insights", "search_memory"])
async def test_every_bad_query_gets_an_answer_not_a_tool_error(service, tool):
    async with Client(tools.build(service)) as client:
        for query in ASKED:
            result = await client.call_tool(tool, {"query": query})
            assert not result.is_error, (tool, query[:40], result.content)
            assert result.structured_content is not None


async def test_a_pasted_log_is_searched_by_its_salient_lines_and_not_echoed_back(service):
    log = LOG_LINE * 300 + "Traceback (most recent call last):\nImportLockTimeout: statement import lock held\n"
    assert len(log) > 30_000
    async with Client(tools.build(service)) as client:
        insights = await client.call_tool("get_context_insights", {"query": log})
        searched = await client.call_tool("search_memory", {"query": log, "limit": 3})
    assert not insights.is_error and not searched.is_error
    assert len(insights.structured_content["query"]) <= 501
    assert searched.structured_content["results"]


async def test_an_empty_question_gets_the_standing_facts_and_no_memories(service):
    async with Client(tools.build(service)) as client:
        result = await client.call_tool("get_context_insights", {"query": "  "})
    assert not result.is_error
    assert result.structured_content["memories"] == [] and result.structured_content["facts"] == []
    always = {m["id"] for m in result.structured_content["always"]}
    assert always and always == {m.id for m in service.always_inject(True)}
