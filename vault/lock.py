"""File locks: the sidecar lock that serializes memdir's own writers, across threads and processes,
and the one way memdir takes and drops a flock (the index's owner, a served vault, the server, the
embedding host). Only mcp_server/client.py keeps its two raw flocks: the hooks import it and no vault/.

Humans and git never take the write lock; the compare-and-swap in `vault.write` covers them. It
only keeps two memdir writers from interleaving their read-modify-write cycles.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import LockTimeout

LOCK_NAME = ".memdir/locks/write.lock"
GATE_NAME = ".memdir/locks/write.gate"  # the queue in front of the lock; see WriteLock._acquire_file


class WriteLock:
    """Re-entrant within a thread; exclusive between threads and between processes (flock)."""

    def __init__(self, vault_root: Path, timeout: float = 30.0) -> None:
        self.path = vault_root / LOCK_NAME
        self.gate = vault_root / GATE_NAME
        self.timeout = timeout
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        deadline = time.monotonic() + self.timeout
        if not self._thread_lock.acquire(timeout=self.timeout):
            raise LockTimeout(f"another writer in this process held {self.path} for {self.timeout:.0f} s")
        try:
            if self._depth == 0:
                self._fd = self._acquire_file(deadline)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    release(self._fd)
                    self._fd = None
        finally:
            self._thread_lock.release()

    def _acquire_file(self, deadline: float) -> int:
        """The lock file's fd, held exclusively.

        flock hands nothing over: on release every waiter is woken and races for it, and a writer
        that re-takes the lock at once wins nearly every race (on one 2-core VM a waiter starved
        past 2 s in 4 of 5 runs). So writers pass a gate first: a waiter holds the gate while it
        waits for the lock, and the holder, to take the lock again, must pass the gate behind it.
        The gate itself is a plain flock, so among several waiters the order is whoever wins it,
        but only the gate's holder ever competes for the lock.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        gate = _locked(self.gate, deadline)
        if gate is None:
            raise LockTimeout(f"other memdir writers queued at {self.gate} for {self.timeout:.0f} s; is a writer stuck?")
        try:
            fd = _locked(self.path, deadline)
        finally:
            release(gate)
        if fd is None:
            raise LockTimeout(f"another memdir process held {self.path} for {self.timeout:.0f} s; is a writer stuck?")
        return fd


def open_lock_file(path: Path) -> int:
    """A descriptor on `path` to flock, the file created readable by this user only."""
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def try_flock(fd: int) -> bool:
    """Take the exclusive flock on `fd` without waiting: False when another descriptor holds it.
    Any other failure (ENOLCK, a bad descriptor) raises: it says nothing about a holder."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def try_lock(path: Path) -> int | None:
    """A descriptor holding the exclusive flock on `path` (created if missing), or None while another holds it."""
    return _held_or_closed(open_lock_file(path))


def _held_or_closed(fd: int) -> int | None:
    """`fd` once it holds its file's exclusive flock; None, `fd` closed, while another holds it."""
    try:
        if try_flock(fd):
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


def still_named(fd: int, path: Path) -> bool:
    """Whether `path` still names the file `fd` is open on. A lock file deleted under its holder (`rm -rf .memdir`,
    `git clean -fdX`) keeps the holder's flock, but the next process to open the path makes a new file nobody holds."""
    try:
        named = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def renewed(fd: int, path: Path) -> int | None:
    """The descriptor to hold `path`'s lock by from now on: `fd` while the path still names its file; else the file
    the path names now (made again if it is missing), taken, and `fd` released; None (and `fd` released) when
    another process holds that new file already: the lock is that process's now."""
    if still_named(fd, path):
        return fd
    path.parent.mkdir(exist_ok=True)  # not its parents: a vault folder deleted whole is not made again by its lock
    taken = try_lock(path)
    release(fd)
    return taken


def try_lock_folder(folder: Path) -> int | None:
    """A descriptor holding the exclusive flock on the folder itself, or None while another holds it. Deleting what
    is inside does not take it away. An OSError where the file system cannot flock a folder."""
    return _held_or_closed(os.open(folder, os.O_RDONLY | os.O_DIRECTORY))


def release(fd: int) -> None:
    """Drop the flock held through `fd` and close it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _locked(path: Path, deadline: float) -> int | None:
    """An fd holding an exclusive flock on `path`, or None when `deadline` passed first."""
    fd = open_lock_file(path)
    try:
        if try_flock(fd):
            return fd
        # A poller that sleeps between tries starved for 30 s behind writers that re-take the lock at
        # once; a blocked flock is woken on release. It blocks in a helper thread, so the wait stays
        # bounded by the deadline. (An abandoned wait closes the fd itself, once it gets the lock.)
        waiting = _BlockingFlock(fd)
    except BaseException:
        os.close(fd)  # ENOLCK, no thread to wait in...: the error, not a leaked descriptor
        raise
    return fd if waiting.wait(deadline - time.monotonic()) else None


class _BlockingFlock:
    """A blocking flock on `fd` in a daemon thread. If the caller gives up first, the thread closes the
    fd (releasing the lock the moment it gets it), so an abandoned wait never keeps the lock."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._guard = threading.Lock()
        self._done = threading.Event()
        self._abandoned = False
        self._error: OSError | None = None
        threading.Thread(target=self._run, name="memdir-write-lock", daemon=True).start()

    def _run(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError as exc:
            self._error = exc
        with self._guard:
            self._done.set()
            if self._abandoned:
                os.close(self.fd)

    def wait(self, timeout: float) -> bool:
        """True when the lock is held through `fd` (now the caller's); False if `timeout` ran out."""
        self._done.wait(max(timeout, 0.0))
        with self._guard:
            if not self._done.is_set():
                self._abandoned = True
                return False
        if self._error is not None:
            os.close(self.fd)
            raise self._error
        return True
