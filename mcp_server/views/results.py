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


# -- the reading operations' answers (fields in the order the service writes them: `--json` prints that order) --


class Relations(Result):
    """A memory's relations (`relationships`); `link` adds whether it changed anything."""

    id: str
    title: str
    path: str
    successor: str | None
    supersedes_chain: list[Json]  # newest first: {id, title}
    outgoing: list[Json]  # {relation, context, origin, id, title[, heading]}
    backlinks: list[Json]
    ghosts: list[Json]  # link targets that are no memory: {relation, ghost, ...}
    changed: bool | None = None


class LinkedResult(Result):
    target: str
    results: list[MemoryView]


class Insights(Result):
    review: dict[str, int] | None = None  # now and then: what waits in the review queue, by kind
    query: str
    always: list[MemoryView]
    facts: list[MemoryView]
    memories: list[MemoryView]
    recommended_collections: list[str]
    memory_count: int


class Stats(Result):
    memories: int
    collections: dict[str, int]
    types: dict[str, int]
    tags: dict[str, int]
    scored_memories: int
    superseded: int
    problems: int
    chunks: int
    ghost_targets: int
    books: int
    vault: str
    private: Json | None = None  # for the local user: the user vault's count beside the project's


class LogResult(Result):
    id: str
    path: str
    uncommitted_changes: bool
    versions: list[Json]  # newest first: the commit and what changed in it


class DoctorResult(Result):
    memories: int
    errors: list[Json]
    warnings: list[Json]


class Book(Result):
    id: str
    title: str
    path: str
    source: str | None
    kind: str
    chars: int
    sections: int
    updated_at: str | None


class Cluster(Result):
    ids: list[str]
    titles: list[str]
    similarity: float
    source: str


class Ingested(Result):
    source: str
    status: str  # created | updated | unchanged | error | skipped (dry runs: would-create, would-update)
    id: str | None = None
    path: str | None = None
    title: str | None = None
    kind: str | None = None
    parts: int = 0  # pages of a PDF, sections otherwise
    reason: str = ""


class Decision(Result):
    """One lifecycle step of `gc`, and what came of it."""

    id: str
    path: str
    action: str  # promote | demote | remove | archive
    from_collection: str
    to_collection: str | None
    why: str
    result: str
    source: str


class Reindexed(Result):
    """What `reindex` rebuilt."""

    memories: int
    problems: int
    seconds: float
    chunks: int
