"""A per-type field set through a tool write must fit its type; nothing is written when it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService

from ..conftest import memory_text, write
from mcp_server.service import operations as ops

pytestmark = pytest.mark.anyio


@pytest.fixture
def service(hashing_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_USER_VAULT", str(tmp_path / "user-vault"))
    write(hashing_root, "memory_bank/uv.md", memory_text("m-7e0a0001", "Use uv", "Use uv for Python projects.",
                                                         collection="memory_bank", type="decision"))
    write(hashing_root, "memory_bank/tabs.md", memory_text("m-7e0a0002", "Tabs", "Dana likes tabs.",
                                                           collection="memory_bank", type="preference"))
    app = App(hashing_root)
    yield MemoryService(app)
    app.close()


@pytest.mark.parametrize("memory_id, fields, reason", [
    ("m-7e0a0001", {"decided_on": "not a date"}, "decision field decided_on: 'not a date' is not a date"),
    ("m-7e0a0002", {"weight": 7}, "preference field weight: 7 is not a number from 0 to 1"),
    ("m-7e0a0002", {"weight": "high"}, "preference field weight"),
    ("m-7e0a0001", {"type": "plan", "progress": "almost"}, "plan field progress"),
    ("m-7e0a0002", {"privacy": "private", "weight": 2}, "preference field weight"),  # the move to the user vault
])
async def test_update_memory_refuses_a_per_type_field_that_does_not_fit_and_writes_nothing(
        service, hashing_root, memory_id, fields, reason):
    before = {p: p.read_text() for p in hashing_root.rglob("*.md")}
    async with Client(tools.build(service)) as client:
        result = await client.call_tool("update_memory", {"id": memory_id, "fields": fields})
    assert result.is_error and reason in result.content[0].text
    assert {p: p.read_text() for p in hashing_root.rglob("*.md")} == before


def test_fitting_per_type_fields_are_written(service):
    service.update(ops.Update(memory_id="m-7e0a0001", fields={"decided_on": "2026-11-20"}))
    service.update(ops.Update(memory_id="m-7e0a0002", fields={"weight": 0.8}))
    assert service.find("m-7e0a0002").frontmatter["weight"] == 0.8
