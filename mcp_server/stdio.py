"""`memdir mcp`: the stdio MCP server an assistant launches, forwarding every call to the vault server.

Many assistant sessions therefore share one index, one model and one writer. The proxy
starts the vault server when it is not running, reconnects (restarting it if it died) and
retries once when a call finds the connection gone. stdout is the protocol: nothing else is
ever printed there; logs go to .memdir/server.log.
"""

from __future__ import annotations

import logging
import os
import signal
import uuid
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
import httpx2

from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CONNECTION_CLOSED,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from . import client, tool_list
from .descriptions import INSTRUCTIONS
from .logs import configure

log = logging.getLogger("memdir.stdio")
_CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    httpx2.TransportError, anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, ConnectionError,
    client.Unavailable,
)


def _connection_lost(exc: BaseException) -> bool:
    """Whether an error means "the vault server is gone" (reconnect) rather than "the tool failed"."""
    if isinstance(exc, BaseExceptionGroup):
        return any(_connection_lost(e) for e in exc.exceptions)
    if isinstance(exc, _CONNECTION_ERRORS):
        return True
    return isinstance(exc, MCPError) and (exc.error.code == CONNECTION_CLOSED or "Session not found" in exc.error.message)


class Upstream:
    """One long-lived client of the vault server's /mcp endpoint, reconnected on demand.

    A Client owns task groups, which must be exited in the task that entered them; handlers run
    in their own tasks, so each Client lives in an owner task and handlers only borrow it.
    """

    def __init__(self, vault_root: Path, tasks: anyio.abc.TaskGroup) -> None:
        self.vault_root = vault_root
        self.tasks = tasks
        self.session = f"mcp-{uuid.uuid4().hex[:12]}"
        self._client: Client | None = None
        self._done: anyio.Event | None = None
        self._lock = anyio.Lock()

    async def _owner(self, done: anyio.Event, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        started = False
        try:
            info = await anyio.to_thread.run_sync(client.ensure, self.vault_root)
            headers = {"Authorization": f"Bearer {info.token}", "X-Memdir-Session": self.session,
                       "X-Memdir-Client-Pid": str(os.getppid())}
            async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http:
                url = f"http://127.0.0.1:{info.port}/mcp"
                async with Client(streamable_http_client(url, http_client=http), cache=None) as upstream:
                    task_status.started(upstream)
                    started = True
                    await done.wait()
        except Exception as exc:  # an ExceptionGroup too; it must never cancel the lifespan's task group
            if not started:
                raise
            log.warning("connection to the vault server ended: %r", exc)
        finally:
            if self._done is done:
                self._client = self._done = None

    async def _connect(self) -> Client:
        async with self._lock:
            if self._client is None:
                done = anyio.Event()
                self._client = await self.tasks.start(self._owner, done)
                self._done = done
            return self._client

    async def reset(self) -> None:
        async with self._lock:
            if self._done is not None:
                self._done.set()
            self._client = self._done = None

    async def run(self, operation: Callable[[Client], Awaitable[Any]]) -> Any:
        for attempt in (1, 2):
            try:
                return await operation(await self._connect())
            except Exception as exc:  # noqa: BLE001 - connection errors are told apart right below
                if attempt == 2 or not _connection_lost(exc):
                    raise
                log.warning("vault server connection lost (%r); reconnecting and retrying once", exc)
                await self.reset()


async def _warm(upstream: Upstream) -> None:
    try:
        await upstream.run(lambda c: c.send_ping())
    except Exception as exc:  # noqa: BLE001 - the first tool call reports it; warming is best effort
        log.warning("could not reach the vault server yet: %r", exc)


def build(vault_root: Path) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Upstream]]:
        async with anyio.create_task_group() as tasks:
            upstream = Upstream(vault_root, tasks)
            tasks.start_soon(_warm, upstream)  # start (or reach) the vault server while the client initializes
            try:
                yield {"upstream": upstream}
            finally:
                await upstream.reset()

    static = [Tool.model_validate(tool) for tool in tool_list.load()]

    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=static)  # at once: a cold vault server must not cost a session its tools

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        try:
            result = await ctx.lifespan_context["upstream"].run(lambda c: c.call_tool(params.name, params.arguments or {}))
        except Exception as exc:
            if not _connection_lost(exc):
                raise
            text = f"the memdir vault server for {vault_root} could not be reached or started; see .memdir/server.log"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        meta = {k: v for k, v in (result.meta or {}).items() if not k.startswith("io.modelcontextprotocol/")} or None
        return CallToolResult(content=result.content, structured_content=result.structured_content,
                              is_error=result.is_error, _meta=meta)

    return Server("memdir", instructions=INSTRUCTIONS, lifespan=lifespan, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def run_stdio(vault_root: Path) -> None:
    configure(vault_root, name="stdio")
    server = build(vault_root)
    # Claude Code ends a session's server with SIGINT and falls back to SIGTERM when it lingers.
    # The proxy holds no state of its own (the vault server does), so it leaves at once.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _leave)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def _leave(signum: int, frame: Any) -> None:
    logging.shutdown()
    os._exit(0)
