"""`memdir serve`: the one process per vault that owns the indices, the watcher, the model and every write.

It listens on 127.0.0.1 only, on a port the OS picks, and writes `.memdir/server.json`
(pid, port, token; readable by the user alone). Every request must carry the token and may
not come from a foreign web origin (DNS rebinding). It serves MCP over streamable HTTP at
/mcp and small JSON endpoints for the CLI and the hooks.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hmac
import json
import logging
import os
import secrets
import signal
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route

from vault import VaultError, atomic
from vault.errors import ConflictError, NotFoundError, PathError, ValidationError

from . import registry, tools
from .app import App
from .client import SERVER_FILE, ServerInfo, running
from .config import Config, load_config
from .embed_host import SharedEmbedder
from .idle import IdleWatch
from .schedule import Every
from .service import MemoryService

log = logging.getLogger("memdir.server")
LOCK_FILE = ".memdir/server.lock"
MAX_BODY = 1_000_000

# Operations the CLI may run remotely: the names of MemoryService methods, nothing else.
OPERATIONS = frozenset({
    "search", "read", "log", "list", "doctor", "relationships", "link", "linked", "stats", "insights", "add", "update",
    "append", "delete", "restore", "ingest", "books", "record_response", "score", "gc", "suggest_merges", "merge", "reindex",
    "verify", "review",
})
STATUS = {NotFoundError: 404, PathError: 400, ValidationError: 400, ConflictError: 409}


class AlreadyRunning(Exception):
    def __init__(self, info: ServerInfo | None) -> None:
        super().__init__("a memdir server is already running for this vault")
        self.info = info


@dataclass
class Guard:
    """ASGI middleware: a bearer token on every request, and no foreign Origin (DNS rebinding)."""

    app: Any
    token: str
    port: Callable[[], int]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        port = self.port()
        origin = headers.get("origin")
        if origin is not None and origin not in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            return await PlainTextResponse("forbidden origin", status_code=403)(scope, receive, send)
        host = headers.get("host", "")
        if host not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return await PlainTextResponse("forbidden host", status_code=403)(scope, receive, send)
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(credential.strip().encode(), self.token.encode()):
            return await PlainTextResponse("unauthorized", status_code=401,
                                           headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
        await self.app(scope, receive, send)


class VaultServer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.token = secrets.token_urlsafe(32)
        self.port = 0
        self._lock_fd: int | None = None
        self.app: App | None = None
        self.service: MemoryService | None = None
        self.live: Any = None  # the project vault's LiveIndex, once loaded
        self.hooks: Any = None
        self.lifecycle: Every | None = None  # the scheduled lifecycle (see schedule.py)
        self.idle: Any = None  # IdleWatch, once loaded: when to let go of the vault

    # -- lifecycle -------------------------------------------------------------------

    def claim(self) -> None:
        """Become the vault's server, or raise AlreadyRunning naming the one that is."""
        path = self.root / LOCK_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise AlreadyRunning(running(self.root)) from None
        self._lock_fd = fd

    def load(self) -> None:
        """Open the index (reconciling edits made while nothing ran), load the model, start the watcher."""
        from .hooks_server import HookHandler

        config = load_config(self.root)
        self.app = App(self.root, config=config, embedder=self._embedder(config), defer_embedding=True)
        self.service = MemoryService(self.app)
        self.service.sessions.clean()
        self.app.start_watching()  # the project vault, and the user vault when this server owns its index
        self.live = self.app.project.live
        self.hooks = HookHandler(self.service)
        replayed = self.hooks.replay(self.root / ".memdir" / "spool")
        if replayed:
            log.info("replayed %d hook events spooled while no server ran", replayed)
        self.idle = IdleWatch(self.root, self.app.config.server.idle_exit_seconds)
        self.lifecycle = Every(self.app.config.lifecycle.every_seconds, self._lifecycle, "lifecycle")
        self.lifecycle.start()
        # The loaded indices are long-lived objects by the hundred thousand (578k at 10k memories), and
        # every full collection walked them all: 300 ms, landing on whichever call was running then.
        # Frozen, the collector skips them (a full collection then takes under 5 ms); what the
        # server creates later is collected as usual, and refcounting still frees frozen objects
        # that are not in a reference cycle (a frozen cycle would stay: none was found after
        # three index swaps and a deep sync, unfrozen and collected).
        gc.collect()
        gc.freeze()

    @staticmethod
    def _embedder(config: Config) -> SharedEmbedder | None:
        """The per-user embedding host for the real model (None: the App loads its own)."""
        if not (config.server.shared_embedder and config.search.embedder == SharedEmbedder.id):
            return None
        embedder = SharedEmbedder(config.server.idle_exit_seconds)
        embedder.warm()  # the host loads torch while this server opens its indices
        return embedder

    def serve(self, ready: Callable[[ServerInfo], None] | None = None) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # proto: asyncio sets TCP_NODELAY only then
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self.port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(self._asgi(), log_level="warning", lifespan="on",
                                               timeout_graceful_shutdown=5, access_log=False))

        def stop(signum: int, frame: Any) -> None:
            server.should_exit = True

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, stop)  # our handler, or uvicorn re-raises SIGTERM and skips the cleanup below
        info = ServerInfo(os.getpid(), self.port, self.token, str(self.root))
        self._write_address(info)
        registry.register(info.pid, self.root)
        log.info("memdir server for %s on 127.0.0.1:%d (pid %d)", self.root, self.port, os.getpid())
        if ready:
            ready(info)
        watch = Every(self.idle.check_every(), lambda: self._exit_when_idle(server), "idle-watch")
        watch.start()
        try:
            anyio.run(lambda: server.serve(sockets=[sock]))
        finally:
            watch.stop()
            self.close()

    def _exit_when_idle(self, server: uvicorn.Server) -> None:
        reason = self.idle.reason()
        if reason and not server.should_exit:
            log.info("memdir server for %s exits: %s", self.root, reason)
            server.should_exit = True  # a graceful shutdown: requests in flight finish, then close() flushes

    def _lifecycle(self) -> str:
        applied = self.service.gc() if self.service else []
        return f"{len(applied)} lifecycle decisions applied (see .memdir/lifecycle.jsonl)"

    def close(self) -> None:
        if self.lifecycle is not None:
            self.lifecycle.stop()
        if self.app:
            try:
                self.app.close()  # stops the watchers too
            except OSError as exc:  # the vault folder was deleted under us: nothing left to flush into
                log.warning("closing %s: %s", self.root, exc)
        registry.unregister(os.getpid())
        current = ServerInfo.read(self.root)
        if current is not None and current.pid == os.getpid():
            with contextlib.suppress(FileNotFoundError):
                (self.root / SERVER_FILE).unlink()
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _write_address(self, info: ServerInfo) -> None:
        data = {"pid": info.pid, "port": info.port, "token": info.token, "vault": info.vault}
        atomic.write_state(self.root / SERVER_FILE, json.dumps(data).encode(), mode=0o600)

    # -- HTTP --------------------------------------------------------------------------

    def _asgi(self) -> Any:
        assert self.service is not None
        mcp = tools.build(self.service)
        mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp")

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with mcp.session_manager.run():  # Starlette does not run a mounted app's lifespan
                yield

        routes = [
            Route("/api/health", self._health, methods=["GET"]),
            Route("/api/op", self._operation, methods=["POST"]),
            Route("/api/hook/{event}", self._hook, methods=["POST"]),
            Mount("/", app=mcp_app),
        ]
        # Only requests the guard lets through count as activity: a stranger's knocking keeps nothing alive.
        return Guard(self.idle.middleware(Starlette(routes=routes, lifespan=lifespan)), self.token, lambda: self.port)

    async def _health(self, request: Request) -> JSONResponse:
        assert self.app is not None
        return JSONResponse({"ok": True, "pid": os.getpid(), "vault": str(self.root),
                             "memories": len(self.app.index.memories),
                             "unembedded": len(self.app.index.unembedded),  # units the backfill has yet to embed
                             "idle_seconds": round(self.idle.idle_seconds(), 1) if self.idle else None})

    async def _operation(self, request: Request) -> JSONResponse:
        body = await _json_body(request)
        if isinstance(body, JSONResponse):
            return body
        op, args = body.get("op"), body.get("args", {})
        if op not in OPERATIONS or not isinstance(args, dict):
            return _error("ValidationError", f"unknown operation {op!r}", 400)
        method = getattr(self.service, op)
        return await _run(lambda: {"result": method(**args)})

    async def _hook(self, request: Request) -> JSONResponse:
        body = await _json_body(request)
        if isinstance(body, JSONResponse):
            return body
        event = request.path_params["event"]
        handler = getattr(self.hooks, event.replace("-", "_"), None) if event in ("prompt", "stop", "session-start") else None
        if handler is None:
            return _error("ValidationError", f"unknown hook event {event!r}", 404)
        return await _run(lambda: handler(body))


async def _json_body(request: Request) -> dict[str, Any] | JSONResponse:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        return _error("ValidationError", f"request body over {MAX_BODY:,} bytes", 413)
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        return _error("ValidationError", "request body is not JSON", 400)
    return body if isinstance(body, dict) else _error("ValidationError", "request body must be a JSON object", 400)


async def _run(call: Callable[[], Any]) -> JSONResponse:
    """Run a (blocking) service call in a worker thread; memdir's errors become JSON errors."""
    try:
        return JSONResponse(await anyio.to_thread.run_sync(call))
    except TypeError as exc:
        return _error("ValidationError", f"bad arguments: {exc}", 400)
    except VaultError as exc:
        status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 400)
        return _error(type(exc).__name__, str(exc), status)


def _error(kind: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status)


def run_server(root: Path, ready: Callable[[ServerInfo], None] | None = None) -> None:
    """Claim the vault, load everything once, serve until SIGTERM."""
    server = VaultServer(root)
    server.claim()
    try:
        server.load()
    except BaseException:
        server.close()
        raise
    server.serve(ready)

