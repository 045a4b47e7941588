"""memdir's MCP tools: small typed functions over MemoryService, each returning data and a readable rendering.

The descriptions are the only instructions a fresh assistant gets, so they teach the whole
system. They are static text (snapshot-tested): memory content never becomes part of them,
and in results it is always quoted as data.
"""

from __future__ import annotations

from typing import Annotated, Any, Callable, Literal, TypeVar

from pydantic import Field

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from vault import VaultError
from vault.model import BANK_DEFAULT, COLLECTIONS, TYPES

from ..client import IDEMPOTENCY_HEADER
from ..views import outward, render
from ..views.view import MemoryView, views
from .arguments import refuse_unknown_and_explain
from .descriptions import (
    ADD_BANK,
    AS_OF,
    APPEND_TEXT,
    DELETE,
    INGEST,
    INSTRUCTIONS,
    LINK,
    LINKED,
    MERGE,
    OVERVIEW,
    READ_TEXT,
    RECORD,
    RELATIONSHIPS,
    SCORE,
    SEARCH,
    STATS,
    SUGGEST,
    REVIEW,
    UPDATE,
    VERIFY,
)
from .schemas import (
    AddOut,
    DeleteOut,
    IngestOut,
    InsightsOut,
    LinkedOut,
    MemoryOut,
    MergeSuggestionsOut,
    RelationshipsOut,
    ScoreOut,
    SearchOut,
    ReviewOut,
    StatsOut,
    VerifyOut,
)
from ..service.memory_service import MemoryService
from ..views.results import Added, Deleted, ReviewResult, ScoreResult, VerifyResult

Collection = Literal["working", "history", "patterns", "memory_bank", "books"]
MemoryType = Literal[
    "preference", "fact", "decision", "constraint", "learning", "objective", "context", "plan", "journal",
    "observation", "reflection", "history",
]
Outcome = Literal["worked", "partial", "failed", "unknown"]
MemoryId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                                description="A memory id as shown in [id:...] tags, e.g. m-7f3a9c2e")]
Content = Annotated[str, Field(min_length=1, max_length=20_000)]
Tag = Annotated[str, Field(min_length=1, max_length=64)]
# memdir refuses text that looks like a credential: memories are plain files that get committed and shared.
AllowSecret = Annotated[bool, Field(description=(
    "Only when the user explicitly asked to store it: keep content that looks like a credential (API key, "
    "token, private key, password) instead of refusing it."))]
assert set(COLLECTIONS) == set(Collection.__args__) and set(TYPES) == set(MemoryType.__args__)  # type: ignore[attr-defined]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
CHANGE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
APPEND = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
REMOVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)

T = TypeVar("T")


def shown(text_of: Callable[[MemoryView], str]) -> Callable[[dict[str, Any]], str]:
    """A one-memory rendering applied to a service result (the memory's JSON) read back into the model."""
    return lambda data: text_of(MemoryView.model_validate(data))


def changed(verb: str) -> Callable[[dict[str, Any]], str]:
    return shown(lambda view: render.changed(verb, view))


def build(service: MemoryService) -> MCPServer:
    mcp = MCPServer("memdir", instructions=INSTRUCTIONS, log_level="WARNING")

    def session_of(ctx: Context) -> str | None:
        headers = ctx.headers
        if headers is not None and headers.get("x-memdir-session"):
            pid = headers.get("x-memdir-client-pid")
            return service.conversation(headers["x-memdir-session"], int(pid) if pid and pid.isdigit() else None)
        # Without the proxy's header there is no stable identity (the protocol opens a new connection
        # object per request), so direct clients share one session rather than a new one per call.
        return "anonymous"

    def once(ctx: Context, name: str, call: Callable[[], T]) -> Callable[[], T]:
        """The call, run once per idempotency key: the `memdir mcp` proxy sends the same key when it retries."""
        headers = ctx.headers
        key = headers.get(IDEMPOTENCY_HEADER.lower()) if headers is not None else None
        return lambda: service.once(key, name, call)

    def respond(model: type[T], text_of: Callable[[Any], str], call: Callable[[], Any],
                lists: tuple[str, ...] = ()) -> CallToolResult:
        """Run one service call; memdir's errors become messages the model sees (ToolError). The memory
        lists named in `lists` become compact views (outward.py says why: Claude Code shows the model
        the structured result, so that is what must be small and quoted)."""
        try:
            data = call()
        except VaultError as exc:
            raise ToolError(str(exc)) from None
        if lists:
            data = {**data, **{key: [outward.hit(view) for view in views(data[key])] for key in lists}}
        structured = model.model_validate(data).model_dump(mode="json", exclude_none=bool(lists))  # type: ignore[attr-defined]
        return CallToolResult(content=[TextContent(type="text", text=text_of(data))], structured_content=structured)

    @mcp.tool(description=OVERVIEW, annotations=READ)
    def get_context_insights(
        query: Annotated[str, Field(min_length=1, max_length=2000, description="What you are about to work on")],
        ctx: Context,
    ) -> Annotated[CallToolResult, InsightsOut]:
        return respond(InsightsOut, render.insights, lambda: service.insights(query, session_of(ctx)),
                       lists=("always", "facts", "memories"))

    @mcp.tool(description=SEARCH, annotations=READ)
    def search_memory(
        ctx: Context,
        query: Annotated[str | None, Field(max_length=2000, description="Search by meaning and keywords")] = None,
        days_back: Annotated[int | None, Field(ge=1, le=365, description="Only the last N days")] = None,
        id: Annotated[MemoryId | None, Field(description="Look one memory up directly")] = None,
        collections: Annotated[list[Collection] | None, Field(max_length=5)] = None,
        type: MemoryType | None = None,
        tags: Annotated[list[Tag] | None, Field(max_length=20)] = None,
        sort_by: Literal["relevance", "recency", "score"] = "relevance",
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        after: Annotated[str | None, Field(max_length=40, description="Only memories created on or after this date")] = None,
        before: Annotated[str | None, Field(max_length=40, description="Only memories created before this date")] = None,
        as_of: Annotated[str | None, Field(max_length=100, description=AS_OF)] = None,
    ) -> Annotated[CallToolResult, SearchOut]:
        return respond(SearchOut, render.search_answer,
                       lambda: service.search(query=query, days_back=days_back, id=id, collections=collections or (),
                                              types=(type,) if type else (), tags=tags or (), sort_by=sort_by, limit=limit,
                                              session=session_of(ctx), after=after, before=before, as_of=as_of),
                       lists=("results",))

    @mcp.tool(description=ADD_BANK, annotations=ADD)
    def add_to_memory_bank(
        content: Content,
        ctx: Context,
        type: MemoryType = "fact",
        tags: Annotated[list[Tag], Field(max_length=20)] = [],  # noqa: B006 - pydantic copies defaults
        importance: Annotated[float, Field(ge=0, le=1)] = BANK_DEFAULT,
        confidence: Annotated[float, Field(ge=0, le=1)] = BANK_DEFAULT,
        always_inject: bool = False,
        privacy: Literal["shared", "private"] = "shared",
        title: Annotated[str | None, Field(max_length=200)] = None,
        allow_secret: AllowSecret = False,
    ) -> Annotated[CallToolResult, AddOut]:
        return respond(AddOut, lambda d: render.added(Added.model_validate(d)), once(ctx, "add", lambda: service.add(
            content, type=type, tags=tags, title=title, importance=importance, confidence=confidence,
            always_inject=always_inject, privacy=privacy, allow_secret=allow_secret, session=session_of(ctx))))

    @mcp.tool(description=UPDATE, annotations=CHANGE)
    def update_memory(
        id: MemoryId,
        ctx: Context,
        content: Annotated[str | None, Field(max_length=20_000)] = None,
        fields: Annotated[dict[str, Any] | None, Field(description="Frontmatter keys to set")] = None,
        allow_secret: AllowSecret = False,
    ) -> Annotated[CallToolResult, MemoryOut]:
        return respond(MemoryOut, changed("updated"),
                       lambda: service.update(id, content, fields, allow_secret=allow_secret, session=session_of(ctx)))

    @mcp.tool(description=APPEND_TEXT, annotations=APPEND)
    def append_memory(id: MemoryId, content: Content, ctx: Context,
                      allow_secret: AllowSecret = False) -> Annotated[CallToolResult, MemoryOut]:
        return respond(MemoryOut, changed("appended to"), once(ctx, "append",
                       lambda: service.append(id, content, allow_secret=allow_secret, session=session_of(ctx))))

    @mcp.tool(description=READ_TEXT, annotations=READ)
    def read_memory(
        id: MemoryId,
        ctx: Context,
        version: Annotated[str | None, Field(max_length=100, description=AS_OF)] = None,
    ) -> Annotated[CallToolResult, MemoryOut]:
        return respond(MemoryOut, shown(render.full_memory), lambda: service.read(id, session_of(ctx), version=version))

    @mcp.tool(description=DELETE, annotations=REMOVE)
    def delete_memory(id: MemoryId, ctx: Context) -> Annotated[CallToolResult, DeleteOut]:
        return respond(DeleteOut, lambda d: render.deleted(Deleted.model_validate(d)),
                       once(ctx, "delete", lambda: service.delete(id)))

    @mcp.tool(description=VERIFY, annotations=APPEND)
    def verify_memory(
        ids: Annotated[list[MemoryId], Field(min_length=1, max_length=20, description="Memories you checked against the code")],
    ) -> Annotated[CallToolResult, VerifyOut]:
        return respond(VerifyOut, lambda d: render.verified(VerifyResult.model_validate(d)), lambda: service.verify(ids))

    @mcp.tool(description=REVIEW, annotations=READ)
    def get_review_queue() -> Annotated[CallToolResult, ReviewOut]:
        return respond(ReviewOut, lambda d: render.review_items(ReviewResult.model_validate(d)), lambda: service.review())

    @mcp.tool(description=INGEST, annotations=ADD)
    def ingest_document(
        path: Annotated[str, Field(min_length=1, max_length=1000, description="File or folder inside the project")],
        ctx: Context,
        title: Annotated[str | None, Field(max_length=200)] = None,
        tags: Annotated[list[str], Field(max_length=20)] = [],  # noqa: B006
    ) -> Annotated[CallToolResult, IngestOut]:
        return respond(IngestOut, lambda d: render.ingested(d["results"]),
                       lambda: {"results": service.ingest_document(path, title, tags, session_of(ctx))})

    @mcp.tool(description=SCORE, annotations=APPEND)
    def score_memories(
        ctx: Context,
        outcome: Annotated[Outcome, Field(description="How the previous exchange went")],
        memory_scores: Annotated[dict[MemoryId, Outcome], Field(max_length=50)] = {},  # noqa: B006
    ) -> Annotated[CallToolResult, ScoreOut]:
        return respond(ScoreOut, lambda d: render.score_answer(ScoreResult.model_validate(d)),
                       once(ctx, "score", lambda: service.score(memory_scores, outcome, session_of(ctx))))

    @mcp.tool(description=RECORD, annotations=ADD)
    def record_response(
        key_takeaway: Annotated[str, Field(min_length=1, max_length=2000)],
        ctx: Context,
        initial_score: Literal["worked", "partial", "failed"] | None = None,
        allow_secret: AllowSecret = False,
        privacy: Literal["shared", "private"] = "shared",
    ) -> Annotated[CallToolResult, MemoryOut]:
        return respond(MemoryOut, changed("recorded"), once(ctx, "record_response", lambda: service.record_response(
            key_takeaway, initial_score, session=session_of(ctx), allow_secret=allow_secret, privacy=privacy)))

    @mcp.tool(description=RELATIONSHIPS, annotations=READ)
    def get_memory_relationships(
        id: MemoryId,
        relationship_type: Literal["supersedes", "depends_on", "contradicts", "derives_from", "links_to",
                                   "embeds"] | None = None,
    ) -> Annotated[CallToolResult, RelationshipsOut]:
        return respond(RelationshipsOut, render.relations, lambda: service.relationships(id, relationship_type))

    @mcp.tool(description=LINK, annotations=CHANGE)
    def link_memories(
        source: MemoryId,
        target: MemoryId,
        ctx: Context,
        relation: Literal["supersedes", "depends_on", "contradicts", "derives_from"] = "depends_on",
    ) -> Annotated[CallToolResult, RelationshipsOut]:
        return respond(RelationshipsOut, render.relations,
                       lambda: service.link(source, target, relation, session=session_of(ctx)))

    @mcp.tool(description=LINKED, annotations=READ)
    def search_linked_memories(
        target: Annotated[str, Field(min_length=1, max_length=300, description="A memory name or a project file path")],
        query: Annotated[str | None, Field(max_length=2000)] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> Annotated[CallToolResult, LinkedOut]:
        return respond(LinkedOut, render.linked, lambda: service.linked(target, query, limit), lists=("results",))

    @mcp.tool(description=SUGGEST, annotations=READ)
    def suggest_memory_merges(
        threshold: Annotated[float | None, Field(gt=0, le=1)] = None,
        type: MemoryType | None = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> Annotated[CallToolResult, MergeSuggestionsOut]:
        return respond(MergeSuggestionsOut, render.cluster_dicts,
                       lambda: {"clusters": service.suggest_merges(threshold, type, limit)})

    @mcp.tool(description=MERGE, annotations=REMOVE)
    def merge_memories(
        ids: Annotated[list[MemoryId], Field(min_length=2, max_length=20)],
        title: Annotated[str, Field(min_length=1, max_length=200)],
        content: Content,
        ctx: Context,
        allow_secret: AllowSecret = False,
    ) -> Annotated[CallToolResult, MemoryOut]:
        return respond(MemoryOut, changed("merged into"), once(ctx, "merge",
                       lambda: service.merge(ids, title, content, allow_secret=allow_secret, session=session_of(ctx))))

    @mcp.tool(description=STATS, annotations=READ)
    def get_memory_stats() -> Annotated[CallToolResult, StatsOut]:
        return respond(StatsOut, render.stats, service.stats)

    refuse_unknown_and_explain(mcp)
    return mcp
