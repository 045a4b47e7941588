"""The thread that decodes, while a served vault is idle, what a search would otherwise decode the first time it reads
it: the most frequent terms' keyword postings, then the manifest rows an open left as rows.

A search decodes a term's posting lists the first time the term is asked (~1 µs a posting), and a memory's manifest row
the first time it reads the memory (~28 µs a row; lazy_rows.py). At 100k memories the two were ~5.5 and ~3 ms of each
search in a first pass over 200 questions after an open, nothing in the second (bench/results/s13-fast100k.md).

Decoded after the first answer beside the prompts, they cost the prompt hook: each step holds the interpreter, and a
cold start's prompts come in the seconds after the open (p95 ~93 -> 134-151 ms at 10k; s14-touch14.md). So here they
are decoded only while the index is idle as its idle fold decides it (`Index.quiet_seconds`: no search, request or sync
in flight in the process, none for `quiet` seconds), in steps of at most ~0.5 ms, each preceded by a look: once a
request comes, the decoding waits for the next quiet span. A user's prompts come seconds apart (the assistant answers
in between), and the decoding takes a few CPU seconds at 100k memories.
"""

from __future__ import annotations

import logging
import threading
import time

from .index import Index

log = logging.getLogger("memdir.ahead")
QUIET_SECONDS = 1.0  # idle this long before a step: a burst of prompts (nine sessions) is never interrupted
NAP_SECONDS = 0.0001


class WarmAhead:
    def __init__(self, index: Index, quiet: float = QUIET_SECONDS) -> None:
        self.index = index
        self.quiet = quiet
        self.postings = 0  # keyword postings decoded ahead
        self.rows = 0  # manifest rows decoded ahead
        self.held_back = 0  # times a step waited for the index to be idle, for tests and benchmarks
        self.done = threading.Event()  # decoded, given up, or stopped
        self._looked = threading.Condition()  # notified when a step is held back
        self._stop = threading.Event()
        self._loads = index.loads  # the index's generation being decoded (Index.loads)
        self._thread = threading.Thread(target=self._run, name="memdir-warm-ahead", daemon=True)

    def start(self) -> "WarmAhead":
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the decoding (what was decoded stays); returns once the index is no longer read: the thread is in a
        step of under a millisecond or waiting for quiet."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def wait_held_back(self, times: int, timeout: float) -> bool:
        """Block until a step was held back `times` times (bounded); for tests."""
        with self._looked:
            return self._looked.wait_for(lambda: self.held_back >= times, timeout)

    def _go_on(self) -> bool:
        """Before each step: wait until the index has been idle `quiet` seconds; False once stopped, or once a swap
        put another generation in place of the one being decoded (its readers held the replaced segments' deleted
        files open, waiting with them, and what they decoded went to a closed index's cache: review of session 16)."""
        while not self._stop.is_set() and self.index.loads == self._loads:
            # The interpreter let go between two steps: a thread woken meanwhile (a request's) takes it now, not after
            # the 5 ms switch interval a thread waits before it makes a running one let go.
            time.sleep(NAP_SECONDS)
            wait = self.quiet - self.index.quiet_seconds()
            if wait <= 0:
                return True
            with self._looked:
                self.held_back += 1
                self._looked.notify_all()
            self._stop.wait(wait)  # quiet is a span of time since the last use; a stop ends the wait at once
        return False

    def _run(self) -> None:
        try:
            started = time.perf_counter()
            while True:
                self._loads = self.index.loads
                self.postings += self.index.warm_postings(self._go_on)
                self.rows += self.index.decode_rows_ahead(self._go_on)
                if self._stop.is_set() or self.index.loads == self._loads:
                    break  # else a swap (`memdir reindex`) ended it on the generation it replaced: the new one's turn
            if not self._stop.is_set():
                log.info("decoded ahead while idle: %d keyword postings, %d manifest rows, %.1f s after the start",
                         self.postings, self.rows, time.perf_counter() - started)
        except Exception:  # noqa: BLE001 - only a first search's speed is at stake: it decodes what it needs itself
            log.exception("decoding ahead failed")
        finally:
            self.done.set()
