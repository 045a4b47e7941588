"""The thread that merges the keyword index's small segments, off the write path (see `Index.merge_keywords`).

Each capture or edit commits its keyword documents as a new Whoosh segment without merging: merging on the
commit held the index lock up to a second under nine sessions, and the prompts of every session waited
(bench/results/sessions.md, issue 32 item 6). Here segments are merged once no keyword write came for `idle` seconds, or
at once when they pass `bound` (many segments slow every keyword search down); searches go on meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time

from .index import SEGMENTS_BOUND, Index

log = logging.getLogger("memdir.merger")
IDLE_SECONDS = 2.0  # no keyword write for this long: the index is idle, merge now


class SegmentMerger:
    def __init__(self, index: Index, idle: float = IDLE_SECONDS, bound: int = SEGMENTS_BOUND) -> None:
        self.index = index
        self.idle = idle
        self.bound = bound
        self.merges = 0  # merges made, for tests and benchmarks
        self._stop = threading.Event()
        self._done = threading.Condition()  # notified after each look at the segments
        self._settled = True
        self._thread = threading.Thread(target=self._run, name="memdir-merger", daemon=True)

    def start(self) -> "SegmentMerger":
        self.index.merge_later = True
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Let a merge in hand finish; writes then merge for themselves past the bound."""
        self._stop.set()
        self.index.merge_wanted.set()
        self._thread.join(timeout)
        self.index.merge_later = False

    def wait_settled(self, timeout: float) -> bool:
        """Block until the merger has nothing left to do (bounded): no merge wanted, and the last one done."""
        with self._done:
            return self._done.wait_for(lambda: self._settled and not self.index.merge_wanted.is_set(), timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.index.merge_wanted.wait()
            if self._stop.is_set():
                return
            self._set_settled(False)
            try:
                self._merge_when_due()
            except Exception:  # noqa: BLE001 - a disk failure must not kill the server; the next write asks again
                log.exception("merging keyword segments failed")
                self._stop.wait(5.0)
            self._set_settled(True)

    def _merge_when_due(self) -> None:
        """Wait for the index to be idle (or the segments to pass the bound), then merge; again while writes left
        new segments meanwhile."""
        while not self._stop.is_set():
            self.index.merge_wanted.clear()
            quiet = time.monotonic() - self.index.keyword_written_at
            if quiet < self.idle and self.index.keyword_segments() <= self.bound:
                self._set_settled(True)  # nothing due until the index is idle
                self.index.merge_wanted.wait(self.idle - quiet)  # "idle" is a span of time; a write wakes it earlier
                self._set_settled(False)
                continue
            started = time.perf_counter()
            merged = self.index.merge_keywords()
            if merged:
                self.merges += 1
                log.info("merged %d keyword segments in %.0f ms", merged, (time.perf_counter() - started) * 1000)
            if not merged or self.index.keyword_segments() <= 1:
                return

    def _set_settled(self, settled: bool) -> None:
        with self._done:
            self._settled = settled
            self._done.notify_all()
