"""The thread that decodes the most frequent terms' keyword postings after a served vault's first answer.

A search decodes a term's posting lists the first time the term is asked (~1 µs a posting); at 100k memories that was
~6 ms of each search in the first pass over 200 questions after an open, nothing in the second (bench/results/
s13-fast100k.md). Here the longest lists, the common words', are decoded ahead: after the first answer (which must not
wait for it: a cold open's target is its first answer), block by block behind the searches running, so a search waits
at most for one block of ~128 postings.
"""

from __future__ import annotations

import logging
import threading
import time

from .index import Index

log = logging.getLogger("memdir.postings")
ANSWER_LOOK_SECONDS = 0.1


class PostingsWarmer:
    def __init__(self, index: Index) -> None:
        self.index = index
        self.warmed = 0  # postings decoded ahead
        self.done = threading.Event()  # warmed, given up, or stopped
        self._stop = threading.Event()
        self._begun = False  # past waiting for the first answer: the index is read, and `stop` waits for it
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="memdir-postings-warm", daemon=True)

    def start(self) -> "PostingsWarmer":
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the warming (what was decoded stays cached); returns once the index is no longer read."""
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
            self.warmed = self.index.warm_postings(self._stop.is_set)
            log.info("%d keyword postings decoded ahead in %.1f s", self.warmed, time.perf_counter() - started)
        except Exception:  # noqa: BLE001 - only a first search's speed is at stake: it decodes what it needs itself
            log.exception("decoding keyword postings ahead failed")
        finally:
            self.done.set()
