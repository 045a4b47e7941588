"""A write a client retries is applied once: the retry carries the key of the first try and gets its result; a call
the server refuses unread for its size is not retried at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server import client
from mcp_server.tools import upstream as upstream_side
from vault import Vault

from .processes import start_server, stop_all

pytestmark = pytest.mark.slow


@pytest.fixture
def server(hashing_example: Path):
    process = start_server(hashing_example)
    yield hashing_example
    stop_all(hashing_example, process)


def on_disk(root: Path, memory_id: str):
    return next(m for m in Vault(root).scan().memories if m.id == memory_id)


def test_an_add_retried_with_its_key_is_stored_once_and_answers_as_the_first_try(server):
    key = client.new_key()
    first = client.call(server, "add", {"content": "Retries of celery tasks need idempotent handlers."}, key=key)
    again = client.call(server, "add", {"content": "Retries of celery tasks need idempotent handlers."}, key=key)
    assert again == first and first["status"] == "created"
    assert "restated" not in on_disk(server, first["memory"]["id"]).frontmatter  # not counted as said twice


def test_a_score_retried_with_its_key_counts_once(server):
    memory_id = client.call(server, "add", {"content": "Pin the uv version in CI."})["memory"]["id"]
    key = client.new_key()
    for _ in range(3):
        client.call(server, "score", {"memory_scores": {memory_id: "worked"}}, key=key)
    client.call(server, "score", {"memory_scores": {memory_id: "worked"}})  # a new call: counted
    assert on_disk(server, memory_id).uses == 2


def test_the_mcp_proxy_retries_a_call_whose_answer_was_lost_with_the_same_key(server, monkeypatch):
    upstream = upstream_side.Upstream(server)
    real = upstream_side._read_answer
    lost = []

    def answer_lost_once(response, wanted):
        answer = real(response, wanted)
        if wanted and not lost:  # the server applied the add; its answer never reached the proxy (a timeout)
            lost.append(answer)
            response.close()
            raise TimeoutError("timed out")
        return answer

    monkeypatch.setattr(upstream_side, "_read_answer", answer_lost_once)
    try:
        answer = upstream.call("tools/call", {"name": "add_to_memory_bank",
                                              "arguments": {"content": "The staging database is reset nightly."}})
    finally:
        upstream.close()
    assert lost and "error" not in answer and not answer["result"].get("isError")
    added = answer["result"]["structuredContent"]
    assert added["status"] == "created"
    assert "restated" not in on_disk(server, added["memory"]["id"]).frontmatter


# A call too large for the vault server's MCP endpoint (a model pasting a 5 MB log into add_to_memory_bank) is answered
# as that tool's error, saying what to do; it is not "the server could not be reached or started", nor sent again.
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
