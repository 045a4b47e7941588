"""What the operations answer (operations.py names which answers what), read by attributes wherever it is shown.

Here, beside the memory's own outward model, so the renderers read them without reaching into the service.
A field's description is what the MCP tools publish about it (tools/outputs.py derives their output schemas from
these models); text from the vault is marked `VaultText`, which the tools quote.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .view import MemoryView, StaleCite, VaultText

Json = dict[str, Any]


class SearchResult(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use, as every model here (operations.py says why)

    results: list[MemoryView]
    window: Json | None = Field(
        default=None, description="the time window applied: source (days_back, after/before or query), use (filter "
                                  "or boost), start, end, the query's time words, and a note when an explicit window "
                                  "overrode them")
    as_of: dict[str, str] | None = Field(default=None, description="the commit answered from, with as_of")


class Result(BaseModel):
    """A write's answer; keys a newer server adds are kept, not dropped."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class Similar(Result):
    id: str
    title: VaultText
    similarity: float


class Added(Result):
    memory: MemoryView
    status: str = Field(description="created, or restated when the same text and type already existed")
    near_duplicates: list[Similar]
    possible_conflicts: list[Similar]


class Dependant(Result):
    id: str
    title: VaultText


class Deleted(Result):
    id: str
    title: VaultText
    moved_to: str
    dependants: list[Dependant] = Field(default_factory=list, description="memories that depend on the deleted one")


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
    exchange: str | None = Field(description="the previous exchange's memory, scored with `outcome`")
    unscored: list[str] = Field(description="memories shown last turn that are still waiting for a score")
    verify: list[str] = Field(default=[], description="memories scored worked whose cited code changed: "
                                                       "if they still hold, verify_memory them")


class Verified(Result):
    id: str
    title: VaultText
    anchors: list[str] = Field(description="path[::symbol]@blob: the cited files as they are now")
    was_stale: list[StaleCite] = Field(description="what had changed under the memory before")
    still_stale: list[StaleCite] = Field(default_factory=list, description="what re-anchoring cannot mend (a cited "
                                         "symbol the code no longer defines): the memory is NOT verified; update it")


class VerifyResult(Result):
    verified: list[Verified]


class ReviewItem(Result):
    kind: str = Field(description="stale, duplicates, contradiction, supersede, promote, remove, demote, archive, "
                                  "invalid, secret, imitation")
    ids: list[str]
    reason: VaultText
    action: str = Field(description="the one command that resolves it")
    key: str = Field(description="`memdir review --dismiss KEY` hides it until it changes")
    path: str | None = None
    line: int | None = None
    source: str


class ReviewResult(Result):
    items: list[ReviewItem]


# -- the reading operations' answers (fields in the order the service writes them: `--json` prints that order) --


class Relations(Result):
    """A memory's relations (`relationships`)."""

    id: str
    title: str
    path: str
    successor: str | None
    supersedes_chain: list[Json]  # newest first: {id, title}
    outgoing: list[Json]  # {relation, context, origin, id, title[, heading]}
    backlinks: list[Json]
    ghosts: list[Json]  # link targets that are no memory: {relation, ghost, ...}
    # How many more of each kind ("outgoing", "backlinks", "ghosts") were not listed: a note 2,000 others link to
    # answered 450 KB of backlinks, each with its title, to the model (bench/results/s22-attack22.md).
    unlisted: dict[str, int] = {}


class LinkResult(Relations):
    """`link`'s answer: the source's relations, and whether the link was new."""

    changed: bool


class LinkedResult(Result):
    target: str
    results: list[MemoryView]


class Insights(Result):
    query: str
    always: list[MemoryView] = Field(description="memory_bank facts marked always_inject")
    facts: list[MemoryView] = Field(description="memory_bank facts relevant to the query")
    memories: list[MemoryView] = Field(description="the best working, history and patterns memories")
    recommended_collections: list[str]
    memory_count: int
    review: dict[str, int] | None = Field(None, description="now and then: how many items of each kind wait in the "
                                                              "review queue (get_review_queue lists them)")


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
    titles: list[VaultText]
    similarity: float
    source: str


class Ingested(Result):
    source: str
    status: str  # created | updated | unchanged | error | skipped (dry runs: would-create, would-update)
    id: str | None = None
    path: str | None = None
    title: VaultText | None = None
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
