"""The vault server's gate: a token on every request, no foreign Origin or Host (DNS rebinding)."""

from __future__ import annotations

import anyio
import pytest

from mcp_server.server.process import Guard

TOKEN = "s3cret-token"
PORT = 43210


async def reached_app(scope, receive, send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def status_of(headers: dict[str, str]) -> int:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/api/health", "headers":
             [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]}
    anyio.run(Guard(reached_app, TOKEN, lambda: PORT), scope, receive, send)
    return sent[0]["status"]


GOOD = {"Host": f"127.0.0.1:{PORT}", "Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize("headers, status", [
    (GOOD, 200),
    ({**GOOD, "Host": f"localhost:{PORT}", "Origin": f"http://localhost:{PORT}"}, 200),
    ({"Host": GOOD["Host"]}, 401),
    ({**GOOD, "Authorization": "Bearer wrong-token"}, 401),
    ({**GOOD, "Authorization": f"Basic {TOKEN}"}, 401),
    ({**GOOD, "Origin": "https://evil.example"}, 403),
    ({**GOOD, "Origin": "null"}, 403),
    ({**GOOD, "Origin": f"http://127.0.0.1:{PORT + 1}"}, 403),
    ({**GOOD, "Host": f"evil.example:{PORT}"}, 403),
])
def test_only_a_local_request_with_the_token_reaches_the_server(headers: dict[str, str], status: int):
    assert status_of(headers) == status
