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
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic import ValidationError as PydanticError

from vault.errors import ValidationError

from ..views.results import Added, Deleted, Restored, ReviewResult, ScoreResult, SearchResult, VerifyResult
from ..views.view import MemoryView

R = TypeVar("R")
Json = dict[str, Any]
# A value longer than this is not echoed back whole in an error: the caller sent it, it only needs to recognise it.
ECHO_CHARS = 60


class Op(BaseModel, Generic[R]):
    """One operation's arguments; `op` names the MemoryService method that runs it, `result` its answer's type."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    op: ClassVar[str]
    result: ClassVar[Any] = Json

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

    def arguments(self) -> dict[str, Any]:
        """The arguments the caller gave (the service's own defaults stand for the rest)."""
        return {name: getattr(self, name) for name in self.model_fields_set}

    def wire(self) -> dict[str, Any]:
        """The arguments as JSON, for the server's /api/op."""
        return self.model_dump(mode="json", include=self.model_fields_set)

    def result_of(self, data: Any) -> R:
        """The service's JSON answer (from this process or the server) as the operation's result type."""
        return adapter(self.result).validate_python(data)

    def run_on(self, service: Any) -> Any:
        """Call the service method this operation names; its answer in JSON shapes (what the server sends)."""
        return getattr(service, self.op)(**self.arguments())


@cache
def adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def as_json(value: Any) -> Any:
    """A result as the JSON the service sent (the keys a memory did not set stay absent)."""
    kind: Any = type(value)
    return adapter(kind).dump_python(value, mode="json", exclude_unset=True)


class Operations(Protocol):
    """Whoever runs memdir's operations: the MemoryService, or the remote client of this user's server."""

    def run(self, request: Op[R]) -> R: ...


# -- reading -----------------------------------------------------------------------------------


class Search(Op[SearchResult]):
    op = "search"
    result = SearchResult
    query: str | None = None
    days_back: float | None = None
    id: str | None = None
    collections: list[str] = []
    types: list[str] = []
    tags: list[str] = []
    sort_by: Literal["relevance", "recency", "score"] = "relevance"
    limit: int | None = None
    include_superseded: bool = False
    session: str | None = None
    include_private: bool = True
    as_of: str | None = None
    after: str | None = None
    before: str | None = None


class Read(Op[MemoryView]):
    op = "read"
    result = MemoryView
    ref: str
    session: str | None = None
    include_private: bool = True
    version: str | None = None


class Log(Op[Json]):
    op = "log"
    ref: str
    include_private: bool = True


class List(Op[list[MemoryView]]):
    op = "list"
    result = list[MemoryView]
    include_private: bool = True


class Doctor(Op[Json]):
    op = "doctor"


class Relationships(Op[Json]):
    op = "relationships"
    memory_id: str
    relationship_type: str | None = None
    include_private: bool = True


class Linked(Op[Json]):
    op = "linked"
    target: str
    query: str | None = None
    limit: int = 10
    include_private: bool = True


class Stats(Op[Json]):
    op = "stats"
    include_private: bool = True


class Insights(Op[Json]):
    op = "insights"
    query: str
    session: str | None = None
    limit: int = 6
    include_private: bool = True


class Books(Op[list[Json]]):
    op = "books"
    result = list[Json]


class SuggestMerges(Op[list[Json]]):
    op = "suggest_merges"
    result = list[Json]
    threshold: float | None = None
    type: str | None = None
    limit: int = 10


class Review(Op[ReviewResult]):
    op = "review"
    result = ReviewResult
    dismiss: list[str] = []


# -- writing -----------------------------------------------------------------------------------


class Add(Op[Added]):
    op = "add"
    result = Added
    content: str
    type: str | None = None
    tags: list[str] = []
    title: str | None = None
    collection: str = "memory_bank"
    importance: float | None = None
    confidence: float | None = None
    always_inject: bool = False
    privacy: Literal["shared", "private"] = "shared"
    allow_secret: bool = False
    session: str | None = None


class Update(Op[MemoryView]):
    op = "update"
    result = MemoryView
    memory_id: str
    content: str | None = None
    fields: Json | None = None
    allow_secret: bool = False
    session: str | None = None


class Append(Op[MemoryView]):
    op = "append"
    result = MemoryView
    memory_id: str
    content: str
    allow_secret: bool = False
    session: str | None = None


class Link(Op[Json]):
    op = "link"
    source: str
    target: str
    relation: str = "depends_on"
    session: str | None = None


class Delete(Op[Deleted]):
    op = "delete"
    result = Deleted
    memory_id: str


class Restore(Op[Restored]):
    op = "restore"
    result = Restored
    memory_id: str


class Ingest(Op[list[Json]]):
    op = "ingest"
    result = list[Json]
    paths: list[str]
    title: str | None = None
    tags: list[str] = []
    dry_run: bool = False
    session: str | None = None


class RecordResponse(Op[MemoryView]):
    op = "record_response"
    result = MemoryView
    key_takeaway: str
    initial_score: str | None = None
    session: str | None = None
    privacy: Literal["shared", "private"] = "shared"
    allow_secret: bool = False


class Score(Op[ScoreResult]):
    op = "score"
    result = ScoreResult
    memory_scores: dict[str, str]
    outcome: str | None = None
    session: str | None = None


class Verify(Op[VerifyResult]):
    op = "verify"
    result = VerifyResult
    ids: list[str]


class Merge(Op[MemoryView]):
    op = "merge"
    result = MemoryView
    ids: list[str]
    title: str
    content: str | None = None
    allow_secret: bool = False
    session: str | None = None


# -- lifecycle and the index ---------------------------------------------------------------------


class Gc(Op[list[Json]]):
    op = "gc"
    result = list[Json]
    dry_run: bool = False


class Reindex(Op[Json]):
    op = "reindex"


# The operations a client may run remotely: these, nothing else.
REQUESTS: dict[str, type[Op[Any]]] = {model.op: model for model in (
    Search, Read, Log, List, Doctor, Relationships, Linked, Stats, Insights, Books, SuggestMerges, Review,
    Add, Update, Append, Link, Delete, Restore, Ingest, RecordResponse, Score, Verify, Merge, Gc, Reindex,
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
        expected = item["msg"].removeprefix("Input ").removeprefix("Value error, ")
        expected = expected[:1].lower() + expected[1:]
        parts.append(f"argument `{where}` {expected} (got {echo(item.get('input'))})")
    return "; ".join(parts)


def echo(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= ECHO_CHARS else text[: ECHO_CHARS - 1] + "…"
