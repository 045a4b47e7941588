"""memdir's operations as typed requests: one model per operation, naming it, its arguments and its result.

The CLI builds these models and hands them to an `Operations`: the MemoryService in this process, or
the CLI's `Remote` posting them to this user's server, which reads them back with `parse` before it
calls the service. So an argument is checked in one place, against one declaration: an unknown or
mistyped one is refused with a sentence naming it, wherever the call came from. Errors cross the
wire in one shape, {"error": {"type": <the VaultError subclass>, "message": ...}}.

Light on purpose (pydantic and the outward memory model only): the CLI imports it.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic import ValidationError as PydanticError

from vault.errors import ValidationError
from vault.model import COLLECTIONS, TYPES

from ..views.results import (
    Added, Book, Cluster, Decision, Deleted, DoctorResult, Ingested, Insights as InsightsResult, LinkedResult, LogResult,
    LinkResult, Reindexed, Relations, Restored, ReviewResult, ScoreResult, SearchResult, Stats as StatsResult, VerifyResult,
)
from ..views.view import MemoryView

R = TypeVar("R")
Json = dict[str, Any]
# A value longer than this is not echoed back whole in an error: the caller sent it, it only needs to recognise it.
ECHO_CHARS = 60


# -- argument types: each stated once. The operations use them where they hold for every caller; the MCP tools
# (tools/table.py) narrow an argument to one of them where a model's face is narrower than the CLI's (ids only,
# not paths; at most 50 results; bounded text).

MemoryId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                                description="A memory id as shown in [id:...] tags, e.g. m-7f3a9c2e")]
Collection = Literal["working", "history", "patterns", "memory_bank", "books"]
MemoryType = Literal[
    "preference", "fact", "decision", "constraint", "learning", "objective", "context", "plan", "journal",
    "observation", "reflection", "history",
]
Outcome = Literal["worked", "partial", "failed", "unknown"]
Linkable = Literal["supersedes", "depends_on", "contradicts", "derives_from"]
Relation = Literal["supersedes", "depends_on", "contradicts", "derives_from", "links_to", "embeds"]
Privacy = Literal["shared", "private"]
SortBy = Literal["relevance", "recency", "score"]
Text = Annotated[str, Field(min_length=1, max_length=20_000)]
# A query may be a whole pasted log or traceback: the search reads such a paste by its salient lines (indexer/salient.py,
# linear: 5 ms of CPU for 100 kB), so a tool refuses only what no paste reaches, not what is longer than a question.
QUERY_CHARS = 100_000
Query = Annotated[str, Field(max_length=QUERY_CHARS)]
Title = Annotated[str, Field(min_length=1, max_length=200)]
Tag = Annotated[str, Field(min_length=1, max_length=64)]
Count = Annotated[int, Field(ge=1, le=50)]
Moment = Annotated[str, Field(max_length=40)]
Version = Annotated[str, Field(max_length=100)]
assert set(COLLECTIONS) == set(Collection.__args__) and set(TYPES) == set(MemoryType.__args__)  # type: ignore[attr-defined]

# When a memory was created, for a time filter: the file's mtime stands in for a missing created_at.
UNDATED = "(file mtime when they have no created_at)"
AS_OF = "A date (YYYY-MM-DD: the last commit that day) or a git commit: the vault as committed then"
# memdir refuses text that looks like a credential: memories are plain files that get committed and shared.
AllowSecret = Annotated[bool, Field(description=(
    "Only when the user explicitly asked to store it: keep content that looks like a credential (API key, "
    "token, private key, password) instead of refusing it."))]
# The one check of a time window's length, for the CLI, the HTTP API and the MCP tools alike.
DaysBack = Annotated[float, Field(gt=0)]


class Op(BaseModel, Generic[R]):
    """One operation's arguments; `op` names the MemoryService method that runs it, `result` its answer's type."""

    # Each model is built on its first use, not at import: a command or the server starting uses a few of ~75.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    op: ClassVar[str]
    result: ClassVar[Any]

    def __init__(self, **arguments: Any) -> None:
        """Checked as it is built, here or in the server: a ValidationError naming each bad argument."""
        known = list(type(self).model_fields)
        unknown = sorted(set(arguments) - set(known))
        if unknown:
            raise ValidationError(f"bad arguments for {self.op}: {unknown_clause(unknown, known)}.")
        try:
            super().__init__(**arguments)
        except PydanticError as exc:
            raise ValidationError(f"bad arguments for {self.op}: {problems(exc)}.") from None

    def wire(self) -> dict[str, Any]:
        """The arguments the caller gave, as JSON, for the server's /api/op (the model's defaults stand for the
        rest there as here)."""
        return self.model_dump(mode="json", include=self.model_fields_set)

    def result_of(self, data: Any) -> R:
        """The server's JSON answer read back into the operation's result type."""
        return adapter(self.result).validate_python(data)

    def run_on(self, service: Any) -> R:
        """Hand this request to the service method it names: its typed result (tests/test_operations.py checks
        that each method takes its operation's model and is annotated with its result)."""
        result: R = getattr(service, self.op)(self)
        return result


@cache
def adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def as_json(value: Any) -> Any:
    """A result as JSON, as the server sends it and `--json` prints it: the keys a result did not set stay
    absent (a memory that is no search hit has no relevance keys, not a row of nulls)."""
    if isinstance(value, list):
        return [as_json(item) for item in value]
    kind: Any = type(value)
    return adapter(kind).dump_python(value, mode="json", exclude_unset=True)


class Operations(Protocol):
    """Whoever runs memdir's operations: the MemoryService, or the remote client of this user's server."""

    def run(self, request: Op[R]) -> R: ...


# -- reading -----------------------------------------------------------------------------------


class Search(Op[SearchResult]):
    op = "search"
    result = SearchResult
    query: Annotated[str | None, Field(description="Search by meaning and keywords")] = None
    days_back: Annotated[DaysBack | None, Field(description="Only memories created in the last N days")] = None
    id: Annotated[str | None, Field(description="Look one memory up directly")] = None
    collections: Annotated[list[str], Field(description="Only memories in these collections")] = []
    types: Annotated[list[str], Field(description="Only memories of this type")] = []
    tags: Annotated[list[str], Field(description="Only memories with these tags")] = []
    sort_by: Annotated[SortBy, Field(description="The order of the results")] = "relevance"
    limit: Annotated[int | None, Field(description="How many results (default 10)")] = None
    include_superseded: Annotated[bool, Field(description="Include superseded and archived memories")] = False
    session: str | None = None
    include_private: bool = True
    as_of: Annotated[str | None, Field(description=AS_OF)] = None
    after: Annotated[str | None, Field(description=f"Only memories created on or after this date {UNDATED}")] = None
    before: Annotated[str | None, Field(description=f"Only memories created before this date {UNDATED}")] = None


class Read(Op[MemoryView]):
    op = "read"
    result = MemoryView
    ref: str
    session: str | None = None
    include_private: bool = True
    version: Annotated[str | None, Field(description=AS_OF)] = None


class Log(Op[LogResult]):
    op = "log"
    result = LogResult
    ref: str
    include_private: bool = True


class List(Op[list[MemoryView]]):
    op = "list"
    result = list[MemoryView]
    include_private: bool = True


class Doctor(Op[DoctorResult]):
    op = "doctor"
    result = DoctorResult


class Relationships(Op[Relations]):
    op = "relationships"
    result = Relations
    memory_id: str
    relationship_type: Annotated[Relation | None, Field(description="Only relations of this type")] = None
    include_private: bool = True
    listed: Annotated[int, Field(ge=1, le=1_000_000, description=(
        "Most relations listed of each kind (links out, backlinks, ghost targets); the rest are counted"))] = 50


class Linked(Op[LinkedResult]):
    op = "linked"
    result = LinkedResult
    target: Annotated[str, Field(min_length=1, max_length=300, description="A memory name or a project file path")]
    query: str | None = None
    limit: int = 10
    include_private: bool = True


class Stats(Op[StatsResult]):
    op = "stats"
    result = StatsResult
    include_private: bool = True


class Insights(Op[InsightsResult]):
    op = "insights"
    result = InsightsResult
    query: Annotated[str, Field(description="What you are about to work on")]
    session: str | None = None
    limit: int = 6
    include_private: bool = True


class Books(Op[list[Book]]):
    op = "books"
    result = list[Book]


class SuggestMerges(Op[list[Cluster]]):
    op = "suggest_merges"
    result = list[Cluster]
    threshold: Annotated[float | None, Field(
        description="Cosine similarity that makes two memories candidates (default 0.85)")] = None
    type: Annotated[str | None, Field(description="Only memories of this type")] = None
    limit: Annotated[int, Field(description="How many groups")] = 10


class Review(Op[ReviewResult]):
    op = "review"
    result = ReviewResult
    dismiss: Annotated[list[str], Field(description="Hide an item (by its key) until what it is about changes")] = []


# -- writing -----------------------------------------------------------------------------------


class Add(Op[Added]):
    op = "add"
    result = Added
    content: str
    type: Annotated[str | None, Field(
        description="The kind of memory (preference, fact, decision, constraint, learning, ...)")] = None
    tags: Annotated[list[str], Field(description="Tags")] = []
    title: Annotated[str | None, Field(description="Title (default: the first line of the content)")] = None
    collection: Annotated[str, Field(description="Where the memory lives")] = "memory_bank"
    importance: Annotated[float | None, Field(
        description="How much it should shape answers, 0 to 1 (memory_bank; default 0.7)")] = None
    confidence: Annotated[float | None, Field(
        description="0.9 or more: verified against a source; 0.5: unverified (memory_bank; default 0.7)")] = None
    always_inject: Annotated[bool, Field(
        description="Put it in every turn's context: for identity and core preferences")] = False
    privacy: Annotated[Privacy, Field(
        description="private: kept in the user vault only, never in the shared project vault")] = "shared"
    allow_secret: AllowSecret = False
    session: str | None = None


class Update(Op[MemoryView]):
    op = "update"
    result = MemoryView
    memory_id: str
    content: str | None = None
    fields: Annotated[Json | None, Field(description="Frontmatter keys to set")] = None
    allow_secret: AllowSecret = False
    session: str | None = None


class Append(Op[MemoryView]):
    op = "append"
    result = MemoryView
    memory_id: str
    content: str
    allow_secret: AllowSecret = False
    session: str | None = None


class Link(Op[LinkResult]):
    op = "link"
    result = LinkResult
    source: str
    target: str
    relation: Annotated[Linkable, Field(description="How the source relates to the target")] = "depends_on"
    session: str | None = None


class Delete(Op[Deleted]):
    op = "delete"
    result = Deleted
    memory_id: str


class Restore(Op[Restored]):
    op = "restore"
    result = Restored
    memory_id: str


class Ingest(Op[list[Ingested]]):
    op = "ingest"
    result = list[Ingested]
    paths: list[str]
    title: Annotated[str | None, Field(
        description="Title of the book (default: the document's own title or file name)")] = None
    tags: Annotated[list[str], Field(description="Tags for the books")] = []
    dry_run: Annotated[bool, Field(description="Say what would be created or updated; write nothing")] = False
    session: str | None = None


class IngestDocument(Op[list[Ingested]]):
    """The model's ingest: one path inside the project (the CLI's `ingest` reads any path the user names)."""

    op = "ingest_document"
    result = list[Ingested]
    path: Annotated[str, Field(min_length=1, max_length=1000, description="File or folder inside the project")]
    title: str | None = None
    tags: list[str] = []
    session: str | None = None


class RecordResponse(Op[MemoryView]):
    op = "record_response"
    result = MemoryView
    key_takeaway: str
    initial_score: str | None = None
    session: str | None = None
    privacy: Privacy = "shared"
    allow_secret: AllowSecret = False


class Score(Op[ScoreResult]):
    op = "score"
    result = ScoreResult
    memory_scores: dict[str, str]
    outcome: Annotated[str | None, Field(description="How the previous exchange went")] = None
    session: str | None = None


class Verify(Op[VerifyResult]):
    op = "verify"
    result = VerifyResult
    ids: Annotated[list[str], Field(description="Memories you checked against the code")]


class Merge(Op[MemoryView]):
    op = "merge"
    result = MemoryView
    ids: list[str]
    title: Annotated[str, Field(description="Title of the merged memory")]
    content: Annotated[str | None, Field(
        description="Body of the merged memory (default: the sources' bodies, joined)")] = None
    allow_secret: AllowSecret = False
    session: str | None = None


# -- lifecycle and the index ---------------------------------------------------------------------


class Gc(Op[list[Decision]]):
    op = "gc"
    result = list[Decision]
    dry_run: Annotated[bool, Field(description="Show what would happen; change nothing")] = False


class Reindex(Op[Reindexed]):
    op = "reindex"
    result = Reindexed


# The operations a client may run remotely: these, nothing else.
REQUESTS: dict[str, type[Op[Any]]] = {model.op: model for model in (
    Search, Read, Log, List, Doctor, Relationships, Linked, Stats, Insights, Books, SuggestMerges, Review,
    Add, Update, Append, Link, Delete, Restore, Ingest, IngestDocument, RecordResponse, Score, Verify, Merge, Gc, Reindex,
)}


def parse(op: Any, args: Any) -> Op[Any]:
    """A request as it arrived over the wire, checked: an unknown operation or argument, or a value of the
    wrong type, is a ValidationError in one sentence naming it."""
    model = REQUESTS.get(op) if isinstance(op, str) else None
    if model is None:
        raise ValidationError(f"unknown operation {op!r}")
    if not isinstance(args, dict):
        raise ValidationError(f"bad arguments for {op}: the arguments must be a JSON object, not {echo(args)}")
    return model(**args)


def unknown_clause(unknown: list[str], known: list[str]) -> str:
    """`no argument `limt`; its arguments are query, limit`"""
    listed = ", ".join(f"`{n}`" for n in unknown)
    noun = "argument" if len(unknown) == 1 else "arguments"
    return f"no {noun} {listed}; its arguments are {', '.join(known) or 'none'}"


def problems(error: PydanticError) -> str:
    """`argument `limit` should be less than or equal to 50 (got 500)`, one clause per bad argument."""
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "missing":
            parts.append(f"argument `{where}` is required")
            continue
        parts.append(f"argument `{where}` {expected(item)} (got {echo(item.get('input'))})")
    return "; ".join(parts)


def expected(item: Any) -> str:
    """What pydantic expected, as the rest of a sentence: `should be greater than 0`."""
    said: str = item["msg"].removeprefix("Input ").removeprefix("Value error, ")
    return said[:1].lower() + said[1:]


def echo(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= ECHO_CHARS else text[: ECHO_CHARS - 1] + "…"
