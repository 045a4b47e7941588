"""A memdir tool call on a server that hangs fails within seconds, saying so, instead of waiting out the start timeout."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from mcp_server import client

from .processes import hung_server, stdio

pytestmark = pytest.mark.anyio


async def test_a_tool_call_on_a_hung_server_fails_fast_and_names_the_hung_process(hashing_example: Path):
    with hung_server():
        async with stdio(hashing_example) as session:
            started = time.monotonic()
            with anyio.fail_after(40):  # before: about 125 s, then "did not start within 60 s"
                called = await session.call_tool("get_memory_stats", {})
            took = time.monotonic() - started
    text = called.content[0].text
    assert called.is_error and "did not answer" in text and f"kill {os.getpid()}" in text, text
    assert "did not start" not in text
    assert took < 2 * client.HEALTH_SECONDS + 5, took  # the warm-up's check and the call's own, at most
