"""A tool's output schema is its operation's result as a model reads it (tools/outputs.py): the result's fields in
its order with its descriptions, vault text quoted, memory lists as compact views; nothing is restated by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp import Client
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from mcp_server.tools import mcp_tools
from mcp_server.tools.table import BY_NAME, TOOLS
from mcp_server.views.outward import HitOut
from mcp_server.views.results import Insights, ReviewItem
from mcp_server.views.view import MemoryView

pytestmark = pytest.mark.anyio


def test_a_result_fields_description_is_what_its_tool_publishes():
    published = BY_NAME["get_review_queue"].out.model_json_schema()["$defs"]["ReviewItemOut"]["properties"]
    assert published["action"]["description"] == ReviewItem.model_fields["action"].description
    insights = BY_NAME["get_context_insights"].out.model_json_schema()["properties"]
    assert insights["review"]["description"] == Insights.model_fields["review"].description
    memory = BY_NAME["read_memory"].out.model_json_schema()["properties"]
    assert memory["content"]["description"] == MemoryView.model_fields["content"].description


def test_every_tool_shows_its_results_fields_in_order_after_a_note_when_it_has_one():
    for tool in TOOLS:
        result = tool.op.result
        fields = list(tool.out.model_fields)
        if tool.wrap:
            assert fields == [tool.wrap], tool.name
            continue
        assert [f for f in fields if f != "note"] == list(result.model_fields), tool.name
        for name in tool.lists:
            assert tool.out.model_fields[name].annotation == list[HitOut], tool.name


def test_vault_text_is_quoted_for_the_model_and_left_as_it_is_elsewhere():
    item = ReviewItem(kind="stale", ids=["m-1"], reason="«cites» a.py", action="memdir verify m-1", key="k",
                      source="project")
    shown = BY_NAME["get_review_queue"].out.model_validate({"items": [item.model_dump()]}).model_dump(mode="json")
    assert shown["items"][0]["reason"] == "«‹cites› a.py»"
    assert item.model_dump(mode="json")["reason"] == "«cites» a.py"  # the CLI's --json and the server's wire


@pytest.fixture
def service(hashing_example: Path):
    app = App(hashing_example)
    yield MemoryService(app)
    app.close()


async def test_a_search_bounded_only_by_before_answers_with_its_open_window(service: MemoryService):
    """The window's start is null then: the hand-written output schema typed it a string and refused the answer."""
    async with Client(mcp_tools.build(service)) as client:
        result = await client.call_tool("search_memory", {"before": "2030-01-01", "limit": 2})
    assert not result.is_error, result.content
    window = result.structured_content["window"]
    assert window["source"] == "after/before" and window["start"] is None and window["end"].startswith("2030-01-01")
