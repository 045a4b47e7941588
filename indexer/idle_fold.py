"""The thread that folds the vectors' log into their snapshot while the index is idle (see `Index.settle_vectors`).

Every open replays the log before its first answer (0.5 CPU s for 112 MB at 100k memories, bench/results/
s10-firstlog10.md). The owner folds it after its open's reconcile and when it closes, but a server that runs for days
and is then killed left the whole session's log. Here it is folded once the index was idle for `idle` seconds (no
search, request or sync in flight in the process, no vector changed: `Index.quiet_seconds`): a fold rewrites the whole
snapshot (~0.5 GB at 100k, 1-3 s), too much to do between two prompts, while a pause of a minute is one a session's
user is away. A search or a sync that comes during the fold is not held up
(only its ~0.1 s copy of the searched part holds the vectors' lock); a sync makes it give up, to try at the next pause.
"""

from __future__ import annotations

import logging
import threading

from .index import Index
from .vectors import SETTLE_SHARE

log = logging.getLogger("memdir.fold")
IDLE_SECONDS = 60.0
LOOK_AGAIN_SECONDS = 5.0


class IdleFold:
    def __init__(self, index: Index, idle: float = IDLE_SECONDS) -> None:
        self.index = index
        self.idle = idle
        self.folds = 0  # folds made, for tests and benchmarks
        self._stop = threading.Event()
        self._wake = threading.Event()  # set after a sync: the log may have grown
        self._done = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="memdir-idle-fold", daemon=True)

    def start(self) -> "IdleFold":
        self._thread.start()
        return self

    def log_grew(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        """Give up a fold under way (its temp files are removed, the log stays) and end the thread."""
        self._stop.set()
        self._wake.set()
        self._thread.join()

    def wait_folds(self, count: int, timeout: float) -> bool:
        """Block until `count` folds were made (bounded); for tests and benchmarks."""
        with self._done:
            return self._done.wait_for(lambda: self.folds >= count, timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            due_in = self._due_in()
            if due_in is None or due_in > 0:
                # Within its share: look again after the next sync, or a while later (the backfill writes vectors too).
                self._wake.wait(max(self.idle, LOOK_AGAIN_SECONDS) if due_in is None else due_in)
                self._wake.clear()
                continue
            try:
                folded = self.index.settle_vectors(cancelled=self._stop.is_set)
            except Exception:  # noqa: BLE001 - a full disk: the log stays, replayed at the next open; try after a sync
                log.exception("folding the vectors' log of %s while idle failed", self.index.root)
                self._wake.wait()
                self._wake.clear()
                continue
            with self._done:
                self.folds += folded
                self._done.notify_all()
            if not folded:
                # Given up (a request came, a sync changed the vectors) or refused (a failed sync's changes wait for
                # their persist): look again later, not at once, which spun a core until a sync succeeded.
                self._wake.wait(LOOK_AGAIN_SECONDS)
                self._wake.clear()

    def _due_in(self) -> float | None:
        """Seconds until the index has been idle long enough to fold (0: now); None when the log is within its share."""
        index = self.index
        if not index.writable or index.reconcile_pending or index.log_share() <= SETTLE_SHARE:
            return None
        return max(0.0, self.idle - index.quiet_seconds())
