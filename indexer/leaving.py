"""The memories the next lifecycle run removes or archives (`vault.lifecycle.leaving`), kept in step with the index and
the clock by a schedule instead of being decided again for every memory.

A served searcher leaves them out at once. Deciding all 100k memories of a team vault costs 0.5-1.1 CPU s, and was
paid by one search a minute, because the answer depends on the clock (bench/results/s18-lead.md). It changes with the
clock only when one of a memory's dates crosses a threshold (`lifecycle.next_change`): the schedule decides every
memory (the first ask, or after the index lost track of its changes: an open, a swap, a long absence), keeps a heap of
the next such moment of each, and afterwards decides again only the memories whose moment the clock has passed and
those the index says changed (`Index.memories_changed_since`).

It looks only a day ahead (HORIZON). A memory that leaves stays leaving until it changes (the rules' clock only counts
the time since its dates, `lifecycle.next_change`), so one that is not leaving at the horizon is not leaving before
it: `lifecycle.may_leave(horizon)` refuses most rows from their stored facts alone, and only the others get a record
made, a decision and a moment. Making them for every row cost the first answer after an open 0.5 CPU s more at 100k
(bench/results/s19-lifecycle19.md), on a budget of 3 s. Past the horizon, every memory is decided again, as once a
minute before.
"""

from __future__ import annotations

import heapq
from datetime import datetime, timedelta

from vault import lifecycle
from vault.settings import LifecycleSettings

from .index import Index

NOTHING: frozenset[str] = frozenset()
# Concurrent searches read the clock before they wait for the index lock, so one may come after another with an earlier
# time: within this, it is answered as of the later one (as each answer was as of its minute before); further back,
# the clock was set back and everything is decided again.
SET_BACK = timedelta(minutes=1)
HORIZON = timedelta(days=1)


class LeavingSchedule:
    """`at(now)`: the ids leaving at `now`, the same object while they stay the same. Callers hold the index lock."""

    def __init__(self, index: Index, rules: LifecycleSettings) -> None:
        self._index = index
        self._rules = rules
        self._next_change = lifecycle.next_changes(rules)
        self._ids = NOTHING
        self._mark: int | None = None  # the index's change mark the ids were decided at
        self._decided_at: datetime | None = None
        self._horizon: datetime | None = None  # past it, every memory is decided again
        self._heap: list[tuple[datetime, str]] = []  # (moment, id), stale entries among them: see `_moment`
        self._moment: dict[str, datetime] = {}  # id -> the one moment of its in the heap that counts
        self.full_passes = 0  # every memory decided (for tests and benchmarks)

    def at(self, now: datetime) -> frozenset[str]:
        mark, changed = self._index.memories_changed_since(self._mark)
        if self._decided_at is not None and now < self._decided_at:
            if self._decided_at - now > SET_BACK:
                changed = None  # a clock set back has no schedule: what left may stay again
            else:  # a search that read the clock before another one decided: answered as of that one
                now = self._decided_at
        if changed is None or self._horizon is None:
            self._decide_all(now)
        elif now > self._horizon:  # what is leaving and unchanged since stays leaving: only the others are decided
            self._decide_all(now, still=self._ids - changed)
        else:
            due = set(changed)
            while self._heap and self._heap[0][0] < now:
                moment, memory_id = heapq.heappop(self._heap)
                if self._moment.get(memory_id) == moment:
                    del self._moment[memory_id]
                    due.add(memory_id)
            if due:
                self._decide_again(due, now)
        self._mark, self._decided_at = mark, now
        return self._ids

    def valid_until(self) -> datetime | None:
        """Until when (inclusive) `at` answers the same if the index does not change."""
        assert self._horizon is not None, "asked before the first decision"
        return min(self._heap[0][0], self._horizon) if self._heap else self._horizon

    def _decide_all(self, now: datetime, still: frozenset[str] = NOTHING) -> None:
        """Every memory but those `still` leaving (see `at`: they were, and have not changed since; the clock only moved
        on). At the horizon's pass of a vault with 50k memories leaving, they were half the records made and decided."""
        horizon = now + HORIZON
        leaving, heap = set(still), []
        # From each row's lifecycle facts where it is not decoded: deciding decodes no row (lifecycle_facts.py).
        for record in self._index.lifecycle_records(lifecycle.may_leave(horizon, self._rules), skip=still):
            if lifecycle.leaving(record, now, self._rules):
                leaving.add(record.id)  # for good while unchanged: no moment
            elif (moment := self._next_change(record, now)) is not None and moment < horizon:
                heap.append((moment, record.id))
        heapq.heapify(heap)
        self._heap, self._moment, self._horizon = heap, dict((i, m) for m, i in heap), horizon
        self._ids = frozenset(leaving) if leaving else NOTHING
        self.full_passes += 1

    def _decide_again(self, due: set[str], now: datetime) -> None:
        leaving = set(self._ids)
        for memory_id in due:
            record = self._index.lifecycle_record(memory_id)
            leaving.discard(memory_id)
            self._moment.pop(memory_id, None)  # its entry in the heap, if any, is stale from here
            if record is None:
                continue  # forgotten
            if lifecycle.leaving(record, now, self._rules):
                leaving.add(memory_id)
            elif (moment := self._next_change(record, now)) is not None:
                self._moment[memory_id] = moment
                heapq.heappush(self._heap, (moment, memory_id))
        if len(self._heap) > 2 * len(self._moment) + 1024:  # stale entries of memories changed many times
            self._heap = [(m, i) for i, m in self._moment.items()]
            heapq.heapify(self._heap)
        if leaving != self._ids:
            self._ids = frozenset(leaving) if leaving else NOTHING
