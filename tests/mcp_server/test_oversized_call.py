"""A tool call too large for the vault server's MCP endpoint (a model pasting a 5 MB log into add_to_memory_bank) is
answered as that tool's error, saying what the limit is; it is not "the server could not be reached or started",
and the call is not sent a second time."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server.tools import upstream as upstream_side

from .processes import start_server, stop_all

pytestmark = pytest.mark.slow


@pytest.fixture
def server(hashing_example: Path):
    process = start_server(hashing_example)
    yield hashing_example
    stop_all(hashing_example, process)


def test_a_tool_call_over_the_endpoints_body_limit_is_a_tool_error_naming_the_limit(server, monkeypatch):
    upstream = upstream_side.Upstream(server)
    sent = []
    request = upstream._request
    monkeypatch.setattr(upstream, "_request", lambda *a, **k: sent.append(a[1]) or request(*a, **k))
    try:
        answer = upstream.call("tools/call", {"name": "add_to_memory_bank", "arguments": {"content": "x" * 5_000_000}})
        after = upstream.call("tools/call", {"name": "get_memory_stats", "arguments": {}})
    finally:
        upstream.close()
    assert answer["result"]["isError"] is True
    text = answer["result"]["content"][0]["text"]
    assert text.startswith("add_to_memory_bank: the call is 5,000,") and "more than the memdir server takes" in text
    assert "ingest_document" in text
    assert "could not be reached" not in text
    assert sent.count("POST") == 4  # initialize, initialized, the call once, the next call: no reconnect, no resend
    assert not after["result"].get("isError")
