"""memdir's MCP tools: the rows of tools/table.py registered with the SDK, each running its operation on the
MemoryService and returning data and a readable rendering.

The descriptions are the only instructions a fresh assistant gets, so they teach the whole
system. They are static text (snapshot-tested): memory content never becomes part of them,
and in results it is always quoted as data.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Callable, TypeVar

from pydantic_core import PydanticUndefined

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from vault import VaultError

from ..client import IDEMPOTENCY_HEADER
from ..service.memory_service import MemoryService
from ..service.operations import as_json
from ..views import outward
from .arguments import refuse_unknown_and_explain
from .descriptions import INSTRUCTIONS
from .table import TOOLS, Tool

T = TypeVar("T")


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

    def respond(tool: Tool, arguments: dict[str, Any], ctx: Context) -> CallToolResult:
        """Run the tool's operation; memdir's errors (a bad argument too) become messages the model sees
        (ToolError). The memory lists the tool names become compact views (outward.py says why: Claude Code
        shows the model the structured result, so that is what must be small and quoted); the text of any
        other answer is rendered from the operation's typed result."""
        try:
            request = tool.request(arguments, lambda: session_of(ctx))
            run: Callable[[], Any] = lambda: request.run_on(service)  # noqa: E731
            result = once(ctx, request.op, run)() if tool.once else run()
        except VaultError as exc:  # EmbedderUnavailable too: the model's host down, the model must see why (its log line)
            raise ToolError(str(exc)) from None
        raw = as_json(result)
        data = {tool.wrap: raw} if tool.wrap else raw
        if tool.lists:
            data = {**data, **{key: [outward.hit(view) for view in getattr(result, key)] for key in tool.lists}}
        text = tool.text(data if tool.lists else result)
        structured = tool.out.model_validate(data).model_dump(mode="json", exclude_none=bool(tool.lists))
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    def register(tool: Tool) -> None:
        def run(ctx: Context, **arguments: Any) -> CallToolResult:
            return respond(tool, arguments, ctx)

        # The SDK reads a tool's arguments from its signature: this one is the operation's, as the row derives it.
        parameters = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)] + [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind,
                              default=inspect.Parameter.empty if default is PydanticUndefined else default)
            for name, (kind, default) in tool.parameters().items()]
        returns = Annotated[CallToolResult, tool.out]
        run.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
        run.__annotations__ = {"ctx": Context, **{p.name: p.annotation for p in parameters[1:]}, "return": returns}
        run.__name__ = tool.name
        mcp.add_tool(run, name=tool.name, description=tool.description, annotations=ToolAnnotations(**tool.hints))

    for tool in TOOLS:
        register(tool)

    refuse_unknown_and_explain(mcp)
    return mcp
