"""The MCP tools are derived from the operation models (tools/table.py): the schemas the SDK serves are the
models', an argument the tool does not narrow is exactly its operation's field, and a bad value is refused by
the operation's own check, in the same words the CLI gets."""

from __future__ import annotations

from typing import get_args

import pytest
from pydantic import BaseModel

from mcp import Client
from mcp_server.service import operations as ops
from mcp_server.tools import mcp_tools
from mcp_server.tools.table import BY_NAME, TOOLS
from pydantic_core import PydanticUndefined
from vault.errors import ValidationError

pytestmark = pytest.mark.anyio

# What the assistants call today (the clients' settings and tests/e2e use these names): they must not change.
ARGUMENTS = {
    "get_context_insights": ["query"],
    "search_memory": ["query", "days_back", "id", "collections", "type", "tags", "sort_by", "limit", "after",
                      "before", "as_of"],
    "add_to_memory_bank": ["content", "type", "tags", "importance", "confidence", "always_inject", "privacy",
                           "title", "allow_secret"],
    "update_memory": ["id", "content", "fields", "allow_secret"],
    "append_memory": ["id", "content", "allow_secret"],
    "read_memory": ["id", "version"],
    "delete_memory": ["id"],
    "verify_memory": ["ids"],
    "get_review_queue": [],
    "ingest_document": ["path", "title", "tags"],
    "score_memories": ["outcome", "memory_scores"],
    "record_response": ["key_takeaway", "initial_score", "allow_secret", "privacy"],
    "get_memory_relationships": ["id", "relationship_type"],
    "link_memories": ["source", "target", "relation"],
    "search_linked_memories": ["target", "query", "limit"],
    "suggest_memory_merges": ["threshold", "type", "limit"],
    "merge_memories": ["ids", "title", "content", "allow_secret"],
    "get_memory_stats": [],
}


def without_titles(schema: dict) -> dict:
    """A JSON schema minus pydantic's generated titles (the model's class name differs, nothing else may)."""
    if isinstance(schema, dict):
        return {k: without_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [without_titles(v) for v in schema]
    return schema


async def served() -> dict:
    async with Client(mcp_tools.build(None)) as client:  # type: ignore[arg-type]
        return {tool.name: tool for tool in (await client.list_tools()).tools}


async def test_every_tool_serves_the_schema_its_row_derives_from_the_operation_and_keeps_its_argument_names():
    tools = await served()
    assert list(tools) == [tool.name for tool in TOOLS]
    for row in TOOLS:
        schema = tools[row.name].input_schema
        assert list(schema.get("properties", {})) == ARGUMENTS[row.name], row.name
        assert without_titles(schema) == without_titles(row.arguments_model().model_json_schema()), row.name
        assert tools[row.name].description == row.description


async def test_an_argument_the_tool_does_not_narrow_is_its_operations_field_as_declared():
    tools = await served()
    plain = [(row, name) for row in TOOLS for name, arg in row.args.items() if arg.narrow is None]
    assert len(plain) >= 10  # the derivation is the rule, narrowing the exception
    for row, name in plain:
        field = row.op.model_json_schema()["properties"][row.field_of(name)]
        property = tools[row.name].input_schema["properties"][name]
        if row.args[name].default is not PydanticUndefined:
            field = {k: v for k, v in field.items() if k != "default"}
            property = {k: v for k, v in property.items() if k != "default"}
        assert without_titles(property) == without_titles(field), f"{row.name}.{name}"


def test_every_argument_fills_a_field_of_its_operation():
    for row in TOOLS:
        assert all(row.field_of(name) in row.op.model_fields for name in row.args), row.name
        assert row.op in ops.REQUESTS.values(), f"{row.name} runs an operation the contract does not list"


async def test_days_back_is_checked_once_by_the_operation_for_the_cli_and_the_tools_alike():
    with pytest.raises(ValidationError, match=r"bad arguments for search: argument `days_back` should be greater "
                                              r"than 0 \(got 0\)"):
        ops.Search(days_back=0)
    async with Client(mcp_tools.build(None)) as client:  # type: ignore[arg-type]
        refused = await client.call_tool("search_memory", {"days_back": 0})
    assert refused.is_error
    assert refused.content[0].text == "search_memory: argument `days_back` should be greater than 0 (got 0)."
    assert "days_back" in BY_NAME["search_memory"].args and BY_NAME["search_memory"].args["days_back"].narrow is None


async def test_every_tool_serves_the_output_schema_of_its_row():
    tools = await served()
    for row in TOOLS:
        served_schema = tools[row.name].output_schema
        assert without_titles(served_schema) == without_titles(row.out.model_json_schema()), row.name


def model_in(annotation: object) -> type[BaseModel] | None:
    """The model an output field holds (itself, in a list, or optional), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for inner in get_args(annotation):
        found = model_in(inner)
        if found is not None:
            return found
    return None


def test_a_tools_output_shows_its_operations_result_and_adds_no_field_of_its_own():
    """The output models quote text and describe fields for the model; the fields are the result's, so the
    structured output cannot drift from what the operation answers. Memory lists (`lists`) are the compact
    outward view, a face of their own (views/outward.py)."""

    def check(out: type[BaseModel], result: type[BaseModel], where: str, compact: tuple[str, ...] = ()) -> None:
        for name, info in out.model_fields.items():
            if name == "note":  # the quoting note: the model reads text as data
                continue
            assert name in result.model_fields, f"{where}.{name} is not a field of {result.__name__}"
            inner_out, inner_result = model_in(info.annotation), model_in(result.model_fields[name].annotation)
            if name not in compact and inner_out is not None and inner_result is not None:
                check(inner_out, inner_result, f"{where}.{name}")

    for row in TOOLS:
        result = row.op.result
        if row.wrap:  # a list answer, wrapped as {wrap: [...]}
            item = get_args(result)[0]
            inner = model_in(row.out.model_fields[row.wrap].annotation)
            assert inner is not None, row.name
            check(inner, item, f"{row.name}.{row.wrap}[]")
        else:
            check(row.out, result, row.name, row.lists)
