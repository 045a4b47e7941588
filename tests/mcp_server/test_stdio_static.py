"""`memdir mcp` lists its tools at once, before the vault server is up, and leaves on SIGINT."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_server import client
from mcp_server.tools import tool_list

from .processes import stdio, stop_all

pytestmark = pytest.mark.anyio


async def test_the_static_tool_list_is_exactly_what_the_vault_server_lists():
    assert tool_list.load() == await tool_list.current(), "tools changed: run python -m mcp_server.tools.tool_list"


async def test_tools_are_listed_even_when_the_vault_server_cannot_start_and_a_call_says_why(hashing_example: Path):
    (hashing_example / "memdir.toml").write_text("[search]\nno_such_key = 1\n")  # the server refuses to start
    async with stdio(hashing_example) as client:
        listed = (await client.list_tools()).tools
        called = await client.call_tool("get_memory_stats", {})
    stop_all(hashing_example)
    assert [t.name for t in listed] == [t["name"] for t in tool_list.load()] and len(listed) == 18
    assert called.is_error and "could not be reached or started" in called.content[0].text
    assert "no_such_key: unknown key" in called.content[0].text  # the reason, not only where the log is


def test_sigint_ends_memdir_mcp_at_once_with_status_0(hashing_example: Path):
    process = subprocess.Popen([sys.executable, "-m", "mcp_server", "mcp", "--vault", str(hashing_example)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        process.stdin.write((json.dumps(hello) + "\n").encode())
        process.stdin.flush()
        assert b'"result"' in process.stdout.readline()  # it is serving
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()
        client.ensure(hashing_example)  # the proxy started a vault server while it warmed up: wait for it,
        stop_all(hashing_example)  # then stop it, so nothing outlives the test


def test_memdir_mcp_starts_on_the_standard_library_alone():
    """Claude Code waits for the tool list before a session's first request: no SDK, web stack or numpy on that path."""
    probe = ("import sys; import mcp_server.entry, mcp_server.tools.stdio; "
             "print(sorted(m for m in ('mcp', 'click', 'httpx2', 'anyio', 'numpy', 'starlette') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_memdir_mcp_answers_tools_list_before_importing_its_upstream_side():
    """The first `tools/list` waits for nothing but Python and the snapshot: http.client (with the email
    package), logging and the server client are imported on a background thread (699 ms to the first
    answer before, on a loaded machine; bench/results/clients.md, "stdio proxy start")."""
    probe = ("import sys; import mcp_server.entry, mcp_server.tools.stdio; "
             "print(sorted(m for m in ('http.client', 'email', 'logging', 'mcp_server.client', 'uuid') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
