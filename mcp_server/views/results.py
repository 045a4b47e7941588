"""What the operations answer (operations.py names which answers what), read by attributes wherever it is shown.

Here, beside the memory's own outward model, so the renderers read them without reaching into the service.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from .view import MemoryView, StaleCite

Json = dict[str, Any]


class SearchResult(BaseModel):
    results: list[MemoryView]
    window: Json | None = None  # the time window applied, when one shaped the answer
    as_of: Json | None = None  # the commit answered from, with as_of


class Result(BaseModel):
    """A write's answer; keys a newer server adds are kept, not dropped."""

    model_config = ConfigDict(extra="allow")


class Similar(Result):
    id: str
    title: str
    similarity: float


class Added(Result):
    memory: MemoryView
    status: str  # created, or restated when the same text and type already existed
    near_duplicates: list[Similar]
    possible_conflicts: list[Similar]


class Dependant(Result):
    id: str
    title: str


class Deleted(Result):
    id: str
    title: str
    moved_to: str
    dependants: list[Dependant] = []  # memories whose depends_on now names a deleted memory


class Restored(Result):
    id: str
    title: str
    restored_to: str


class Scored(Result):
    id: str
    outcome: str
    changes: Json
    note: str


class ScoreResult(Result):
    scored: list[Scored]
    exchange: str | None  # the previous exchange's memory, scored with `outcome`
    unscored: list[str]
    verify: list[str] = []  # scored worked, yet the code they cite changed


class Verified(Result):
    id: str
    title: str
    anchors: list[str]  # path[::symbol]@blob: the cited files as they are now
    was_stale: list[StaleCite]
    still_stale: list[StaleCite] = []  # what re-anchoring cannot mend: the memory is NOT verified


class VerifyResult(Result):
    verified: list[Verified]


class ReviewItem(Result):
    kind: str
    ids: list[str]
    reason: str
    action: str  # the one command that resolves it
    key: str  # `memdir review --dismiss KEY` hides it until it changes
    path: str | None = None
    line: int | None = None
    source: str


class ReviewResult(Result):
    items: list[ReviewItem]
