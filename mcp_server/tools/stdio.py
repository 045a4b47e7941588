"""`memdir mcp`: the stdio MCP server an assistant launches, forwarding every tool call to its vault's MCP
endpoint in this user's memdir server (every request names the vault in the `X-Memdir-Vault` header).

Many assistant sessions therefore share one index, one model and one writer per vault. Standard library
only, because it starts before every session: importing the MCP SDK alone took about 470 ms, and
Claude Code waits for `initialize` and `tools/list` before its first request. Those two, and
`ping`, are answered here at once (the tool list is a snapshot kept equal to the served tools by
a test); `tools/call` is relayed to the vault's streamable-HTTP `/mcp` endpoint over one upstream
MCP session, started (with the server, when it is not running, and the vault opened there) in the
background while the client initializes, reopened when the server restarted or closed the vault
meanwhile, and retried once when a call finds the connection gone.

stdout is the protocol: nothing else is ever printed there; the proxy logs to .memdir/server.log,
the server to server.log in the per-user folder.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import signal
import sys
import threading
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import client
from . import tool_list
from .descriptions import INSTRUCTIONS
from ..logs import configure

log = logging.getLogger("memdir.stdio")

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # negotiated by `initialize`
SERVER_INFO = {"name": "memdir", "version": "0.1.0"}
UPSTREAM_TIMEOUT = 300.0  # a tool call may wait for the vault server to index a large vault
METHOD_NOT_FOUND, INVALID_REQUEST, PARSE_ERROR, INTERNAL_ERROR = -32601, -32600, -32700, -32603


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
        with self._lock:
            info, session = self._info, self._mcp_session
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


class Proxy:
    """The assistant's side: JSON-RPC over stdin/stdout, one JSON message per line."""

    def __init__(self, vault_root: Path, upstream: Upstream, out: Any) -> None:
        self.vault_root = vault_root
        self.upstream = upstream
        self.out = out
        self._write = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._write:
            self.out.write(line.encode("utf-8"))
            self.out.flush()

    def handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "not JSON"}})
            return
        except RecursionError:  # one line nested a thousand deep must not end the session
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "JSON nested too deep"}})
            return
        if not isinstance(message, dict) or "method" not in message:
            if isinstance(message, dict) and "id" in message:
                return  # a response to a request we never send: nothing to do
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": "not a request"}})
            return
        if "id" not in message:
            return  # notifications: initialized, cancelled, roots changed - nothing for a proxy to keep
        method, ident, params = message["method"], message["id"], message.get("params") or {}
        if method == "tools/call":
            threading.Thread(target=self._call, args=(ident, params), daemon=True, name="tool-call").start()
            return
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
            self.send({"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": version, "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO, "instructions": INSTRUCTIONS}})
        elif method == "tools/list":
            self.send({"jsonrpc": "2.0", "id": ident, "result": {"tools": tool_list.load()}})
        elif method == "ping":
            self.send({"jsonrpc": "2.0", "id": ident, "result": {}})
        else:
            self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": METHOD_NOT_FOUND,
                                                                "message": f"memdir does not serve {method}"}})

    def _call(self, ident: Any, params: dict[str, Any]) -> None:
        try:
            answer = self.upstream.call("tools/call", params)
        except Gone as exc:
            log.warning("tool call %s failed: %s", params.get("name"), exc)
            text = f"the memdir server for {self.vault_root} could not be reached or started ({exc}); see {client.log_file()}"
            self.send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}],
                                                                 "isError": True}})
            return
        except Exception as exc:  # noqa: BLE001 - the assistant must get an answer whatever happened
            log.exception("tool call %s failed", params.get("name"))
            self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": INTERNAL_ERROR, "message": str(exc)}})
            return
        if "result" in answer and isinstance(answer["result"].get("_meta"), dict):
            meta = {k: v for k, v in answer["result"]["_meta"].items() if not k.startswith("io.modelcontextprotocol/")}
            answer["result"] = {k: v for k, v in answer["result"].items() if k != "_meta"} | ({"_meta": meta} if meta else {})
        self.send({"jsonrpc": "2.0", "id": ident, **{k: answer[k] for k in ("result", "error") if k in answer}})


def run_stdio(vault_root: Path) -> None:
    configure(vault_root, name="stdio")
    # Claude Code ends a session's server with SIGINT and falls back to SIGTERM when it lingers.
    # The proxy holds no state of its own (the vault server does), so it leaves at once.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _leave)
    upstream = Upstream(vault_root)
    threading.Thread(target=upstream.warm, daemon=True, name="warm").start()
    proxy = Proxy(vault_root, upstream, sys.stdout.buffer)
    for line in sys.stdin.buffer:
        if line.strip():
            proxy.handle(line)
    upstream.close()  # the assistant closed stdin: the session is over


def _leave(signum: int, frame: Any) -> None:
    logging.shutdown()
    os._exit(0)
