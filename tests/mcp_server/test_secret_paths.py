"""Secrets through the outward faces: MCP tools refuse them (with an explicit override), the Stop hook redacts them."""

from __future__ import annotations

import pytest

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service import operations as ops

TOKEN = "sk-" + "proj-Abc123Def456Ghi789Jkl012Mno345Pqr"

pytestmark = pytest.mark.anyio


async def test_a_tool_refuses_a_credential_names_it_masked_and_accepts_allow_secret(service):
    async with Client(tools.build(service)) as client:
        refused = await client.call_tool("add_to_memory_bank", {"content": f"The OpenAI key is {TOKEN}"})
        recorded = await client.call_tool("record_response", {"key_takeaway": f"worked with {TOKEN}"})
        allowed = await client.call_tool("add_to_memory_bank", {"content": f"The OpenAI key is {TOKEN}",
                                                                "allow_secret": True})
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    message = refused.content[0].text
    assert refused.is_error and recorded.is_error
    assert "content line 1: OpenAI API key (sk-pr…qr)" in message and TOKEN not in message
    assert not allowed.is_error and TOKEN in allowed.structured_content["memory"]["content"]
    for name in ("add_to_memory_bank", "update_memory", "append_memory", "record_response", "merge_memories"):
        described = listed[name].input_schema["properties"]["allow_secret"]["description"]
        assert "explicitly asked" in described


def test_the_stop_hook_stores_the_exchange_with_the_secret_redacted(service):
    hooks = HookHandler(service)
    hooks.prompt({"session_id": "s-1", "prompt": f"my key is {TOKEN}, why does the client 401?"})
    answer = hooks.stop({"session_id": "s-1", "last_assistant_message": "Rotate it: postgres://app:hunter22@db/app too."})
    stored = service.read(ops.Read(ref=answer["stored"]))
    assert "[REDACTED:openai-key]" in stored.content and "[REDACTED:connection-password]" in stored.content
    assert TOKEN not in stored.content and "hunter22" not in stored.content
    assert TOKEN not in (service.app.root / stored.path).read_text()
    assert all(TOKEN not in p.read_text() for p in (service.app.root / ".memdir").rglob("*.json"))


@pytest.mark.parametrize("prompt", ["aws {key} / {secret}", "key ID {key}, secret {secret}"])
def test_a_captured_aws_key_pair_loses_both_halves_in_the_file_the_session_and_the_index(service, prompt: str):
    """Both halves of the pair, in every place a capture reaches: working/*.md, .memdir/sessions/*.json and
    the manifest (its SQLite WAL included), which holds what the file said."""
    key, secret = "AKIA" + "QWERTYUI0PASDF12", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "3x4mPl3K9z"
    hooks = HookHandler(service)
    hooks.prompt({"session_id": "s-aws", "prompt": "deploy fails with " + prompt.format(key=key, secret=secret)})
    answer = hooks.stop({"session_id": "s-aws", "last_assistant_message": "Rotate that key pair first."})
    stored = service.read(ops.Read(ref=answer["stored"]))
    assert "[REDACTED:aws-secret-key]" in stored.content
    written = [p for p in service.app.root.rglob("*") if p.is_file() and ".trash" not in p.parts]
    assert [str(p) for p in written if secret.encode() in p.read_bytes() or key.encode() in p.read_bytes()] == []
