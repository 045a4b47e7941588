"""`memdir mcp` answers a hostile line with a JSON-RPC error and goes on serving the session."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from mcp_server.tools.stdio import PARSE_ERROR, Proxy


@pytest.mark.parametrize("nested", [b"[" * 1000 + b"]" * 1000, b'{"a":' * 1000 + b"1" + b"}" * 1000,
                                    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 5000])
def test_a_line_nested_a_thousand_deep_gets_a_parse_error_and_the_next_request_an_answer(nested: bytes, tmp_path: Path):
    out = io.BytesIO()
    proxy = Proxy(tmp_path, upstream=None, out=out)
    proxy.handle(nested)
    proxy.handle(b'{"jsonrpc":"2.0","id":7,"method":"ping"}')
    refused, answered = [json.loads(line) for line in out.getvalue().splitlines()]
    assert refused["error"]["code"] == PARSE_ERROR and refused["id"] is None
    assert answered == {"jsonrpc": "2.0", "id": 7, "result": {}}
