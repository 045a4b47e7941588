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

The first answers come before anything else is imported: the upstream side (upstream.py: http.client
and the email package, logging, the client) is set up on a background thread. The proxy's own start
on top of a bare `python -c pass` fell from about 740 ms to about 110 ms on a loaded machine
(bench/stdio_start.py).

stdout is the protocol: nothing else is ever printed there; the proxy logs to .memdir/server.log,
the server to server.log in the per-user folder.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import tool_list
from .descriptions import INSTRUCTIONS

if TYPE_CHECKING:
    from .upstream import Upstream

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # negotiated by `initialize`
SERVER_INFO = {"name": "memdir", "version": "0.1.0"}
METHOD_NOT_FOUND, INVALID_REQUEST, PARSE_ERROR, INTERNAL_ERROR = -32601, -32600, -32700, -32603
CONNECT_SECONDS = 30.0  # the upstream side's imports and log setup, on a loaded machine


class Connecting:
    """The upstream side, made on a background thread: its imports and the log file are not needed to answer
    `initialize` and `tools/list`, which the assistant waits for (Claude Code about 1.7 s). Then it warms:
    starts or reaches the vault server."""

    def __init__(self, vault_root: Path) -> None:
        self.vault_root = vault_root
        self._ready = threading.Event()
        self._upstream: "Upstream | None" = None
        self._failed = ""

    def start(self) -> None:
        threading.Thread(target=self._connect, daemon=True, name="warm").start()

    def get(self) -> "Upstream":
        if not self._ready.wait(CONNECT_SECONDS) or self._upstream is None:
            raise RuntimeError(f"the memdir proxy could not set up its connection: {self._failed or 'timed out'}")
        return self._upstream

    def _connect(self) -> None:
        try:
            from ..logs import configure
            from .upstream import Upstream

            configure(self.vault_root, name="stdio")
            self._upstream = Upstream(self.vault_root)
        except Exception as exc:  # noqa: BLE001 - reported to the first tool call, which waits for it
            self._failed = repr(exc)
            return
        finally:
            self._ready.set()
        self._upstream.warm()

    def close(self) -> None:
        if self._upstream is not None:
            self._upstream.close()


class Proxy:
    """The assistant's side: JSON-RPC over stdin/stdout, one JSON message per line."""

    def __init__(self, vault_root: Path, upstream: Connecting, out: Any) -> None:
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
        import logging  # loaded by now: the upstream side configured the log

        from .. import client
        from .upstream import Gone

        log = logging.getLogger("memdir.stdio")
        try:
            answer = self.upstream.get().call("tools/call", params)
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
    # Claude Code ends a session's server with SIGINT and falls back to SIGTERM when it lingers.
    # The proxy holds no state of its own (the vault server does), so it leaves at once.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _leave)
    upstream = Connecting(vault_root)
    upstream.start()
    proxy = Proxy(vault_root, upstream, sys.stdout.buffer)
    for line in sys.stdin.buffer:
        if line.strip():
            proxy.handle(line)
    upstream.close()  # the assistant closed stdin: the session is over


def _leave(signum: int, frame: Any) -> None:
    try:  # the log, if the background thread set it up; it may be importing logging this very moment
        getattr(sys.modules.get("logging"), "shutdown", lambda: None)()
    finally:
        os._exit(0)
