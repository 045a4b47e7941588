"""Deleting a memory that others depend on says so and names them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.cli.commands import cli
from mcp_server.service.memory_service import MemoryService

from ..conftest import memory_text, write

pytestmark = pytest.mark.anyio
BASE, USER_A, USER_B, LONE = "m-de9e0001", "m-de9e0002", "m-de9e0003", "m-de9e0004"


@pytest.fixture
def vault(hashing_root: Path) -> Path:
    write(hashing_root, "patterns/locks.md", memory_text(BASE, "Advisory locks", "Imports take an advisory lock."))
    for memory_id, title in ((USER_A, "Import retries"), (USER_B, "Import batching")):
        write(hashing_root, f"patterns/{memory_id}.md", memory_text(
            memory_id, title, f"{title} rely on the lock.", extra=f"depends_on: [{BASE}]\n"))
    write(hashing_root, "patterns/lone.md", memory_text(LONE, "Lone note", "Nothing depends on this."))
    return hashing_root


async def test_the_delete_tool_names_the_memories_that_depend_on_the_deleted_one(vault):
    app = App(vault)
    try:
        async with Client(tools.build(MemoryService(app))) as client:
            result = await client.call_tool("delete_memory", {"id": BASE})
            lone = await client.call_tool("delete_memory", {"id": LONE})
    finally:
        app.close()
    assert [d["id"] for d in result.structured_content["dependants"]] == [USER_A, USER_B]
    text = result.content[0].text
    assert "2 memories depend on it" in text and f"[id:{USER_A}]" in text and "«Import batching»" in text
    assert lone.structured_content["dependants"] == [] and "depend" not in lone.content[0].text


def test_memdir_delete_says_so_too(vault):
    result = CliRunner().invoke(cli, ["delete", BASE, "--vault", str(vault)])
    assert result.exit_code == 0 and "2 memories depend on it" in result.output and USER_B in result.output
