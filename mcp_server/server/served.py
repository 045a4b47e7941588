"""One vault inside this user's server: its App, its MCP endpoint, its hooks, its schedule, its idle clock and
its write lock.

Each project vault keeps an App of its own (indices, searcher, curator), so one project's memories never
reach another's answers; only the process, the web stack and the embedding host are shared. The vault's
flock (`.memdir/server.lock`, holding the server's pid) stays what it was: one writer per vault, also
against a second server or an older memdir that serves a vault in a process of its own.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import anyio
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from indexer import collector
from vault import VaultError
from vault.errors import ConflictError, DiskFullError, NotFoundError, PathError, ValidationError
from vault.lock import open_lock_file, release, renewed, still_named, try_flock

from ..service.app import App
from ..client import IDEMPOTENCY_HEADER, VAULT_LOCK, process_alive
from ..plain_json import without_lone_surrogates
from ..config import load_config
from ..embedding.host import EmbedderUnavailable
from .idle import IdleWatch
from .schedule import Every
from ..service import operations
from ..service.memory_service import MemoryService

log = logging.getLogger("memdir.server")
MAX_BODY = 1_000_000
SPOOL_DRAIN_SECONDS = 2.0  # how often the server looks for hook events no request delivered

STATUS = {NotFoundError: 404, PathError: 400, ValidationError: 400, ConflictError: 409, DiskFullError: 507,
          EmbedderUnavailable: 503}


class AlreadyServed(ConflictError):
    """Another process serves this vault (holds its lock)."""


class ServedVault:
    """A vault this process serves: claimed, loaded, served over HTTP, then closed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock_fd: int | None = None
        self.app: App | None = None
        self.service: MemoryService | None = None
        self.hooks: Any = None
        self.lifecycle: Every | None = None
        self.drainer: Every | None = None
        self.idle: IdleWatch | None = None
        self.mcp: Any = None
        self._mcp_asgi: Any = None
        self.asgi: Any = None
        self.opened = time.time()

    def claim(self) -> None:
        """Take the vault's lock, or raise AlreadyServed naming the process that holds it."""
        path = self.root / VAULT_LOCK
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_lock_file(path)
        try:
            held = not try_flock(fd)
            written = os.pread(fd, 32, 0).decode(errors="replace").strip() if held else ""
        except BaseException:
            os.close(fd)
            raise
        if held:
            os.close(fd)
            # An older memdir writes no pid: a number left by an earlier holder is named only while it runs.
            holder = f" (pid {written})" if written.isdigit() and process_alive(int(written)) else ""
            raise AlreadyServed(f"{self.root} is served by another memdir process{holder}; "
                                "stop it (memdir stop --all, or end that process) to serve it here") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd

    def keep_locks(self) -> None:
        """Take this vault's locks again if `.memdir` was deleted under the server (`rm -rf .memdir`, `git clean
        -fdX`): its flocks stay on the deleted files, and a CLI command would find the vault unserved and open the
        index beside this process. Every few seconds (the spool's drain), so that the window is that short."""
        fd, path = self._lock_fd, self.root / VAULT_LOCK
        if not self.root.is_dir():
            return  # the vault itself is gone: nothing to serve, nothing to claim again
        if fd is not None and not still_named(fd, path):
            try:
                self._lock_fd = renewed(fd, path)
            except OSError as exc:
                log.warning("%s: its lock file was deleted and cannot be made again: %s", self.root, exc)
            else:
                if self._lock_fd is None:
                    log.warning("%s: its lock file was deleted and another process claimed the vault", self.root)
                else:
                    os.pwrite(self._lock_fd, str(os.getpid()).encode(), 0)
        if self.app is not None:
            for side in (self.app.project, self.app.user):
                if side is not None:
                    side.index.keep_ownership()

    def _drain(self) -> int:
        self.keep_locks()
        assert self.hooks is not None
        return self.hooks.drain()

    def load(self, embedder: Callable[[Any], Any], stop: threading.Event | None = None) -> None:
        """Open the index (reconciling edits made while nothing served it), start the watcher and the lifecycle
        schedule: the hooks and operations are served from here on. What the hooks spooled meanwhile is applied
        right after, while the vault is served (process.py: `drain_spool`); only the events a dead server had taken
        are made due again here, before any request of this server can take one. The MCP endpoint comes after
        (`build_mcp`), so the first prompts of a cold start do not wait for it either.
        `stop`, set, calls off the open's wait for another process's first build of an index (Index.open)."""
        from ..clients.hooks_server import HookHandler

        started, cpu = time.monotonic(), time.process_time()
        config = load_config(self.root)
        with collector.keeping_loads():  # kept while served: frozen as the load ends (see the collection below)
            self.app = App(self.root, config=config, embedder=embedder(config), defer_embedding=True, reconcile_later=True,
                           stop=stop)
        log.info("%s: index open in %.2f s (%.2f CPU s of the process)", self.root, time.monotonic() - started,
                 time.process_time() - cpu)  # the timeline of a cold start (bench/sessions.py --log)
        self.service = MemoryService(self.app)
        self.service.sessions.clean()
        self.app.start_watching()
        self.hooks = HookHandler(self.service)
        # Not the replay itself: nine sessions' events spooled while a cold server started took 1.3 s to apply at
        # load 2 (4-5 s at load 10), and every prompt meanwhile was told "opening" and went without context. Served
        # first, a prompt whose session still has events waiting is answered ahead of them (HookHandler.prompt).
        self.hooks.due_again()
        self.idle = IdleWatch(self.root, config.server.idle_exit_seconds)
        self.lifecycle = Every(config.lifecycle.every_seconds, self._lifecycle, f"lifecycle {self.root.name}")
        self.lifecycle.start()
        # An event spooled while the vault was opening (its hook was told "opening") or whose hook was killed
        # has no request to deliver it: without this it would wait for the next prompt or a restart.
        self.drainer = Every(SPOOL_DRAIN_SECONDS, self._drain, f"spool {self.root.name}")
        self.drainer.start()
        self.asgi = Starlette(routes=[
            Route("/api/op", self._operation, methods=["POST"]),
            Route("/api/hook/{event}", self._hook, methods=["POST"]),
            Mount("/", app=self._mcp_endpoint),
        ])
        # The loaded indices are long-lived objects by the hundred thousand (578k at 10k memories), and
        # every full collection walked them all: 300 ms, landing on whichever call was running then.
        # Frozen, the collector skips them; what is created later is collected as usual. A generation's read was
        # frozen as it ended (collector.loading): this collection walks only what the open made after it.
        gc.collect()
        gc.freeze()

    def answered(self) -> bool:
        """Whether a search was answered from this vault's index yet (the MCP endpoint is built after it)."""
        return self.app is not None and self.app.index.answered.is_set()

    def build_mcp(self) -> None:
        """The vault's MCP endpoint. Kept out of `load`: the MCP SDK's import and the tools' schemas were 40% of a
        cold server's CPU before its first answer (bench/results/sessions.md, "A cold start under nine sessions"), and
        the hooks, which every session calls on every prompt, need neither. Built in the first quiet moment after the
        first answer, or when an MCP request asks for it (process.py, `_mcp_due`): at 100k it took 0.7 of the served
        first answer's CPU s beside it, and right after the first answer it took ~1.5 CPU s amid a cold start's prompts."""
        from ..tools import mcp_tools as tools

        assert self.service is not None  # built after load()
        self.mcp = tools.build(self.service)
        self._mcp_asgi = self.mcp.streamable_http_app(streamable_http_path="/mcp")

    async def _mcp_endpoint(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The server routes MCP requests here only once `build_mcp` ran and its session manager started.
        await self._mcp_asgi(scope, receive, send)

    def drain_spool(self, spooled_before: int) -> int:
        """Apply what hooks spooled before `spooled_before` (time_ns): called the moment the vault is open, while it
        is served (what was spooled while nothing served it, and while it opened)."""
        if self.hooks is None:
            return 0
        started, cpu = time.monotonic(), time.process_time()
        applied = self.hooks.drain(spooled_before)
        if applied:  # the timeline of a cold start (bench/sessions.py --log)
            log.info("%s: applied %d hook events spooled while it was not served, in %.2f s (%.2f CPU s of the "
                     "process)", self.root, applied, time.monotonic() - started, time.process_time() - cpu)
        return applied

    def _lifecycle(self) -> str:
        applied = self.service.gc() if self.service else []
        return f"{self.root}: {len(applied)} lifecycle decisions applied (see .memdir/lifecycle.jsonl)"

    def health(self) -> dict[str, Any]:
        assert self.app is not None and self.idle is not None
        return {"vault": str(self.root), "memories": self.app.index.memory_count(),
                "unembedded": self.app.index.waiting_units(),  # units the backfill has yet to embed
                "uptime_s": round(time.time() - self.opened, 1), "idle_s": round(self.idle.idle_seconds(), 1)}

    def close(self) -> None:
        """Stop the schedule, apply what is still spooled, flush and close the indices, release the lock."""
        for schedule in (self.lifecycle, self.drainer):
            if schedule is not None:
                schedule.stop()
        if self.hooks is not None:
            self.hooks.take_no_more()  # the requests past the drain: their events go to the replay below, or wait
            self.hooks.close()  # no catch-up of a prompt's session runs beside the replay below
            self.hooks.service.sessions.flush()  # the prompts answered before their turns were saved
        if self.hooks is not None and self.root.is_dir():
            try:
                self.hooks.replay(self.root / ".memdir" / "spool")
            except (OSError, VaultError) as exc:
                log.warning("%s: spooled events left for the next start: %s", self.root, exc)
        if self.app is not None:
            try:
                self.app.close()  # stops the watchers too
            except OSError as exc:  # the vault folder was deleted under us: nothing left to flush into
                log.warning("closing %s: %s", self.root, exc)
            self.app = None
        if self._lock_fd is not None:
            release(self._lock_fd)
            self._lock_fd = None
        # What the vault's indices froze must not stay frozen once they are gone (a cycle would be kept forever).
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    # -- HTTP --------------------------------------------------------------------------

    async def _operation(self, request: Request) -> JSONResponse:
        body = await json_body(request)
        if isinstance(body, JSONResponse):
            return body
        try:  # the contract's request model: an unknown or mistyped argument is named, nothing runs
            operation = operations.parse(body.get("op"), body.get("args", {}))
        except ValidationError as exc:
            return error("ValidationError", str(exc), 400)
        service = self.service
        assert service is not None  # routes are mounted by load(), after the service exists
        key = request.headers.get(IDEMPOTENCY_HEADER)  # a retried write is applied once
        # The typed result goes out as JSON: the client reads it back into the operation's result type.
        return await _run(lambda: {"result": operations.as_json(
            service.once(key, operation.op, lambda: operation.run_on(service)))})

    async def _hook(self, request: Request) -> JSONResponse:
        body = await json_body(request)
        if isinstance(body, JSONResponse):
            return body
        event = request.path_params["event"]
        handler = getattr(self.hooks, event.replace("-", "_"), None) if event in ("prompt", "stop", "session-start") else None
        if handler is None:
            return error("ValidationError", f"unknown hook event {event!r}", 404)
        return await _run(lambda: handler(body))


def open_vault(root: Path, embedder: Callable[[Any], Any], stop: threading.Event | None = None) -> ServedVault:
    """Claim and load a vault; on failure nothing stays claimed. `stop` calls the load's waits off (ServedVault.load)."""
    served = ServedVault(root)
    served.claim()
    try:
        served.load(embedder, stop)
    except BaseException:
        served.close()
        raise
    return served


async def json_body(request: Request) -> dict[str, Any] | JSONResponse:
    try:
        raw = await request.body()
    except ClientDisconnect:  # it went away, or was cut off for sending its body too slowly (http_limits)
        return error("ValidationError", "the request body did not arrive", 400)
    if len(raw) > MAX_BODY:
        return error("ValidationError", f"request body over {MAX_BODY:,} bytes", 413)
    try:
        body = without_lone_surrogates(json.loads(raw or b"{}"))
    except ValueError:
        return error("ValidationError", "request body is not JSON", 400)
    return body if isinstance(body, dict) else error("ValidationError", "request body must be a JSON object", 400)


async def _run(call: Callable[[], Any]) -> JSONResponse:
    """Run a (blocking) service call in a worker thread. memdir's errors become JSON errors the client raises
    again as the same class; anything else is a bug in the server, logged and reported as one (500)."""
    try:
        return JSONResponse(await anyio.to_thread.run_sync(call))
    except VaultError as exc:
        return error(type(exc).__name__, str(exc), status_of(exc))
    except Exception as exc:  # noqa: BLE001 - the caller gets an answer, the log gets the traceback
        log.exception("a request failed inside the memdir server")
        return error("ServerError", f"memdir server error: {type(exc).__name__}: {exc} (see its server.log)", 500)


def status_of(exc: VaultError) -> int:
    return next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 400)


def error(kind: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status)
