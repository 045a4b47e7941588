"""The tool list `memdir mcp` answers before the vault server is up.

Claude Code asks for tools right after it starts a session and waits about 1.7 s; a cold vault
server needs several seconds (model, indices), so a first session used to get no memdir tools at
all. The list is static (descriptions never carry vault content), so the proxy answers from this
snapshot at once and only tool calls wait for the server. `tests/mcp_server/test_stdio_static.py`
fails when the snapshot and the tools differ; regenerate it with `python -m mcp_server.tools.tool_list`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("tool_list.json")


def load() -> list[dict[str, Any]]:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


async def current() -> list[dict[str, Any]]:
    """The tools as the vault server lists them (built without a vault: listing calls nothing)."""
    from mcp import Client

    from . import mcp_tools as tools

    async with Client(tools.build(None)) as client:  # type: ignore[arg-type]
        listed = (await client.list_tools()).tools
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed]


def main() -> None:
    import anyio

    SNAPSHOT.write_text(json.dumps(anyio.run(current), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}")


if __name__ == "__main__":
    main()
