"""The thread that decodes, after a served vault's first answer, what a search would otherwise decode the first time
it reads it: the most frequent terms' keyword postings, then the manifest rows an open left as rows.

A search decodes a term's posting lists the first time the term is asked (~1 µs a posting), and a memory's manifest row
the first time it reads the memory (~28 µs a row; lazy_rows.py). At 100k memories the two were ~5.5 and ~3 ms of each
search in a first pass over 200 questions after an open, nothing in the second (bench/results/s13-fast100k.md). Here
they are decoded ahead: after the first answer (which must not wait for it: a cold open's target is its first answer),
in small steps behind the searches running, so a search waits at most for one step.
"""

from __future__ import annotations

import logging
import threading
import time

from .index import Index

log = logging.getLogger("memdir.ahead")
ANSWER_LOOK_SECONDS = 0.1


class WarmAhead:
    def __init__(self, index: Index) -> None:
        self.index = index
        self.postings = 0  # keyword postings decoded ahead
        self.rows = 0  # manifest rows decoded ahead
        self.done = threading.Event()  # decoded, given up, or stopped
        self._stop = threading.Event()
        self._begun = False  # past waiting for the first answer: the index is read, and `stop` waits for it
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="memdir-warm-ahead", daemon=True)

    def start(self) -> "WarmAhead":
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the decoding (what was decoded stays); returns once the index is no longer read."""
        with self._lock:
            self._stop.set()
            begun = self._begun
        if begun:
            self._thread.join()
        # else it is waiting for a first answer, reads nothing, and ends at its next look

    def _run(self) -> None:
        try:
            # The first answer is a search's event, not waitable together with the stop: looked at in slices.
            while not self.index.answered.wait(ANSWER_LOOK_SECONDS):
                if self._stop.is_set():
                    return
            with self._lock:
                if self._stop.is_set():
                    return
                self._begun = True
            started = time.perf_counter()
            self.postings = self.index.warm_postings(self._stop.is_set)
            self.rows = self.index.decode_rows_ahead(self._stop.is_set)
            log.info("decoded ahead: %d keyword postings, %d manifest rows, in %.1f s", self.postings, self.rows,
                     time.perf_counter() - started)
        except Exception:  # noqa: BLE001 - only a first search's speed is at stake: it decodes what it needs itself
            log.exception("decoding ahead failed")
        finally:
            self.done.set()
