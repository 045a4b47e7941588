"""The thread that gives deferred units their vectors (see `Index.backfill`), a few at a time.

The model is shared with the queries of the prompt hook (one model per user), but a query does not
wait for a batch of documents (the model runs them side by side), so a batch is as large as keeps
both cores busy: two model batches of 32 texts run at once.

Captured exchanges come a few units at a time (~6 each), and a model call's CPU is mostly its own, not its
texts': ten calls of 6 texts cost the host 1.6 times one call of 60. So when fewer units than a batch wait, the
backfill gathers for up to GATHER_SECONDS first; under nine sessions a batch fills in about a second, and a lone
session's capture gets its vector that much later (it is found by keyword meanwhile). bench/results/s9-nine9.md.
"""

from __future__ import annotations

import logging
import threading
import time

from .index import Index

log = logging.getLogger("memdir.backfill")
BATCH = 64  # units per model call: two batches of 32 at once (8 ran one batch on one core, at half the rate)
GATHER_SECONDS = 2.0  # how long a wake with fewer units than a batch waits for more


class Backfill:
    def __init__(self, index: Index, batch: int = BATCH, gather: float = GATHER_SECONDS) -> None:
        self.index = index
        self.batch = batch
        self.gather = gather
        self._stop = threading.Event()
        self._progress = threading.Condition()  # notified after every batch: tests and benchmarks wait on it
        self._thread = threading.Thread(target=self._run, name="memdir-backfill", daemon=True)

    def start(self) -> "Backfill":
        self._thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Let the batch in hand finish; the rest stays queued in the files' index (the next start embeds it)."""
        self._stop.set()
        self.index.embedding_wanted.set()
        with self.index.units_deferred:
            self.index.units_deferred.notify_all()
        self._thread.join(timeout)

    def wait_done(self, timeout: float) -> bool:
        """Block until no unit waits for a vector (bounded); True when done."""
        with self._progress:
            return self._progress.wait_for(lambda: not self.index.waiting_units(), timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._gather()
            started, done = time.perf_counter(), 0
            try:
                while not self._stop.is_set() and (taken := self.index.backfill(self.batch)):
                    done += taken
                    self._notify()
            except Exception:  # noqa: BLE001 - a model or disk failure must not kill the server; retried on the next wake
                log.exception("embedding in the background failed; %d units still wait", self.index.waiting_units())
                self._stop.wait(5.0)
                continue
            if done:
                log.info("embedded %d deferred units in %.1f s", done, time.perf_counter() - started)
            self._notify()
            self.index.embedding_wanted.wait()

    def _gather(self) -> None:
        """When some units wait but fewer than a batch, wait (at most `gather` seconds) for a batch; a stop ends it."""
        with self.index.units_deferred:
            self.index.units_deferred.wait_for(
                lambda: self._stop.is_set() or not 0 < self.index.waiting_units() < self.batch, timeout=self.gather)

    def _notify(self) -> None:
        with self._progress:
            self._progress.notify_all()
