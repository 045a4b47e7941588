"""A starting server's inbox for the hook events no spool could take. Standard library only.

A hook writes every prompt and Stop event to a spool before it asks the server (clients/hooks.py). When neither the
vault's spool nor the user's spare one can be written (a full disk, an unwritable runtime folder) and no server
listens, the event has no other copy: the hook waited for the server it started to listen, up to 3 s from its own
start, and on a loaded machine a cold server's imports take longer than that (it listened 5.45 s after the first
prompt at load 8-13, bench/results/s21-lead.md): the event was lost. So the server's first step, before its imports,
is to take the process lock and open this inbox: a Unix socket in the user's private folder, answered by a thread of
its own while the main thread imports. It keeps each event, with the time its hook made it (its session's order
holds), until the server serves: then they go to their vaults as the events told "opening" do (process.py), and the
inbox closes. A hook finds it within the first tenth of a second or so of the server's start instead of seconds.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

from ..client import INBOX  # in the per-user folder (0700), beside server.lock; the socket itself 0600

MAX_EVENT_BYTES = 1_100_000  # an event's request body is at most served.MAX_BODY (1 MB); its envelope a few bytes more
MAX_KEPT_BYTES = 16 * 1024 * 1024  # as process.UNSPOOLED_MAX_BYTES: past it an event is refused (its hook says so)
READ_SECONDS = 2.0  # a hook sends its event at once: a connection that dawdles is closed (the whole read, not each recv)
KEPT = b"kept\n"  # what client.hand_to_inbox reads

log = logging.getLogger("memdir.server")


class Inbox:
    """The socket and the thread that answers it; `close` ends both and returns what was kept."""

    def __init__(self, path: Path, listener: socket.socket) -> None:
        self.path = path
        self._listener = listener
        self._kept: list[tuple[int, str, str, dict[str, Any]]] = []  # (the hook's time_ns, vault, kind, body)
        self._bytes = 0
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="memdir-inbox", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls, folder: Path) -> Inbox | None:
        """The inbox of the process that holds the server lock (only it: another would unlink the live one's), or
        None when the socket cannot be made (a folder path too long for a Unix socket, say): hooks then wait for
        the server to listen, as before."""
        path = folder / INBOX
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            path.unlink(missing_ok=True)  # an earlier server's, left by a crash
            listener.bind(str(path))
            os.chmod(path, 0o600)
            listener.listen(64)
        except OSError as exc:
            listener.close()
            log.warning("no inbox for hook events at %s: %s", path, exc)
            return None
        return cls(path, listener)

    def close(self) -> list[tuple[int, str, str, dict[str, Any]]]:
        """Stop taking events (a hook that comes later finds the server listening) and return those kept, in the
        order their hooks made them."""
        with self._lock:
            self._closed = True
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self._listener.close()
        self._thread.join(READ_SECONDS + 1.0)
        with self._lock:
            return sorted(self._kept, key=lambda kept: kept[0])

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return  # closed
            with connection:
                try:
                    self._take(connection)
                except Exception as exc:  # noqa: BLE001 - one bad sender must not end the inbox for the others
                    log.warning("a hook event sent to the inbox was not kept: %s: %s", type(exc).__name__, exc)

    def _take(self, connection: socket.socket) -> None:
        if not _own_user(connection):
            raise ValueError("sent by another user")
        # One deadline for the whole read: a timeout per recv let a sender that dripped a byte a second hold the one
        # thread that answers every hook, and the events behind it waited past their hooks' budgets, then were dropped
        # unread with the socket as the server began to serve (bench/results/s23-attack23.md).
        deadline = time.monotonic() + READ_SECONDS
        data = bytearray()
        while len(data) <= MAX_EVENT_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"still sending after {READ_SECONDS:.0f} s")
            connection.settimeout(left)
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
        if len(data) > MAX_EVENT_BYTES:
            raise ValueError(f"over {MAX_EVENT_BYTES:,} bytes")
        sent = json.loads(data)
        at, vault, kind, body = int(sent["at"]), str(sent["vault"]), str(sent["event"]), sent["payload"]
        if kind not in ("prompt", "stop") or not isinstance(body, dict) or not os.path.isabs(vault):
            raise ValueError("not a prompt or Stop event of a vault")
        with self._lock:
            if self._closed:
                return  # the server listens now: no answer, and the hook hands it over there
            if self._bytes + len(data) > MAX_KEPT_BYTES:
                raise ValueError(f"{self._bytes:,} bytes are kept already")
            self._kept.append((at, vault, kind, body))
            self._bytes += len(data)
        connection.sendall(KEPT)


def _own_user(connection: socket.socket) -> bool:
    """Whether the peer runs as this user (the folder is 0700 already; this says so where the OS tells)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    _pid, uid, _gid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return uid == os.getuid()


_early: tuple[int, Inbox | None] | None = None  # the process lock's descriptor and the inbox, taken by open_early


def open_early() -> None:
    """`memdir serve`'s first step, before it imports the server: take this user's server lock (without waiting: a
    server that holds it is running or exiting, and UserServer.claim deals with that as before) and open the inbox.
    The lock first: only its holder may replace the inbox's socket."""
    global _early
    import fcntl

    from ..client import PROCESS_LOCK, own_folder

    try:
        folder = own_folder()
        fd = os.open(folder / PROCESS_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return  # said by the server's own claim, which tries again
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return
    _early = (fd, Inbox.open(folder))


def early_claim() -> tuple[int, Inbox | None] | None:
    """What open_early took (the lock's descriptor, the inbox), handed to the server once; None when it took none."""
    global _early
    taken, _early = _early, None
    return taken
