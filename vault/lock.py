"""A sidecar lock that serializes memdir's own writers, across threads and processes.

Humans and git never take it; the compare-and-swap in `vault.write` covers them. The lock
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


class WriteLock:
    """Re-entrant within a thread; exclusive between threads and between processes (flock)."""

    def __init__(self, vault_root: Path, timeout: float = 30.0) -> None:
        self.path = vault_root / LOCK_NAME
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
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                    os.close(self._fd)
                    self._fd = None
        finally:
            self._thread_lock.release()

    def _acquire_file(self, deadline: float) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockTimeout(
                        f"another memdir process held {self.path} for {self.timeout:.0f} s; is a writer stuck?"
                    ) from None
                time.sleep(delay)  # polling a held flock: the only portable way to honour a timeout
                delay = min(delay * 2, 0.05)
