"""Writes that a client retries are applied once: the first result of a call is kept under the key its client sent.

A client that timed out cannot know whether its `add` or `score` was applied (the server may finish it
after the client gave up), so a plain retry would count it twice. The client makes one key per logical
call and sends it again with every retry (IDEMPOTENCY_HEADER); the server remembers the recent keys of
each vault and answers a repeated key with the first result. A call still running is waited for; a call
that failed is forgotten, so its retry runs afresh (a failed write applied nothing: score is all-or-nothing).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, Callable, TypeVar

from vault.errors import ConflictError

KEEP = 2048  # recent keys per vault
KEEP_SECONDS = 900.0  # longer than any client retries a call
WAIT_SECONDS = 300.0  # how long a repeat waits for the first of its kind to finish (the proxy's own timeout)
MAX_KEY = 128

T = TypeVar("T")


class Recent:
    """The results of the recent keyed calls of one vault."""

    def __init__(self, keep: int = KEEP, seconds: float = KEEP_SECONDS) -> None:
        self.keep, self.seconds = keep, seconds
        self._lock = threading.Lock()
        self._done: OrderedDict[tuple[str, str], tuple[float, Any]] = OrderedDict()
        self._running: dict[tuple[str, str], threading.Event] = {}

    def once(self, key: str | None, name: str, call: Callable[[], T]) -> T:
        """`call()`, unless a call named `name` with this key ran before: then its result."""
        if not key:
            return call()
        ident = (name, key[:MAX_KEY])
        while True:
            with self._lock:
                self._expire()
                if ident in self._done:
                    return self._done[ident][1]
                running = self._running.get(ident)
                if running is None:
                    running = self._running[ident] = threading.Event()
                    break
            if not running.wait(WAIT_SECONDS):
                raise ConflictError(f"the same {name} call (key {key[:16]}…) is still running; ask again later")
        try:
            result = call()
        except BaseException:
            self._finish(ident, running)
            raise
        self._finish(ident, running, (time.monotonic(), result))
        return result

    def _finish(self, ident: tuple[str, str], running: threading.Event, done: tuple[float, Any] | None = None) -> None:
        with self._lock:
            if done is not None:
                self._done[ident] = done
                while len(self._done) > self.keep:
                    self._done.popitem(last=False)
            del self._running[ident]
        running.set()

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.seconds
        while self._done and next(iter(self._done.values()))[0] < cutoff:
            self._done.popitem(last=False)
