"""Captured exchanges indexed together: the files written one by one, then one sync and one keyword commit for all
that arrived meanwhile, after the searches already asked.

Under nine sessions every Stop hook stored an exchange, and each one's sync (read, chunk, a Whoosh commit, the
manifest) cost the server ~110 ms of CPU under the index lock; back to back, the captures queued ahead of the
prompts (bench/results/sessions.md, issue 32 item 6). Here the first capture to find no sync running leads: it takes
every path queued so far, lets the searches that were already running finish (a prompt is answered before the captures
queued behind it), and syncs them in one go; the captures that arrive meanwhile queue for the next one. Each caller
waits for the sync that took its path, so a capture is searchable when its call returns, as before.

Nothing waits on the index for the file: a capture's file is written (vault's atomic writer) before it queues, so a
server killed before the sync loses nothing - the file is on disk and the next open's reconcile indexes it.
"""

from __future__ import annotations

import threading
from typing import Iterable

from .index import Index, SyncReport

# How long a group's sync waits for the searches running when it was ready: a bound, so that a search that hangs
# (a model host that never answers) cannot hold the captures back for long.
SEARCHES_FIRST_SECONDS = 1.0


class _Group:
    def __init__(self) -> None:
        self.paths: list[str] = []
        self.done = False
        self.report: SyncReport | None = None
        self.error: BaseException | None = None


class GroupSync:
    """Index syncs of new files (`later`: their vectors come with the backfill) shared by the callers that queue
    while one runs."""

    def __init__(self, index: Index, searches_first: float = SEARCHES_FIRST_SECONDS) -> None:
        self.index = index
        self.searches_first = searches_first
        self._changed = threading.Condition()
        self._open = _Group()  # the paths waiting for the next sync
        self._syncing = False
        self.syncs = 0  # syncs run, for tests and the bench

    def sync(self, paths: Iterable[str]) -> SyncReport:
        """Index `paths` with whatever else is queued; returns the report of the sync that took them."""
        with self._changed:
            group = self._open
            group.paths.extend(paths)
            self._changed.notify_all()
            while not group.done:
                if self._syncing:
                    self._changed.wait()
                    continue
                # No sync runs and this caller's group is not done: it is the open one (a leader's group is done
                # when the leader lets go), so this caller leads it.
                self._syncing = True
                try:
                    self._changed.release()
                    try:  # the group stays open meanwhile: captures arriving while the searches finish join it
                        self.index.searches.wait_for_running(self.searches_first)
                    finally:
                        self._changed.acquire()
                    self._open = _Group()
                    self._changed.release()
                    try:
                        self._run(group)
                    finally:
                        self._changed.acquire()
                except BaseException as exc:  # the wait for searches raised: the group's other callers are told too
                    group.error = group.error or exc
                    raise
                finally:
                    if self._open is group:  # else every later caller joined a group marked done, never synced
                        self._open = _Group()
                    group.done = True
                    self._syncing = False
                    self._changed.notify_all()
        if group.error is not None:
            raise group.error
        assert group.report is not None
        return group.report

    def wait_queued(self, count: int, timeout: float) -> bool:
        """Wait (bounded) until `count` paths wait for the next sync; for tests and benchmarks."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._open.paths) >= count, timeout=timeout)

    def _run(self, group: _Group) -> None:
        try:
            group.report = self.index.sync(list(dict.fromkeys(group.paths)), later=True)
            self.syncs += 1
        except BaseException as exc:  # every caller of the group raises it: none of their paths was indexed
            group.error = exc
