"""`memdir serve`: this user's one server process, serving every vault it is asked for.

Each vault is opened on its first request (which names it in the `X-Memdir-Vault` header) and keeps
everything of its own (served.py): indices, write lock, MCP endpoint, lifecycle schedule and idle clock.
What a vault server used to carry once per project - Python, numpy, FAISS, Whoosh, the web stack and the
MCP SDK, 120-130 MB - is now carried once per user.

It listens on 127.0.0.1 only, on a port the OS picks, and writes its address (pid, port, token) to
`server.json` in the per-user folder (client.servers_folder(): 0700, the file 0600), next to the
`server.lock` it holds while it lives. Every request must carry the token and may not come from a
foreign web origin (DNS rebinding). A vault idle for its `[server] idle_exit_seconds`, or whose folder
or memdir.toml disappeared, is closed; the process exits when it serves no vault.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable
from urllib.parse import unquote

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route

from indexer.generations import Layout
from indexer.in_flight import BUSY
from vault import ConfigError, VaultError, atomic
from vault.errors import CarriedStateError
from vault.lock import open_lock_file, release, try_flock

from ..clients import config_notice
from ..client import (ADDRESS_FILE, OPENING, PROCESS_LOCK, VAULT_HEADER, ServerInfo, own_folder, process_age, running,
                      servers_folder)
from ..config import Config, user_vault_root
from ..embedding.host import SharedEmbedder
from ..locate import uninitialized
from ..rss import rss_mb
from ..waiting import attempts
from . import inbox
from .http_limits import BoundedH11
from .served import MAX_BODY, ServedVault, error, open_vault, status_of
from ..web.auth import WebAuth

log = logging.getLogger("memdir.server")
DRAIN_SECONDS = 5.0  # how long a closing vault waits for its requests in flight (an MCP event stream never ends)
LOCK_WAIT_SECONDS = 30.0  # a server that is exiting still holds the process lock for a moment
# How long a hook's request waits for a vault that is opening before it is told "opening" (its event stays
# spooled and is applied once the vault is open). The hook waits 0.9 s in all (hooks.TIMEOUTS): a prompt that
# came just before the vault opened still gets its context, and the rest of the budget is left for the answer.
HOOK_OPEN_WAIT_SECONDS = 0.4
# Events told "opening" whose hooks could not spool them (a full disk) wait in the server's memory for the open,
# up to this many bytes a vault: past it they are dropped, and logged (a prompt's body is a few kB).
UNSPOOLED_MAX_BYTES = 16 * 1024 * 1024
# A vault's MCP endpoint is built at its first MCP request, or once its first answer is given and the process has had
# no request for MCP_QUIET_SECONDS, or after MCP_AFTER_SECONDS at the latest. Right after the first answer, its ~1.5
# CPU s (the MCP SDK's import and the tools' schemas) came in the middle of a cold start's prompts (s22-cold22.md).
MCP_QUIET_SECONDS = 2.0
MCP_AFTER_SECONDS = 60.0


class AlreadyRunning(Exception):
    def __init__(self, info: ServerInfo | None) -> None:
        super().__init__("a memdir server is already running for this user")
        self.info = info


@dataclass
class Guard:
    """ASGI middleware: a bearer token on every request (a web page: its session cookie instead), and no
    foreign Origin or Host (DNS rebinding)."""

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
        if _web_page(scope.get("path", "")):
            return await self.app(scope, receive, send)  # the pages check their own session cookie (web/routes.py)
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(credential.strip().encode(), self.token.encode()):
            return await PlainTextResponse("unauthorized", status_code=401,
                                           headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
        await self.app(scope, receive, send)


@dataclass
class Slot:
    """A vault in this process, from the request that asked for it until it is closed."""

    root: Path
    vault: ServedVault | None = None
    failure: JSONResponse | None = None  # why it could not be opened (told to the next request, then forgotten)
    closing: bool = False
    in_flight: int = 0
    ready: anyio.Event = field(default_factory=anyio.Event)
    mcp_ready: anyio.Event = field(default_factory=anyio.Event)  # set when the MCP endpoint serves, or failed to
    closed: anyio.Event = field(default_factory=anyio.Event)
    drained: anyio.Event = field(default_factory=anyio.Event)
    end_mcp: anyio.Event = field(default_factory=anyio.Event)
    mcp_wanted: anyio.Event = field(default_factory=anyio.Event)  # an MCP request came: build the endpoint now
    mcp_ended: anyio.Event = field(default_factory=anyio.Event)
    # Hook events told "opening" that their hooks could not spool: (when they came in time_ns, event, body).
    unspooled: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    unspooled_bytes: int = 0
    # Set when the vault is let go while it opens (the server exits): the open's wait for another process's first
    # build of its index ends then, not after BUILD_WAIT_SECONDS (a thread's event: the open runs in a worker thread).
    stop_opening: threading.Event = field(default_factory=threading.Event)


class UserServer:
    def __init__(self) -> None:
        self.folder = servers_folder()
        self.token = secrets.token_urlsafe(32)
        self.port = 0
        self.started = time.time()
        self.slots: dict[Path, Slot] = {}
        self.exiting = False
        self._lock_fd: int | None = None
        self._tasks: Any = None
        self._uvicorn: uvicorn.Server | None = None
        self._embedder: SharedEmbedder | None = None
        self._inbox: inbox.Inbox | None = None  # hook events handed over while this process started (inbox.py)
        self.web = WebAuth()  # `memdir ui` logins: one-time codes and the browser sessions they became

    # -- the process ---------------------------------------------------------------------

    def claim(self) -> None:
        """Become this user's server, or raise AlreadyRunning naming the one that is. A server on its way
        out still holds the lock for a moment: wait for it rather than leave the user with none. The lock taken
        already at the process's start (`memdir serve`: inbox.open_early) is this one's, with its inbox."""
        early = inbox.early_claim()
        if early is not None:
            self._lock_fd, self._inbox = early
            return
        own_folder()
        fd = open_lock_file(self.folder / PROCESS_LOCK)
        try:
            for _ in attempts(LOCK_WAIT_SECONDS, 0.1, 0.1):  # the holder is starting or exiting: nothing to wait on but its lock
                if try_flock(fd):
                    break
                current = running()
                if current is not None:
                    raise AlreadyRunning(current)
            else:
                raise AlreadyRunning(None)
        except BaseException:
            os.close(fd)
            raise
        self._lock_fd = fd

    def serve(self, first: Path | None = None, ready: Callable[[ServerInfo], None] | None = None) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # proto: asyncio sets TCP_NODELAY only then
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self.port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(self._asgi(first), log_level="warning", lifespan="on", http=BoundedH11,
                                               timeout_graceful_shutdown=DRAIN_SECONDS, access_log=False))
        self._uvicorn = server

        def stop(signum: int, frame: Any) -> None:
            self._leave("signalled")

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, stop)  # our handler, or uvicorn re-raises SIGTERM and skips the cleanup
        info = ServerInfo(os.getpid(), self.port, self.token, self.started)
        data = {"pid": info.pid, "port": info.port, "token": info.token, "started": info.started}
        atomic.write_state(self.folder / ADDRESS_FILE, json.dumps(data).encode(), mode=0o600)
        log.info("memdir server on 127.0.0.1:%d (pid %d, %.2f CPU s since its start, %.2f s after it)", self.port,
                 os.getpid(), time.process_time(), process_age())
        if ready:
            ready(info)
        try:
            anyio.run(lambda: server.serve(sockets=[sock]))
        finally:
            if self._inbox is not None:  # the server ends before it served (its start failed)
                lost = self._inbox.close()
                if lost:
                    log.warning("%d hook events handed over while the server started are lost with it", len(lost))
            self._forget_address()
            if self._lock_fd is not None:
                release(self._lock_fd)
                self._lock_fd = None

    def _leave(self, reason: str) -> None:
        """Stop taking requests and exit gracefully; the address goes at once so the next client starts a new server."""
        if not self.exiting:
            log.info("memdir server (pid %d) exits: %s", os.getpid(), reason)
        self.exiting = True
        for slot in self.slots.values():
            slot.stop_opening.set()  # an open waiting for another process's build ends now, not at the close
        if self._embedder is not None:
            self._embedder.close()  # a backfill finishing its batch must not start a new host on the way out
        self._forget_address()
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True

    def _forget_address(self) -> None:
        current = ServerInfo.read(self.folder)
        if current is not None and current.pid == os.getpid():
            with contextlib.suppress(FileNotFoundError):
                (self.folder / ADDRESS_FILE).unlink()

    def _embedder_for(self, config: Config, root: Path) -> SharedEmbedder | None:
        """The per-user embedding host for the real model (None: the vault's App loads its own)."""
        if not (config.server.shared_embedder and config.search.embedder == SharedEmbedder.id):
            return None
        if self._embedder is None:
            self._embedder = SharedEmbedder(config.server.idle_exit_seconds,
                                            int8_long_queries=config.search.int8_long_queries,
                                            int8_documents=config.search.int8_documents)
        # The host loads the model while the vault's indices open. Not for a vault without any index yet: its first
        # build leaves every vector to the backfill (which starts the host when it first asks, once the prompts let
        # it), and the host's start was ~1 CPU s beside a cold server's open and first answers (s22-cold22.md).
        if _has_index(root, config):
            self._embedder.warm()
        return self._embedder

    # -- opening and closing vaults (all on the event loop; the slow parts in worker threads) ---

    def _open(self, root: Path) -> Slot:
        slot = Slot(root)
        self.slots[root] = slot
        self._tasks.start_soon(self._load, slot)
        return slot

    async def _load(self, slot: Slot) -> None:
        try:
            slot.vault = await anyio.to_thread.run_sync(open_vault, slot.root,
                                                        lambda config: self._embedder_for(config, slot.root),
                                                        slot.stop_opening)
            log.info("serving %s (%.2f CPU s since the server's start)", slot.root, time.process_time())
        except VaultError as exc:
            log.warning("cannot serve %s: %s", slot.root, exc)
            if isinstance(exc, (ConfigError, CarriedStateError)):  # the hooks say so once a session, and start no
                # server for it meanwhile (a server with no vault it can serve exits: each prompt started one, silently)
                config_notice.record(slot.root, str(exc), carried=isinstance(exc, CarriedStateError))
            slot.failure = error(type(exc).__name__, f"cannot serve {slot.root}: {exc}", status_of(exc))
        except Exception as exc:  # noqa: BLE001 - one vault that fails to open must not end the others
            log.exception("cannot serve %s", slot.root)
            slot.failure = error("ServerError", f"cannot serve {slot.root}: {type(exc).__name__}: {exc}", 500)
        finally:
            slot.ready.set()
        if slot.vault is not None:
            config_notice.clear(slot.root)
            self._hand_over_unspooled(slot)
            # What hooks spooled while no server ran, and while the vault opened (told "opening", they will not ask
            # again): applied now, with the vault served meanwhile.
            try:
                await anyio.to_thread.run_sync(slot.vault.drain_spool, time.time_ns())
            except Exception:  # noqa: BLE001 - the spool timer tries again; the vault is served meanwhile
                log.exception("%s: could not apply the spool", slot.root)
            await self._start_mcp(slot)
        else:
            slot.mcp_ready.set()
            if slot.unspooled:
                log.warning("%s: %d hook events that could not be spooled are lost with the vault's open",
                            slot.root, len(slot.unspooled))
        if slot.failure is not None and not any(s.vault is not None for s in self.slots.values()):
            self._forget(slot)  # nothing else to serve: exit (the reason is in the log) rather than idle on nothing
        # else the failure waits in its slot for the next request, which reports it and forgets it

    @staticmethod
    def _hand_over_unspooled(slot: Slot) -> None:
        """The events kept while the vault opened go to its hooks, which apply them in their sessions' order."""
        assert slot.vault is not None
        for at, kind, body in slot.unspooled:
            slot.vault.hooks.hold(kind, body, at)
        slot.unspooled.clear()
        slot.unspooled_bytes = 0

    def _take_inbox(self) -> None:
        """The server listens from here on: the events handed to its inbox while it started go to their vaults, to
        be applied once each is open as those told "opening" are, and the inbox closes (a hook that comes later finds
        the server itself). Before any request is taken, so a session's later events come after them."""
        if self._inbox is None:
            return
        kept, self._inbox = self._inbox.close(), None
        for at, vault, kind, body in kept:
            root = Path(os.path.realpath(vault))
            if root not in self.slots:
                refused = uninitialized(root)
                if refused is not None:
                    log.warning("a %s hook event handed over while the server started is dropped: %s", kind, refused)
                    continue
                self._open(root)
            self._keep_unspooled(root, kind, body, len(json.dumps(body)), at)
        if kept:
            log.info("%d hook events that could not be spooled were handed over while the server started", len(kept))

    def _keep_unspooled(self, root: Path, kind: str, body: dict[str, Any], size: int, at: int) -> None:
        """A hook told "opening" leaves its event in the spool, applied the moment the vault is open. One whose hook
        could not spool it (a full disk) was lost there: it is kept here instead (`size`: its request body's bytes),
        until the open hands it over."""
        opening = self.slots.get(root)
        if opening is None or opening.ready.is_set():
            return  # not opening: the server is exiting, or the vault failed to open (the answer says so)
        if opening.unspooled_bytes + size > UNSPOOLED_MAX_BYTES:
            log.warning("%s: a %s hook event that could not be spooled is dropped: %d bytes are already kept for "
                        "the vault's open", root, kind, opening.unspooled_bytes)
            return
        opening.unspooled.append((at, kind, body))
        opening.unspooled_bytes += size

    async def _start_mcp(self, slot: Slot) -> None:
        """The vault's MCP endpoint, after its hooks are served (ServedVault.build_mcp says why); MCP requests
        that came meanwhile wait for it (_to_vault)."""
        assert slot.vault is not None
        try:
            # Not beside the first answer (ServedVault.build_mcp): at the first MCP request, after the first answer in
            # the first quiet moment, or the bound.
            with anyio.move_on_after(MCP_AFTER_SECONDS):
                while not _mcp_due(slot):
                    with anyio.move_on_after(0.05):  # the answer is a thread's event: looked at in slices
                        await slot.mcp_wanted.wait()
            if slot.end_mcp.is_set():
                slot.mcp_ended.set()  # let go before its endpoint was built: nothing to end
                return
            await anyio.to_thread.run_sync(slot.vault.build_mcp)
            if slot.end_mcp.is_set():
                slot.mcp_ended.set()  # the vault was let go while its endpoint was being built
                return
            await self._tasks.start(self._run_mcp, slot)
            log.info("%s: MCP endpoint ready (%.2f CPU s since the server's start)", slot.root, time.process_time())
        except Exception:  # noqa: BLE001 - the hooks and operations go on; MCP requests are told why
            log.exception("%s: the MCP endpoint could not be built", slot.root)
            slot.mcp_ended.set()  # nothing to end when the vault closes
        finally:
            slot.mcp_ready.set()

    async def _run_mcp(self, slot: Slot, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        assert slot.vault is not None
        try:
            async with slot.vault.mcp.session_manager.run():  # Starlette does not run a mounted app's lifespan
                task_status.started()
                await slot.end_mcp.wait()
        finally:
            slot.mcp_ended.set()

    async def close(self, root: Path, reason: str) -> bool:
        """Let go of a vault gracefully: requests in flight finish (bounded), its MCP sessions end, what is
        spooled is applied, the indices are flushed and the lock released. False when it was not served."""
        slot = self.slots.get(root)
        if slot is None:
            return False
        slot.stop_opening.set()  # still opening: its wait for another process's build ends (it is let go unopened)
        await slot.ready.wait()
        if slot.vault is None:
            return False
        if slot.closing:
            await slot.closed.wait()
            return True
        slot.closing = True
        log.info("letting go of %s: %s", root, reason)
        with anyio.move_on_after(DRAIN_SECONDS):
            while slot.in_flight:
                slot.drained = anyio.Event()
                await slot.drained.wait()
        slot.end_mcp.set()
        if slot.mcp_ready.is_set():  # else its endpoint is still being built, and will not be started
            await slot.mcp_ended.wait()
        await anyio.to_thread.run_sync(slot.vault.close)
        self._forget(slot)
        slot.closed.set()
        return True

    def _forget(self, slot: Slot) -> None:
        if self.slots.get(slot.root) is slot:
            del self.slots[slot.root]
        if not any(s.vault is not None or not s.ready.is_set() for s in self.slots.values()):
            self._leave("it serves no vault")  # a failure waiting to be reported keeps nothing alive

    async def _watch(self) -> None:
        """Close vaults nobody asked for in their idle time, and vaults whose folder or memdir.toml is gone."""
        while True:
            open_ = [s for s in self.slots.values() if s.vault is not None and s.vault.idle is not None and not s.closing]
            await anyio.sleep(min((s.vault.idle.check_every() for s in open_), default=5.0))  # type: ignore[union-attr]
            for slot in open_:
                reason = slot.vault.idle.reason()  # type: ignore[union-attr]
                if reason and self.slots.get(slot.root) is slot:
                    self._tasks.start_soon(self.close, slot.root, reason)

    async def _close_all(self) -> None:
        for root in list(self.slots):
            await self.close(root, "the server exits")

    # -- HTTP --------------------------------------------------------------------------

    def _asgi(self, first: Path | None) -> Any:
        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                if first is not None:
                    self._open(first)
                self._take_inbox()
                tasks.start_soon(self._watch)
                try:
                    yield
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._close_all()
                    tasks.cancel_scope.cancel()

        routes = [
            Route("/api/health", self._health, methods=["GET"]),
            Route("/api/close", self._close_request, methods=["POST"]),
            Route("/api/ui/code", self._ui_code, methods=["POST"]),
            Mount("/ui", app=_BuiltOnFirstRequest(lambda: _web_app(self.web, self._web_service))),
            Mount("/", app=self._to_vault),
        ]
        return Guard(Starlette(routes=routes, lifespan=lifespan), self.token, lambda: self.port)

    async def _health(self, request: Request) -> JSONResponse:
        """With a vault named: whether it is open (503 while opening, which this request starts). Without:
        the process and every vault it serves, for `memdir status`. A health check is not a use."""
        root = _named_vault(request.headers)
        if root is None:
            served = [s.vault.health() for s in self.slots.values() if s.vault is not None and not s.closing]
            return JSONResponse({"pid": os.getpid(), "port": self.port, "rss_mb": rss_mb(os.getpid()),
                                 "uptime_s": round(time.time() - self.started, 1), "vaults": served})
        slot = await self._slot(root, wait=False)
        return slot if isinstance(slot, JSONResponse) else JSONResponse({"ok": True, "pid": os.getpid(), **slot.vault.health()})  # type: ignore[union-attr]

    async def _close_request(self, request: Request) -> JSONResponse:
        root = _named_vault(request.headers)
        if root is None:
            return error("ValidationError", f"name the vault to close in {VAULT_HEADER}", 400)
        return JSONResponse({"closed": await self.close(root, "memdir stop --vault")})

    async def _ui_code(self, request: Request) -> JSONResponse:
        """A one-time login code for the named vault's pages (asked for, with the token, by `memdir ui`)."""
        root = _named_vault(request.headers)
        if root is None:
            return error("ValidationError", f"name the vault in {VAULT_HEADER}", 400)
        slot = await self._slot(root, wait=True)
        return slot if isinstance(slot, JSONResponse) else JSONResponse({"code": self.web.issue_code(root)})

    async def _web_service(self, root: Path) -> Any:
        """The MemoryService of the vault a browser session is bound to, opening the vault again if it was closed."""
        slot = await self._slot(root, wait=True)
        if isinstance(slot, JSONResponse):
            raise VaultError(json.loads(slot.body)["error"]["message"])
        assert slot.vault is not None and slot.vault.idle is not None
        slot.vault.idle.touch()
        return slot.vault.service

    async def _slot(self, root: Path, wait: bool, within: float = 0.0) -> Slot | JSONResponse:
        """The open vault, opening it when needed; without `wait` a vault still opening `within` seconds is a
        503 (ask again)."""
        while True:
            if self.exiting:
                return error("Unavailable", "the memdir server is exiting; ask again", OPENING)
            slot = self.slots.get(root)
            if slot is None:
                refused = uninitialized(root)
                if refused is not None:
                    return error("NotFoundError", refused, 404)
                slot = self._open(root)
            if slot.closing:
                await slot.closed.wait()  # then open it afresh
                continue
            if not slot.ready.is_set():
                if not wait:
                    with anyio.move_on_after(within):
                        await slot.ready.wait()
                    if not slot.ready.is_set():
                        return error("Opening", f"the memdir server is opening {root}; ask again", OPENING)
                    continue  # opened meanwhile (or failed, or is closing): look again
                await slot.ready.wait()
            if slot.failure is not None:
                if self.slots.get(root) is slot:
                    del self.slots[root]  # told once: the next request tries again (the user may have fixed it)
                return slot.failure
            return slot

    async def _to_vault(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        root = _named_vault(headers)
        if root is None:
            return await error("ValidationError", f"name the vault in {VAULT_HEADER}", 400)(scope, receive, send)
        path = scope.get("path", "")
        hook = path.startswith("/api/hook/")
        kind, raw, unspooled, at = path.removeprefix("/api/hook/"), b"", None, time.time_ns()
        opening = self.slots.get(root)
        if hook and (opening is None or not opening.ready.is_set() or opening.closing):
            # Read before the wait for the open (after the close, for a vault being let go): a request's body is not
            # delivered once its client has gone, and a hook may give up meanwhile (it may have spent its time waiting
            # for this server to start). An event its hook could not spool has no other copy.
            raw, receive = await read_ahead(receive, MAX_BODY)
            unspooled = unspooled_event(kind, raw)
        # A hook never waits long for a vault to open: its event is spooled (or kept here), and applied once the
        # vault is open.
        slot = await self._slot(root, wait=not hook, within=HOOK_OPEN_WAIT_SECONDS)
        if isinstance(slot, JSONResponse):
            if unspooled is not None:
                self._keep_unspooled(root, kind, unspooled, len(raw), at)
            return await slot(scope, receive, send)
        if not path.startswith("/api/"):  # the MCP endpoint, built after the hooks are served
            slot.mcp_wanted.set()
            await slot.mcp_ready.wait()
            if slot.closing:
                return await error("Unavailable", f"the memdir server is letting go of {root}; ask again",
                                   OPENING)(scope, receive, send)
            if slot.vault is None or slot.vault.mcp is None:
                return await error("ServerError", f"the MCP endpoint of {root} could not be built; see "
                                   "the server log", 500)(scope, receive, send)
        vault = slot.vault
        assert vault is not None and vault.idle is not None
        vault.idle.touch()
        slot.in_flight += 1
        # A POST is someone's request (a hook, an operation, an MCP call): the process's idle work waits while it runs
        # (in_flight.BUSY). Not an MCP client's GET, a stream it keeps open for the whole session.
        asked = BUSY.running() if scope.get("method") == "POST" else contextlib.nullcontext()
        try:
            with asked:
                await vault.asgi(scope, receive, send)
        finally:
            slot.in_flight -= 1
            vault.idle.touch()
            if not slot.in_flight:
                slot.drained.set()


def _mcp_due(slot: Slot) -> bool:
    """Whether a vault's MCP endpoint is to be built now (_start_mcp): an MCP request asks for it, or its first answer
    was given and no request has run in this process for MCP_QUIET_SECONDS (an assistant writing its answer, a session
    between prompts); or the vault is let go (nothing to build)."""
    if slot.mcp_wanted.is_set() or slot.end_mcp.is_set():
        return True
    return slot.vault is not None and slot.vault.answered() and BUSY.count() == 0 and \
        time.monotonic() - BUSY.ended_at >= MCP_QUIET_SECONDS


def _has_index(root: Path, config: Config) -> bool:
    """Whether the vault, or the user vault it reads beside it, has an index already (whose vectors its prompts want)."""
    try:
        beside = user_vault_root(config, root)
    except VaultError:
        return True  # the open says why; the host is started as before
    return any(Layout(side).current() is not None for side in (root, beside) if side is not None)


class _BuiltOnFirstRequest:
    """An ASGI app made when its first request comes. The `memdir ui` pages (and markdown-it under them) were 60 ms
    of a cold server's imports before its first hook answer (bench/results/sessions.md, "a cold start's seconds")."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._app: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self._app is None:
            self._app = self._build()  # on the event loop: two first requests cannot both build it
        await self._app(scope, receive, send)


def _web_app(auth: WebAuth, service_for: Callable[[Path], Any]) -> Any:
    from ..web.routes import web_app

    return web_app(auth, service_for)


def _web_page(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


def _named_vault(headers: Any) -> Path | None:
    named = headers.get(VAULT_HEADER.lower())
    return Path(os.path.realpath(unquote(named))) if named else None  # a vault reached through a symlink is the same vault


def run_server(first: Path | None = None, ready: Callable[[ServerInfo], None] | None = None) -> None:
    """Become this user's server (opening `first` at once), serve until no vault is left or SIGTERM."""
    server = UserServer()
    server.claim()
    server.serve(Path(os.path.realpath(first)) if first is not None else None, ready)


async def read_ahead(receive: Any, limit: int) -> tuple[bytes, Any]:
    """A request's body read now (up to just past `limit`), and a `receive` that hands it to the app again first."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            body, replayed = b"", message  # the client went away: the app is told so
            break
        chunks.append(message.get("body", b""))
        more = bool(message.get("more_body"))
        if not more or sum(map(len, chunks)) > limit:
            body = b"".join(chunks)
            replayed = {"type": "http.request", "body": body, "more_body": more}
            break
    waiting = [replayed]

    async def again() -> Any:
        return waiting.pop() if waiting else await receive()

    return body, again


def unspooled_event(kind: str, raw: bytes) -> dict[str, Any] | None:
    """A prompt or stop event its hook could not spool (it names no spool file), or None."""
    if kind not in ("prompt", "stop") or not raw or len(raw) > MAX_BODY:
        return None
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) and not isinstance(body.get("spool"), str) else None
