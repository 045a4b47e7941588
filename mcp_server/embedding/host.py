"""One embedding model per user: a small host process that every vault server asks for vectors.

The model and its runtime were most of a vault server's memory (736 MB for the example vault, of which
about 110 MB is memdir, FAISS, Whoosh and the web stack). Five open projects used to mean five
copies. Vault servers now send texts to this host and keep everything else - indices, watcher,
write lock, token - to themselves; the host keeps nothing: texts in, vectors out, no cache, no
log of what it saw, so no project's text reaches another.

Both ends are here. The host is `python -m mcp_server embed-host`, standard library HTTP on
127.0.0.1 with a per-start bearer token; its address and token are in `embedder.json` (0600) in
the per-user registry folder (see server/registry.py), next to the `embedder.lock` it holds while it
lives. `SharedEmbedder` is the vault server's side: it starts the host when none runs (one start
for many concurrent callers), and starts it again when it went away (idle exit, killed).
"""

from __future__ import annotations

import argparse
import hmac
import http.client
import json
import logging
import os
import secrets
import socket
import sys
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from vault import atomic
from vault.errors import VaultError
from vault.lock import release, try_lock

from .. import client
from ..waiting import attempts
from ..rss import rss_mb

log = logging.getLogger("memdir.embed_host")

MODEL_ID = "all-MiniLM-L6-v2"
DIM = 384
ADDRESS_FILE = "embedder.json"
LOCK_FILE = "embedder.lock"
START_LOCK = "embedder.start.lock"
LOG_FILE = "embedder.log"
# Connections a vault server keeps open to the host between calls: one for each of the few threads that embed at
# once (a search, a capture, the backfill); more at once get a connection of their own, closed after the call.
KEPT_CONNECTIONS = 4
REQUEST_SECONDS = 60.0  # how long a vault server waits for the host's answer to one request
BATCH = 256  # texts per request: bounds a request's body and the host's working memory
MAX_BODY = 64 * 1024 * 1024
# How much lower documents run than queries (a thread's nice value, Linux). Nine sessions each capturing an
# exchange every turn kept the host's document batches on both cores while every prompt's query waited its turn
# for a core: a prompt hook's p95 was the CPU queue (bench/results/sessions.md, "the prompt ahead of the captures"). At
# nice 5 the scheduler gives a busy query thread about three times a document thread's share; an idle machine still
# embeds documents at full speed.
DOCUMENTS_NICE = 5


EXITING = "the memdir server is exiting; it starts no embedding host"


class EmbedderUnavailable(VaultError):
    """The shared embedding host could not be started or reached: memdir's error like any other (the API answers it
    as 503 with its reason, a tool or a page says it), not a server bug."""


@dataclass(frozen=True)
class HostInfo:
    pid: int
    port: int
    token: str
    started: float

    @staticmethod
    def read(folder: Path | None = None) -> HostInfo | None:
        try:
            data = json.loads(((folder or client.servers_folder()) / ADDRESS_FILE).read_text())
            return HostInfo(int(data["pid"]), int(data["port"]), str(data["token"]), float(data["started"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None


def running(folder: Path | None = None) -> HostInfo | None:
    """The live host's address, or None (a stale file of a killed host is ignored)."""
    info = HostInfo.read(folder)
    return info if info is not None and _alive(info.pid) and _lock_held(folder or client.servers_folder()) else None


def _alive(pid: int) -> bool:
    return client.process_alive(pid)


def _lock_held(folder: Path) -> bool:
    return client.lock_held(folder / LOCK_FILE)


def request(info: HostInfo, method: str, path: str, body: bytes | None = None,
            timeout: float = REQUEST_SECONDS) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", info.port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers={"Authorization": f"Bearer {info.token}",
                                                             "Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _connect(info: HostInfo, timeout: float) -> http.client.HTTPConnection:
    """A connection to the host, with small writes sent at once: a request's headers and body go out in two writes,
    and with Nagle's algorithm the second waited for the host's delayed ACK (40 ms a call on a kept connection)."""
    connection = http.client.HTTPConnection("127.0.0.1", info.port, timeout=timeout)
    connection.connect()
    assert connection.sock is not None
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def _post(connection: http.client.HTTPConnection, info: HostInfo, path: str,
          body: bytes) -> tuple[int, dict[str, str], bytes]:
    _send(connection, info, path, body)
    return _answer(connection)


def _send(connection: http.client.HTTPConnection, info: HostInfo, path: str, body: bytes) -> None:
    connection.request("POST", path, body=body, headers={"Authorization": f"Bearer {info.token}",
                                                         "Content-Type": "application/json"})


class _CutShort(http.client.HTTPException):
    """The host's answer began and broke off: the host died midway. A killed host's end comes early (IncompleteRead),
    or, with bytes of the request still unread in its socket, resets the connection (ConnectionResetError, which
    _CLOSED also holds): either way not a kept connection closed before any answer, to ask again of the same host."""


def _answer(connection: http.client.HTTPConnection) -> tuple[int, dict[str, str], bytes]:
    response = connection.getresponse()  # _CLOSED here: no answer began
    try:
        data = response.read()
    except TimeoutError:
        raise
    except (OSError, http.client.HTTPException) as exc:
        raise _CutShort(f"the host's answer broke off ({type(exc).__name__})") from exc
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def _vectors(status: int, headers: dict[str, str], data: bytes) -> np.ndarray:
    if status != 200:
        raise EmbedderUnavailable(f"the memdir embedding host answered {status}: {data[:200].decode(errors='replace')}")
    rows, dim = (int(n) for n in headers["x-shape"].split(","))
    return np.frombuffer(data, dtype=np.float32).reshape(rows, dim).copy()


# A kept connection the host closed meanwhile (idle past its handler's timeout, or a restart): seen as one of these
# when it is used again, before any answer came (one raised once the answer began is _CutShort: the host died).
_CLOSED = (http.client.RemoteDisconnected, http.client.CannotSendRequest, BrokenPipeError, ConnectionResetError,
           ConnectionAbortedError)


def _close_kept(kept: list[tuple[HostInfo, http.client.HTTPConnection]]) -> None:
    for _, connection in kept:
        connection.close()
    kept.clear()


# -- the vault server's side --------------------------------------------------------------------


class SharedEmbedder:
    """An Embedder whose model lives in the per-user host; it starts the host when none runs."""

    id = MODEL_ID
    dim = DIM

    def __init__(self, idle_exit_seconds: float = 1800.0, start_timeout: float = 120.0,
                 int8_long_queries: bool = False, int8_documents: bool = False) -> None:
        self.idle_exit_seconds = idle_exit_seconds
        self.start_timeout = start_timeout
        self.int8_long_queries = int8_long_queries  # asked of the host with each query ([search] int8_long_queries)
        self.int8_documents = int8_documents  # and with each batch of documents ([search] int8_documents)
        self._lock = threading.Lock()
        self._info: HostInfo | None = None
        # Set when the server exits: an Event, not a flag under _lock, which a host's start holds for as long as the
        # model loads (the server's signal handler, on its event loop, waited that long to set it).
        self._closing = threading.Event()
        # Connections to the host kept open between calls (at most KEPT_CONNECTIONS), each with the host it reaches.
        # A new connection a call cost a TCP handshake and a new host thread: a query's 4.8 ms was 4.0 on a kept
        # one, its p95 6.5 -> 5.2 ms, where the model in-process takes 3.9 / 5.4 (bench/results/s14-lead.md).
        self._kept: list[tuple[HostInfo, http.client.HTTPConnection]] = []
        self._kept_lock = threading.Lock()
        weakref.finalize(self, _close_kept, self._kept)  # an embedder dropped unclosed leaves no socket open

    def close(self) -> None:
        """The server is exiting: from now on no call starts a host (a backfill still running at `memdir stop
        --all` would otherwise start a fresh one after the old host was stopped, and leave it behind), and a call
        waiting for one to start stops waiting. Returns at once."""
        self._closing.set()

    def warm(self) -> threading.Thread:
        """Start the host in the background (a server does this while it loads its indices). Its int8 graph is not
        built here: the host builds it at the first long query (answered in float32 meanwhile) or int8 document."""
        thread = threading.Thread(target=self._safe_host, name="embed-host-warm", daemon=True)
        thread.start()
        return thread

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        parts = [self._call(list(texts[i:i + BATCH]), query=False) for i in range(0, len(texts), BATCH)]
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def embed_query(self, text: str) -> np.ndarray:
        return self._call([text], query=True)[0]

    def start_query(self, text: str) -> _SentQuery | None:
        """The query's request sent now, from the calling thread, and its vector read when `result` is asked: a
        search does its keyword work meanwhile (indexer/search.py, `_started`). None while no host is known to run
        (starting one can take seconds, and a hook's search waits only so long), or when the request cannot be sent:
        then `embed_query` does it all."""
        info = self._info
        if info is None or self._closing.is_set():
            return None
        body = _body([text], True, self.int8_long_queries)
        for connection in (self._take_kept(info), None):  # a kept one the host has closed: a new one, once
            try:
                connection = connection or _connect(info, REQUEST_SECONDS)
                _send(connection, info, "/embed", body)
                return _SentQuery(self, info, connection, text)
            except (OSError, http.client.HTTPException):
                if connection is not None:
                    connection.close()
        return None

    # -- internals ---------------------------------------------------------------------

    def _safe_host(self) -> None:
        try:
            self._host()
        except EmbedderUnavailable as exc:
            log.warning("%s", exc)

    def _call(self, texts: list[str], query: bool) -> np.ndarray:
        one_query = query and len(texts) == 1
        body = _body(texts, query, self.int8_long_queries if one_query else self.int8_documents)
        for attempt in (1, 2):
            info = self._host()
            try:
                status, headers, data = self._embed_request(info, body)
            except (OSError, http.client.HTTPException):  # a host killed midway through its answer: _CutShort
                if attempt == 2:
                    raise EmbedderUnavailable("the memdir embedding host stopped answering") from None
                self._forget(info)  # it exited (idle, killed): start it again once
                continue
            return _vectors(status, headers, data)
        raise AssertionError("unreachable")

    def _embed_request(self, info: HostInfo, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """POST /embed on a kept connection to `info`'s host, or a new one. One the host closed meanwhile is made
        again once (the same texts sent twice give the same vectors)."""
        kept = self._take_kept(info)
        if kept is not None:
            try:
                answer = _post(kept, info, "/embed", body)
                self._keep(info, kept)
                return answer
            except _CLOSED:
                kept.close()
            except BaseException:
                kept.close()
                raise
        connection = _connect(info, REQUEST_SECONDS)
        try:
            answer = _post(connection, info, "/embed", body)
        except BaseException:
            connection.close()
            raise
        self._keep(info, connection)
        return answer

    def _take_kept(self, info: HostInfo) -> http.client.HTTPConnection | None:
        with self._kept_lock:
            stale = [connection for reaches, connection in self._kept if reaches != info]  # a host since replaced
            self._kept[:] = [(reaches, connection) for reaches, connection in self._kept if reaches == info]
            kept = self._kept.pop()[1] if self._kept else None
        for connection in stale:
            connection.close()
        return kept

    def _keep(self, info: HostInfo, connection: http.client.HTTPConnection) -> None:
        with self._kept_lock:
            if len(self._kept) < KEPT_CONNECTIONS:
                self._kept.append((info, connection))
                return
        connection.close()

    def _forget(self, info: HostInfo) -> None:
        """`info`'s host stopped answering: the next call looks for the host again (and starts one if none runs)."""
        with self._lock:
            if self._info == info:
                self._info = None

    def _host(self) -> HostInfo:
        with self._lock:
            if self._info is not None and _alive(self._info.pid):
                return self._info
            if self._closing.is_set():
                raise EmbedderUnavailable(EXITING)
            self._info = ensure_host(self.idle_exit_seconds, self.start_timeout, self._closing)
            return self._info


def _body(texts: list[str], query: bool, int8: bool) -> bytes:
    """A request for `texts`' vectors; `int8` asks for the int8 graph (the host serves vaults of either setting)."""
    return json.dumps({"texts": texts, "query": query, **({"int8": True} if int8 else {})}).encode()


# Queries whose kept connection the host had closed, asked again with embed_query's retries and host start.
_ASKED_AGAIN = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memdir-query-again")


class _SentQuery:
    """A query whose request is on its way to the host: `result` reads the answer on the calling thread. A kept
    connection the host had closed is found out here: the query is then asked again, from the start."""

    def __init__(self, embedder: SharedEmbedder, info: HostInfo, connection: http.client.HTTPConnection,
                 text: str) -> None:
        self._embedder, self._info, self._connection, self._text = embedder, info, connection, text
        self._lock = threading.Lock()
        self._vector: np.ndarray | None = None
        self._failure: BaseException | None = None
        self._again: Future[np.ndarray] | None = None  # asked again in a thread: the host had closed the connection
        # A search that needs no vector after all (a vague question) never asks: its connection is closed then.
        self._unread = [(info, connection)]
        weakref.finalize(self, _close_kept, self._unread)

    def result(self, timeout: float | None = None) -> np.ndarray:
        with self._lock:
            if self._vector is None and self._failure is None and self._again is None:
                self._read(timeout)
            if self._again is not None:
                return self._again.result(timeout)  # within the same bound: a host restarted may take seconds
            if self._failure is not None:
                raise self._failure
            assert self._vector is not None
            return self._vector

    def _read(self, timeout: float | None) -> None:
        connection = self._connection
        self._unread.clear()  # read now: kept or closed below
        try:
            assert connection.sock is not None
            connection.sock.settimeout(REQUEST_SECONDS if timeout is None else timeout)
            answer = _answer(connection)
            connection.sock.settimeout(REQUEST_SECONDS)
        except _CLOSED:
            connection.close()
            self._again = _ASKED_AGAIN.submit(self._embedder.embed_query, self._text)
            return
        except TimeoutError:
            connection.close()  # its answer may still come: the connection is no one's to reuse
            self._failure = TimeoutError(f"the query's vector did not come within {timeout} s")
            return
        except (OSError, http.client.HTTPException):  # a host killed midway through its answer: _CutShort
            connection.close()
            self._embedder._forget(self._info)  # asked again of the host running now (started anew if gone), as _call does
            self._again = _ASKED_AGAIN.submit(self._embedder.embed_query, self._text)
            return
        try:
            self._vector = _vectors(*answer)[0]
        except EmbedderUnavailable as exc:
            self._failure = exc
        self._embedder._keep(self._info, connection)


def ensure_host(idle_exit_seconds: float = 1800.0, timeout: float = 120.0,
                stop: threading.Event | None = None) -> HostInfo:
    """The running host, answering its health check; started and waited for when needed (bounded, and ended at
    once by `stop`: the server exiting)."""
    folder = client.servers_folder()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    child: int | None = None
    logged = 0  # the host log's length when this call started a host: its last words are written after
    for _ in attempts(timeout, until=stop):  # the host loads the model: nothing to wait on but time
        if stop is not None and stop.is_set():
            raise EmbedderUnavailable(EXITING)
        info = running(folder)
        if info is not None:
            try:
                if request(info, "GET", "/health", timeout=5.0)[0] == 200:
                    return info
            except OSError:
                pass  # bound but not answering yet
        elif child is None and not _lock_held(folder):
            logged = client.log_size(folder / LOG_FILE)
            child = _start(folder, idle_exit_seconds)
        elif child is not None and child > 0 and not _alive_child(child) and not _lock_held(folder):
            raise EmbedderUnavailable(f"the memdir embedding host exited while starting{_last_words(folder / LOG_FILE, logged)}; "
                                      f"see {folder / LOG_FILE}")
    if stop is not None and stop.is_set():
        raise EmbedderUnavailable(EXITING)
    raise EmbedderUnavailable(f"the memdir embedding host did not start within {timeout:.0f} s; see {folder / LOG_FILE}")


def _last_words(log: Path, since: int) -> str:
    """` (<why>)`: the last line a host that died while starting wrote to its log after `since` (its exception,
    without the exception's dotted name), so the error says why (the model package missing, say); "" when none."""
    lines = client.log_tail(log, 4096, since)
    if not lines:
        return ""
    name, colon, why = lines[-1].partition(": ")
    return f" ({why if colon and name.replace('.', '').replace('_', '').isalnum() else lines[-1]})"


def _alive_child(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return _alive(pid)
    return done == 0


def _start(folder: Path, idle_exit_seconds: float) -> int:
    """Spawn the host detached, unless another caller is starting one right now (then 0)."""
    started = client.spawn_once(folder / START_LOCK, lambda: _lock_held(folder),
                                ["embed-host", "--idle-exit-seconds", str(idle_exit_seconds)], folder / LOG_FILE)
    return started or 0


# -- the host -----------------------------------------------------------------------------------


class _Host(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, model: Any, token: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.model = model
        self.token = token
        self.model_lock = threading.Lock()  # one batch of documents at a time: a batch already uses every core
        # The documents' lane: one thread at a lower priority runs every batch of documents; the model's own
        # threads for a batch are started from it and inherit its priority (Linux threads do). A query runs in
        # its request's thread, at the host's own priority.
        self.documents = ThreadPoolExecutor(1, thread_name_prefix="memdir-documents", initializer=lower_priority,
                                            initargs=(DOCUMENTS_NICE,))
        self.last_request = time.monotonic()
        self.started = time.time()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A request that failed goes to the log, not as a bare traceback on stderr. A client gone before its
        answer is not an error: a query's caller stops waiting after its budget (the search goes on by keyword)."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (BrokenPipeError, ConnectionResetError)):
            log.debug("a client left before its answer was written: %s", exc)
            return
        log.exception("a request from %s failed", client_address[0] if client_address else "?")


class _Handler(BaseHTTPRequestHandler):
    server: _Host
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 10.0  # a connection that sends nothing (or half a request) gives its thread and descriptor back

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - texts are never logged
        pass

    def _refuse(self) -> bool:
        scheme, _, credential = self.headers.get("Authorization", "").partition(" ")
        if self.headers.get("Origin") is not None:  # a browser page: never
            self._send(403, b"forbidden", "text/plain")
            return True
        port = self.server.server_address[1]
        if self.headers.get("Host", "") not in (f"127.0.0.1:{port}", f"localhost:{port}"):  # DNS rebinding, as the API
            self._send(403, b"forbidden host", "text/plain")
            return True
        if scheme.lower() != "bearer" or not hmac.compare_digest(credential.strip().encode(), self.server.token.encode()):
            self._send(401, b"unauthorized", "text/plain")
            return True
        return False

    def _send(self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        if self._refuse():
            return
        if self.path != "/health":
            self._send(404, b"not found", "text/plain")
            return
        body = {"model": MODEL_ID, "pid": os.getpid(), "rss_mb": rss_mb(os.getpid()),
                "uptime_seconds": round(time.time() - self.server.started, 1),
                "idle_seconds": round(time.monotonic() - self.server.last_request, 1)}
        self._send(200, json.dumps(body).encode(), "application/json")

    def do_POST(self) -> None:  # noqa: N802
        if self._refuse():
            return
        if self.path != "/embed":
            self._send(404, b"not found", "text/plain")
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            if not 0 < length <= MAX_BODY:
                raise ValueError(f"a request body of {length} bytes")
            data = json.loads(self.rfile.read(length))
            texts, query, int8 = data["texts"], bool(data.get("query")), data.get("int8") is True
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts) or not 0 < len(texts) <= BATCH:
                raise ValueError(f"texts must be a list of 1 to {BATCH} strings")
        except (ValueError, KeyError, TypeError) as exc:
            self._send(400, f"bad request: {exc}".encode(), "text/plain")
            return
        self.server.last_request = time.monotonic()
        if query and len(texts) == 1:
            # A query is one short text a prompt hook waits on: it runs beside a batch of documents (the ONNX
            # session takes concurrent runs) instead of queueing behind a backfill or a capture's batch.
            # int8 only when asked: the vaults this host serves may say otherwise, and a test's model has no int8 path.
            model = self.server.model
            vectors = (model.embed_query(texts[0], int8=True) if int8 else model.embed_query(texts[0]))[None, :]
        else:
            embed = partial(self.server.model.embed, int8=True) if int8 else self.server.model.embed
            with self.server.model_lock:
                vectors = self.server.documents.submit(embed, texts).result()
        self.server.last_request = time.monotonic()
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._send(200, vectors.tobytes(), "application/octet-stream", {"X-Shape": f"{vectors.shape[0]},{vectors.shape[1]}"})


def serve(idle_exit_seconds: float, model: Any = None, stop: threading.Event | None = None) -> int:
    """Run the host until it has been idle `idle_exit_seconds` (0 = never), is signalled, or `stop` is set."""
    import signal

    folder = client.servers_folder()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock_fd = try_lock(folder / LOCK_FILE)
    if lock_fd is None:
        log.info("another memdir embedding host runs for this user; not starting a second")
        return 0
    try:
        if model is None:
            from indexer.onnx_minilm import OnnxMiniLM

            from ..config import int8_override

            # int8 only when a request asks; its graph built in the background at the first long query
            model = OnnxMiniLM(int8_cache=folder, int8_in_background=True, int8_here=int8_override())
            model.embed_query("warm up")
            log.info("memdir embedding host: model loaded (%.2f CPU s since its start)", time.process_time())
        host = _Host(model, secrets.token_urlsafe(32))
        stop = stop or threading.Event()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: stop.set())
        address = {"pid": os.getpid(), "port": host.server_address[1], "token": host.token, "started": host.started}
        atomic.write_state(folder / ADDRESS_FILE, json.dumps(address).encode(), mode=0o600)
        log.info("memdir embedding host on 127.0.0.1:%d (pid %d)", host.server_address[1], os.getpid())
        threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.5}, daemon=True).start()
        while not stop.wait(min(5.0, idle_exit_seconds or 5.0)):  # polled: an idle exit may come 5 s late
            if idle_exit_seconds and time.monotonic() - host.last_request > idle_exit_seconds:
                log.info("memdir embedding host exits: idle for %.0f s", idle_exit_seconds)
                break
        host.shutdown()
        host.server_close()
        host.documents.shutdown(wait=False)
        current = HostInfo.read(folder)
        if current is not None and current.pid == os.getpid():
            (folder / ADDRESS_FILE).unlink(missing_ok=True)
        return 0
    finally:
        release(lock_fd)


def lower_priority(nice: int) -> None:
    """Lower the calling thread's CPU priority by `nice` (Linux: a thread's nice value is its own, and threads it
    starts inherit it). Elsewhere, or when refused, it runs as it was: a priority is not worth failing for."""
    if not sys.platform.startswith("linux") or nice <= 0:
        return
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + nice))
    except OSError as exc:
        log.info("documents run at the host's own priority: %s", exc)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="memdir embed-host", description="The per-user embedding host (started on demand).")
    parser.add_argument("--idle-exit-seconds", type=float, default=1800.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return serve(args.idle_exit_seconds)
