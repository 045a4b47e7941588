"""The stdio proxy's upstream side: one MCP session with the vault's `/mcp` endpoint in this user's memdir
server, started (with the server, when it is not running) while the assistant initializes.

Apart from stdio.py because its imports (http.client and the email package under it, logging, the client)
took longer than answering the assistant's first `tools/list`: the proxy imports this module on a
background thread after it started reading stdin.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import threading
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import client
from .handshake import HANDSHAKE_VERSIONS, SERVER_INFO

log = logging.getLogger("memdir.stdio")

UPSTREAM_TIMEOUT = 300.0  # a tool call may wait for the vault server to index a large vault


class Gone(Exception):
    """The vault server (or its MCP session) is not there any more: start again and retry once."""


class Upstream:
    """One MCP session with the vault server's /mcp endpoint, opened on demand."""

    def __init__(self, vault_root: Path) -> None:
        self.vault_root = vault_root
        self.memdir_session = f"mcp-{uuid.uuid4().hex[:12]}"  # lets the server link tool calls to hook sessions
        self._lock = threading.Lock()
        self._info: client.ServerInfo | None = None
        self._mcp_session: str | None = None
        self._version = HANDSHAKE_VERSIONS[-1]
        self._ids = iter(range(1, 1 << 62))

    def warm(self) -> None:
        """Start (or reach) the vault server while the assistant initializes; a failure waits for the first call."""
        try:
            self._open()
        except (OSError, client.Unavailable, Gone, ValueError, http.client.HTTPException) as exc:
            log.warning("could not reach the vault server yet: %r", exc)

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The vault server's JSON-RPC response (with `result` or `error`) to one request. Its retry carries the
        same idempotency key: a write the server finished after the connection was lost is not applied twice."""
        key = client.new_key()
        for attempt in (1, 2):
            try:
                info, session = self._open()
                answer = self._post(info, session, {"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                                                    "params": params}, key)
                if answer is None:
                    raise Gone("no answer to a request")
                return answer
            except (OSError, Gone, http.client.HTTPException, client.Unavailable) as exc:
                if attempt == 2 or isinstance(exc, client.Unavailable):  # it could not start: a retry waits in vain
                    raise Gone(str(exc)) from None
                log.warning("vault server connection lost (%r); reconnecting and retrying once", exc)
                with self._lock:
                    self._info = self._mcp_session = None
        raise AssertionError("unreachable")

    def close(self) -> None:
        if not self._lock.acquire(timeout=1.0):  # still starting the server: no session to end, and no reason to wait
            return
        try:
            info, session = self._info, self._mcp_session
        finally:
            self._lock.release()
        if info is not None and session is not None:
            try:
                response, connection = self._request(info, "DELETE", None, {"Mcp-Session-Id": session}, timeout=1.0)
                with contextlib.closing(connection):
                    response.read()
            except (OSError, http.client.HTTPException):
                pass

    # -- streamable HTTP ----------------------------------------------------------------

    def _open(self) -> tuple[client.ServerInfo, str]:
        with self._lock:
            if self._info is not None and self._mcp_session is not None:
                return self._info, self._mcp_session
            info = client.ensure(self.vault_root)
            hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": self._version, "capabilities": {},
                "clientInfo": {"name": "memdir-stdio", "version": SERVER_INFO["version"]}}}
            response, connection = self._request(info, "POST", hello, {})
            with contextlib.closing(connection):
                session = response.getheader("Mcp-Session-Id")
                answer = _read_answer(response, 0)
            if session is None or answer is None or "result" not in answer:
                raise Gone(f"the vault server did not open an MCP session: {answer}")
            self._version = answer["result"].get("protocolVersion", self._version)
            response, connection = self._request(info, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                                 {"Mcp-Session-Id": session})
            with contextlib.closing(connection):
                response.read()
            self._info, self._mcp_session = info, session
            return info, session

    def _post(self, info: client.ServerInfo, session: str, message: dict[str, Any], key: str) -> dict[str, Any] | None:
        response, connection = self._request(info, "POST", message, {"Mcp-Session-Id": session,
                                                                     client.IDEMPOTENCY_HEADER: key})
        with contextlib.closing(connection):  # also when the answer is lost midway: no socket left to the collector
            if response.status == 404:  # the server restarted, or closed the vault and opened it again: its sessions are gone
                response.read()
                raise Gone("the MCP session expired")
            if response.status >= 500:  # the server is exiting (its last vault closed) or failed: start again, retry once
                raise Gone(f"the server answered {response.status}: {response.read()[:200]!r}")
            if response.status == 413:  # over the MCP endpoint's body limit: sending it again would only fail again
                response.read()
                return _too_large(message)
            return _read_answer(response, message["id"])

    def _request(self, info: client.ServerInfo, method: str, body: dict[str, Any] | None, headers: dict[str, str],
                 timeout: float = UPSTREAM_TIMEOUT) -> tuple[http.client.HTTPResponse, http.client.HTTPConnection]:
        connection = http.client.HTTPConnection("127.0.0.1", info.port, timeout=timeout)
        connection.request(method, "/mcp", body=json.dumps(body).encode() if body is not None else None, headers={
            "Authorization": f"Bearer {info.token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": self._version,
            "X-Memdir-Session": self.memdir_session, "X-Memdir-Client-Pid": str(os.getppid()),
            client.VAULT_HEADER: quote(str(self.vault_root)), **headers})
        response = connection.getresponse()
        if response.status in (401, 403):
            connection.close()
            raise Gone(f"the vault server refused the proxy ({response.status}): it restarted with a new token")
        return response, connection


def _too_large(message: dict[str, Any]) -> dict[str, Any]:
    """The tool's error for a call the vault server refused unread (HTTP 413), as the model can act on it."""
    name = message.get("params", {}).get("name", message.get("method"))
    size = len(json.dumps(message).encode())
    text = (f"{name}: the call is {size:,} bytes, more than the memdir server takes in one request; a memory holds "
            "at most a few pages of text: store the gist, or save a document in the project and use ingest_document")
    return {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": text}], "isError": True}}


def _read_answer(response: http.client.HTTPResponse, wanted: int) -> dict[str, Any] | None:
    """The JSON-RPC response with id `wanted`, from a JSON body or a server-sent event stream."""
    kind = response.getheader("Content-Type", "")
    if response.status == 202:
        response.read()
        return None
    if kind.startswith("application/json"):
        return json.loads(response.read() or b"null")
    if not kind.startswith("text/event-stream"):
        raise Gone(f"unexpected answer from the vault server: HTTP {response.status} {response.read()[:200]!r}")
    data: list[str] = []
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            message = json.loads("\n".join(data))
            data = []
            if isinstance(message, dict) and message.get("id") == wanted and ("result" in message or "error" in message):
                response.close()
                return message
    return None  # the stream ended without our answer
