"""get_context_insights reminds the model, now and then, of what waits in the review queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.service.memory_service import REVIEW_REMINDER_EVERY, MemoryService

from ..conftest import memory_text, write

pytestmark = pytest.mark.anyio


def service_for(root: Path) -> MemoryService:
    return MemoryService(App(root))


async def test_the_first_call_of_a_session_and_every_tenth_after_it_name_the_waiting_items(hashing_root: Path):
    write(hashing_root, "working/old.md", memory_text("m-01d00001", "Old exchange", "Ledger locks were discussed.",
                                                      collection="working"))  # the next gc removes it
    service = service_for(hashing_root)
    try:
        async with Client(tools.build(service)) as client:
            answers = [await client.call_tool("get_context_insights", {"query": "ledger locks"})
                       for _ in range(REVIEW_REMINDER_EVERY + 1)]
    finally:
        service.app.close()
    reminded = [i for i, a in enumerate(answers) if a.structured_content.get("review")]
    assert reminded == [0, REVIEW_REMINDER_EVERY]
    assert answers[0].structured_content["review"] == {"remove": 1}
    assert "The review queue waits for the user: 1 remove" in answers[0].content[0].text
    assert "review queue" not in answers[1].content[0].text


async def test_an_empty_queue_is_not_mentioned(hashing_root: Path):
    write(hashing_root, "patterns/fine.md", memory_text("m-f1e00001", "Fine", "Ledger locks are advisory.",
                                                        collection="patterns"))
    service = service_for(hashing_root)
    try:
        async with Client(tools.build(service)) as client:
            answer = await client.call_tool("get_context_insights", {"query": "ledger locks"})
    finally:
        service.app.close()
    assert "review" not in answer.structured_content and "review queue" not in answer.content[0].text
