"""The searches running on an index, so that a write that can wait lets those already asked finish first; and what the
process is doing for someone (BUSY), so that its idle work waits for quiet.

A capture's sync (group_sync.py) waits for the searches that were running when it was ready, not for every search
that comes later: under a steady stream of prompts it would otherwise wait forever.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
import time
from typing import Callable, Iterator, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class InFlight:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._tickets = itertools.count()
        self._running: set[int] = set()
        # time.monotonic() when the last search ended (the index's idle work waits for quiet); the open counts as one
        self.ended_at = time.monotonic()

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


# What this process is doing for someone, whichever vault: the server's requests (process.py) and any index's writes
# (Index.sync, reconcile). Process-wide because the interpreter is: work done only while the process is idle
# (Index.quiet_seconds: idle_fold.py, warm_ahead.py) holds it in steps, and a prompt to one vault waited behind a
# step for another's (bench/results/s15-idle15.md).
BUSY = InFlight()


def for_someone(method: Callable[P, R]) -> Callable[P, R]:
    """`method`, with the process marked busy (BUSY) while it runs."""
    @functools.wraps(method)
    def marked(*args: P.args, **kwargs: P.kwargs) -> R:
        with BUSY.running():
            return method(*args, **kwargs)
    return marked
