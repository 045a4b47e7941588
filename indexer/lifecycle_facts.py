"""What the lifecycle rules read of a memory, kept as manifest columns so they can be decided without decoding its row.

A served searcher leaves out the memories the next lifecycle run removes or archives (`vault.lifecycle.leaving`), and
the server runs the lifecycle at its start: both decided for every memory, which after a lazy open (lazy_rows.py)
decoded all 100k rows of a team vault before the first answer (~8 CPU s; bench/results/first-answer.md, issue 32 item 5,
session 8). The rules read a dozen fields: collection, type, status, the counters, the times, the outcomes and the
`deadline` key. Each manifest row's memory has them in a `facts` table beside it, written in the same transaction;
`Facts` is a record of them that the rules read as they read a `Memory` (the same functions decide, so the answers are
equal).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Mapping

from vault.lifecycle import deadline_of
from vault.model import Memory

# The facts table's columns after `path`, in the order `columns_of` gives them.
FACT_COLUMNS = ("collection", "type", "status", "uses", "score", "success_count", "created_at", "last_used_at",
                "deadline", "outcomes")  # may_leave reads the first five and the three times
_NO_DEADLINE: Mapping[str, Any] = {}


def columns_of(memory: Memory) -> tuple[Any, ...]:
    """The facts of a memory as the table stores them (times as ISO text, outcomes as JSON, None when empty)."""
    deadline = deadline_of(memory)
    return (memory.collection, memory.type, memory.status, memory.uses, memory.score, memory.success_count,
            _text(memory.created_at), _text(memory.last_used_at), _text(deadline),
            json.dumps(list(memory.outcomes)) if memory.outcomes else None)


def _text(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text is not None else None


class Facts:
    """A memory as the lifecycle rules read it, from its stored columns: the fields they use, `frontmatter` holding
    only the deadline (already as the aware datetime `deadline_of` makes of the key), the outcomes parsed if asked."""

    __slots__ = ("id", "path", "collection", "type", "status", "uses", "score", "success_count", "created_at",
                 "last_used_at", "frontmatter", "_outcomes")

    def __init__(self, memory_id: str, path: str, columns: tuple[Any, ...]) -> None:
        (self.collection, self.type, self.status, self.uses, self.score, self.success_count, created, last_used,
         deadline, self._outcomes) = columns
        self.id, self.path = memory_id, path
        self.created_at, self.last_used_at = _time(created), _time(last_used)
        self.frontmatter = {"deadline": _time(deadline)} if deadline is not None else _NO_DEADLINE

    @property
    def outcomes(self) -> tuple[str, ...]:  # read only for a memory whose counters say it may be removed
        return tuple(json.loads(self._outcomes)) if self._outcomes else ()
