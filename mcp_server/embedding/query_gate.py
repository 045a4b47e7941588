"""Queries first: no new run of documents starts in the embedding host while a query waits or runs.

Nine sessions each capture an exchange every turn; their documents kept both cores busy in the host, and a prompt's
query vector (the one text a prompt hook waits on) queued for a core behind them, 60 ms in the slowest 5 % of prompts
(bench/results/s12-warm12.md). The lower priority of the documents' lane only shares the cores at about 3 : 1. With
this gate the documents' runs already in flight finish, none starts until the queries are done, and the documents are
late only by the queries' few milliseconds.

A run of documents waits at most `max_wait` seconds: under a steady stream of queries the documents still go on, at
least one run per `max_wait`, so a capture's vectors are never starved and nothing is dropped.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

MAX_WAIT = 0.5  # seconds one run of documents waits for the queries at most


class QueryGate:
    def __init__(self, max_wait: float | None = None) -> None:
        self.max_wait = MAX_WAIT if max_wait is None else max_wait
        self._changed = threading.Condition()
        self._queries = 0

    @contextmanager
    def query(self) -> Iterator[None]:
        """Hold the documents back while this query is waiting for the model or running."""
        with self._changed:
            self._queries += 1
        try:
            yield
        finally:
            with self._changed:
                self._queries -= 1
                if not self._queries:
                    self._changed.notify_all()

    def before_documents(self) -> None:
        """Called before each run of documents: returns once no query waits or runs, or after `max_wait`."""
        deadline = time.monotonic() + self.max_wait
        with self._changed:
            while self._queries and (left := deadline - time.monotonic()) > 0:
                self._documents_held()
                self._changed.wait(left)

    def _documents_held(self) -> None:
        """A run of documents is waiting for a query (tests wait on this)."""
