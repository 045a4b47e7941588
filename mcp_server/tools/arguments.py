"""Tool arguments checked before a tool runs: unknown names refused, bad values told in one sentence.

The SDK validates arguments with pydantic and passes its dump to the model: several lines, error
codes and a documentation URL per field, and it silently drops arguments the tool does not have
(so `limt=3` looks like it worked). A model corrects itself best from one plain sentence naming
the argument, what it got and what was expected.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ..service.operations import problems, unknown_clause


def refuse_unknown_and_explain(mcp: MCPServer) -> None:
    """Wrap `mcp.call_tool` (the one door every tools/call goes through) with both checks."""
    call_tool = mcp.call_tool
    names: dict[str, list[str]] = {}

    async def checked(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if not names:
            names.update({tool.name: list(tool.input_schema.get("properties", {})) for tool in await mcp.list_tools()})
        known = names.get(name)
        if known is not None:
            unknown = sorted(set(arguments) - set(known))
            if unknown:
                raise ToolError(unknown_sentence(name, unknown, known))
        try:
            return await call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(invalid_sentence(name, exc.__cause__)) from None
            raise

    mcp.call_tool = checked  # type: ignore[method-assign]


def unknown_sentence(tool: str, unknown: list[str], known: list[str]) -> str:
    return f"{tool} has {unknown_clause(unknown, known)}."


def invalid_sentence(tool: str, error: ValidationError) -> str:
    """`search_memory: argument `limit` should be less than or equal to 50 (got 500).` (one sentence)"""
    return f"{tool}: {problems(error)}."
