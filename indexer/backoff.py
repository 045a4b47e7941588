"""A retry's back-off: a step that keeps failing (a full disk) is tried again after a wait that doubles to a cap,
not at every chance the caller gets (a drain every 2 s, every edit's batch)."""

from __future__ import annotations

import threading
import time
from typing import Callable, Hashable


class Backoff:
    """The next try time of each failing key; a key not failing (or never seen) is due."""

    def __init__(self, first: float, cap: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.first, self.cap, self.clock = first, cap, clock
        self._waits: dict[Hashable, tuple[float, float]] = {}  # key -> (its last wait, not before)
        self._lock = threading.Lock()

    def failed(self, key: Hashable = None) -> bool:
        """Note a failure: the key waits `first`, then twice its last wait up to `cap`. True on its first failure
        (the one to tell the user about)."""
        with self._lock:
            last = self._waits.get(key)
            wait = self.first if last is None else min(self.cap, last[0] * 2)
            self._waits[key] = (wait, self.clock() + wait)
            return last is None

    def due(self, key: Hashable = None) -> bool:
        with self._lock:
            waiting = self._waits.get(key)
            return waiting is None or self.clock() >= waiting[1]

    def next_try(self, key: Hashable = None) -> float | None:
        """When the key is next due, on this back-off's clock; None when it is not failing (due now)."""
        with self._lock:
            waiting = self._waits.get(key)
            return None if waiting is None else waiting[1]

    def succeeded(self, key: Hashable = None) -> None:
        with self._lock:
            self._waits.pop(key, None)
