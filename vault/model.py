"""The one shape a memory takes everywhere in memdir, and the vocabularies it draws from."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Mapping

COLLECTIONS = ("working", "history", "patterns", "memory_bank", "books")
# A memory_bank fact without its own importance/confidence counts as "stated" at this weight.
BANK_DEFAULT = 0.7
SCORED_COLLECTIONS = frozenset({"working", "history", "patterns"})
TYPES = (
    "preference",
    "fact",
    "decision",
    "constraint",
    "learning",
    "objective",
    "context",
    "plan",
    "journal",
    "observation",
    "reflection",
    "history",
)
OUTCOMES = ("worked", "partial", "failed", "unknown")
STATUSES = ("active", "superseded", "archived")
PRIVACY = ("shared", "private")

# The type a memory gets when its frontmatter names none.
DEFAULT_TYPE = {
    "working": "history",
    "history": "history",
    "patterns": "learning",
    "memory_bank": "fact",
    "books": "fact",
}

# Keys memdir itself understands; anything else in the frontmatter is kept and passed through.
KNOWN_KEYS = frozenset(
    {
        "id", "collection", "type", "title", "tags", "aliases", "created_at", "updated_at",
        "last_used_at", "score", "uses", "success_count", "outcomes", "last_outcome", "status",
        "supersedes", "privacy", "importance", "confidence", "always_inject", "previous", "anchors",
    }
)

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def bank_weight(value: float | None) -> float:
    """A memory_bank importance or confidence as it counts: only a missing one becomes BANK_DEFAULT."""
    return BANK_DEFAULT if value is None else value


@dataclass(frozen=True, slots=True, kw_only=True)
class Memory:
    """A memory as read from its file. Frozen: changes go through `vault.write`, never by mutation."""

    id: str
    path: str  # relative to the vault root, "/"-separated
    collection: str
    type: str
    title: str
    body: str
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_used_at: datetime | None = None
    score: float = 0.5
    uses: int = 0
    success_count: float = 0.0
    outcomes: tuple[str, ...] = ()
    last_outcome: str | None = None
    status: str = "active"
    supersedes: tuple[str, ...] = ()  # as written: "[[note]]" links or ids
    privacy: str = "shared"
    importance: float | None = None
    confidence: float | None = None
    always_inject: bool = False
    frontmatter: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)  # every key as parsed, unknown ones included
    has_frontmatter: bool = True
    id_derived: bool = False  # the file has no `id:` yet; the id comes from its path
    id_line: int | None = None  # file line of the `id:` key, for error reports
    content_hash: str = ""  # sha256 of the exact bytes parsed
    body_hash: str = ""  # sha256 of the body text alone (frontmatter edits leave it unchanged)
    source: str = "project"  # which vault it came from: "project" or "user"

    @property
    def scored(self) -> bool:
        """Whether outcomes move this memory's score (memory_bank and books keep theirs)."""
        return self.collection in SCORED_COLLECTIONS

    @property
    def stem(self) -> str:
        """The file name without folder and extension: what [[wikilinks]] usually name."""
        return stem_of(self.path)


def stem_of(path: str) -> str:
    """A vault path's file name without folder and extension (`Memory.stem`, for a path without its memory)."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name
