"""The MCP tools as rows over the operations: each names its operation, which of its arguments a model sees, the
description the model reads and how the answer is shown. Types, constraints and argument descriptions come from
the operation models (service/operations.py), so a tool restates none of them; `mcp_tools.build` registers these
rows with the SDK, and `tests/mcp_server/test_tool_table.py` checks the served schemas against the models.
A tool's output schema is its operation's result, as tools/outputs.py shows it to a model.

The tool and argument names are what the assistants already call: they stay, even where the operation's
field is named otherwise (a tool's `id` fills `memory_id`).

No MCP SDK here: pydantic, the operations and the static descriptions only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Literal

from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from vault.model import BANK_DEFAULT

from ..service import operations as ops
from ..service.operations import Count, MemoryId, MemoryType, Outcome, Query, Relation, Tag, Text, Title
from ..views import render
from ..views.view import MemoryView
from . import descriptions as said
from .outputs import output_model

# What a tool does to the vault, as MCP's annotations say it (clients ask before destructive calls).
READ = {"read_only_hint": True, "open_world_hint": False}
ADD = {"read_only_hint": False, "destructive_hint": False, "idempotent_hint": False, "open_world_hint": False}
CHANGE = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": True, "open_world_hint": False}
APPEND = {"read_only_hint": False, "destructive_hint": False, "idempotent_hint": False, "open_world_hint": False}
REMOVE = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False, "open_world_hint": False}


@dataclass(frozen=True)
class Arg:
    """One argument a model sees: the operation's field it fills, with the model's face where it differs."""

    field: str = ""  # the operation's field; "" = the argument's own name
    narrow: Any = None  # a narrower type (one of operations.py's), e.g. ids only where the CLI also takes paths
    default: Any = PydanticUndefined  # the model's default where it differs from the operation's
    required: bool = False  # required of a model, though the operation has a default
    one: bool = False  # the model gives one value where the operation takes a list


@dataclass(frozen=True)
class Tool:
    name: str
    op: type[ops.Op[Any]]
    description: str
    hints: dict[str, bool]
    text: Callable[[Any], str]  # the readable answer: from the operation's typed result, or with `lists` from
    # the answer whose memory lists are outward views
    args: dict[str, Arg] = field(default_factory=dict)
    once: bool = False  # a write the proxy may retry: run once per idempotency key
    lists: tuple[str, ...] = ()  # memory lists in the answer, shown as compact outward views
    wrap: str = ""  # a list answer, wrapped as {wrap: [...]}

    @property
    def out(self) -> type[BaseModel]:
        """The tool's structured output: its operation's result as the model reads it (outputs.py)."""
        return output_model(self.op.result, f"{self.op.__name__}Out", self.lists, self.wrap)

    def field_of(self, argument: str) -> str:
        return self.args[argument].field or argument

    def parameters(self) -> dict[str, tuple[Any, Any]]:
        """Each argument's annotated type and default (PydanticUndefined: required), derived from the operation."""
        derived = {}
        for name, arg in self.args.items():
            info: FieldInfo = self.op.model_fields[self.field_of(name)]
            kind = arg.narrow if arg.narrow is not None else info.annotation
            described = [Field(description=info.description)] if info.description else []
            default = PydanticUndefined if arg.required else (
                arg.default if arg.default is not PydanticUndefined else info.get_default())
            derived[name] = (Annotated[(kind, *info.metadata, *described)] if info.metadata or described else kind,
                             default)
        return derived

    def arguments_model(self) -> type[BaseModel]:
        """The tool's arguments as one model (what its inputSchema is generated from)."""
        return create_model(f"{self.name}Arguments", **{  # type: ignore[call-overload]
            name: (kind, ... if default is PydanticUndefined else default)
            for name, (kind, default) in self.parameters().items()})

    def request(self, arguments: dict[str, Any], session: Callable[[], str | None]) -> ops.Op[Any]:
        """The operation a call runs: its arguments under the operation's names (an argument left at None is
        not given: the operation's default stands), and the caller's session when the operation takes one."""
        given: dict[str, Any] = {}
        for name, value in arguments.items():
            if value is not None:
                given[self.field_of(name)] = [value] if self.args[name].one else value
        if "session" in self.op.model_fields:
            given["session"] = session()
        return self.op(**given)


def changed(verb: str) -> Callable[[MemoryView], str]:
    return lambda view: render.changed(verb, view)


OneId = Arg("memory_id", narrow=MemoryId)
Ids = list[MemoryId]
Tags = Annotated[list[Tag], Field(max_length=20)]
Limit = Arg(narrow=Count, default=10)

TOOLS: tuple[Tool, ...] = (
    Tool("get_context_insights", ops.Insights, said.OVERVIEW, READ, render.insights,
         {"query": Arg(narrow=Annotated[str, Field(max_length=ops.QUERY_CHARS)])},
         lists=("always", "facts", "memories")),
    Tool("search_memory", ops.Search, said.SEARCH, READ, render.search_answer, {
        "query": Arg(narrow=Query | None),
        "days_back": Arg(),
        "id": Arg(narrow=MemoryId | None),
        "collections": Arg(narrow=Annotated[list[ops.Collection] | None, Field(max_length=5)], default=None),
        "type": Arg("types", narrow=MemoryType | None, default=None, one=True),
        "tags": Arg(narrow=Annotated[list[Tag] | None, Field(max_length=20)], default=None),
        "sort_by": Arg(),
        "limit": Limit,
        "after": Arg(narrow=ops.Moment | None),
        "before": Arg(narrow=ops.Moment | None),
        "as_of": Arg(narrow=ops.Version | None),
    }, lists=("results",)),
    Tool("add_to_memory_bank", ops.Add, said.ADD_BANK, ADD, render.added, {
             "content": Arg(narrow=Text),
             "type": Arg(narrow=MemoryType, default="fact"),
             "tags": Arg(narrow=Tags),
             "importance": Arg(narrow=Annotated[float, Field(ge=0, le=1)], default=BANK_DEFAULT),
             "confidence": Arg(narrow=Annotated[float, Field(ge=0, le=1)], default=BANK_DEFAULT),
             "always_inject": Arg(),
             "privacy": Arg(),
             "title": Arg(narrow=Annotated[str | None, Field(max_length=200)]),
             "allow_secret": Arg(),
         }, once=True),
    Tool("update_memory", ops.Update, said.UPDATE, CHANGE, changed("updated"), {
        "id": OneId, "content": Arg(narrow=Annotated[str | None, Field(max_length=20_000)]), "fields": Arg(),
        "allow_secret": Arg()}),
    Tool("append_memory", ops.Append, said.APPEND_TEXT, APPEND, changed("appended to"),
         {"id": OneId, "content": Arg(narrow=Text), "allow_secret": Arg()}, once=True),
    Tool("read_memory", ops.Read, said.READ_TEXT, READ, render.full_memory,
         {"id": Arg("ref", narrow=MemoryId), "version": Arg(narrow=ops.Version | None)}),
    Tool("delete_memory", ops.Delete, said.DELETE, REMOVE, render.deleted,
         {"id": OneId}, once=True),
    Tool("verify_memory", ops.Verify, said.VERIFY, APPEND, render.verified,
         {"ids": Arg(narrow=Annotated[Ids, Field(min_length=1, max_length=20)])}),
    Tool("get_review_queue", ops.Review, said.REVIEW, READ, render.review_items),
    Tool("ingest_document", ops.IngestDocument, said.INGEST, ADD, render.ingested,
         {"path": Arg(), "title": Arg(narrow=Annotated[str | None, Field(max_length=200)]),
          "tags": Arg(narrow=Annotated[list[str], Field(max_length=20)])}, wrap="results"),
    Tool("score_memories", ops.Score, said.SCORE, APPEND, render.score_answer,
         {"outcome": Arg(narrow=Outcome, required=True),
          "memory_scores": Arg(narrow=Annotated[dict[MemoryId, Outcome], Field(max_length=50)], default={})},
         once=True),
    Tool("record_response", ops.RecordResponse, said.RECORD, ADD, changed("recorded"), {
        "key_takeaway": Arg(narrow=Annotated[str, Field(min_length=1, max_length=2000)]),
        "initial_score": Arg(narrow=Literal["worked", "partial", "failed"] | None),
        "allow_secret": Arg(), "privacy": Arg()}, once=True),
    Tool("get_memory_relationships", ops.Relationships, said.RELATIONSHIPS, READ, render.relations,
         {"id": OneId, "relationship_type": Arg(narrow=Relation | None)}),
    Tool("link_memories", ops.Link, said.LINK, CHANGE, render.relations,
         {"source": Arg(narrow=MemoryId), "target": Arg(narrow=MemoryId), "relation": Arg()}),
    Tool("search_linked_memories", ops.Linked, said.LINKED, READ, render.linked,
         {"target": Arg(), "query": Arg(narrow=Query | None), "limit": Limit}, lists=("results",)),
    Tool("suggest_memory_merges", ops.SuggestMerges, said.SUGGEST, READ, render.suggested_merges,
         {"threshold": Arg(narrow=Annotated[float | None, Field(gt=0, le=1)]),
                                "type": Arg(narrow=MemoryType | None), "limit": Limit}, wrap="clusters"),
    Tool("merge_memories", ops.Merge, said.MERGE, REMOVE, changed("merged into"), {
        "ids": Arg(narrow=Annotated[Ids, Field(min_length=2, max_length=20)]), "title": Arg(narrow=Title),
        "content": Arg(narrow=Text, required=True), "allow_secret": Arg()}, once=True),
    Tool("get_memory_stats", ops.Stats, said.STATS, READ, render.stats),
)
BY_NAME = {tool.name: tool for tool in TOOLS}
