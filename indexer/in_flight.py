"""The searches running on an index, so that a write that can wait lets those already asked finish first.

A capture's sync (group_sync.py) waits for the searches that were running when it was ready, not for every search
that comes later: under a steady stream of prompts it would otherwise wait forever.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from typing import Iterator


class InFlight:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._tickets = itertools.count()
        self._running: set[int] = set()
        self.ended_at = 0.0  # time.monotonic() when the last search ended (the index's idle work waits for quiet)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        with self._changed:
            ticket = next(self._tickets)
            self._running.add(ticket)
        try:
            yield
        finally:
            with self._changed:
                self._running.discard(ticket)
                self.ended_at = time.monotonic()
                self._changed.notify_all()

    def wait_for_running(self, timeout: float) -> bool:
        """Wait (at most `timeout` seconds) until every search running now has ended; True when they did."""
        with self._changed:
            ready = next(self._tickets)  # tickets are taken in order: the ones below this one are running now
            return self._changed.wait_for(lambda: not any(t < ready for t in self._running), timeout=timeout)

    def count(self) -> int:
        with self._changed:
            return len(self._running)
