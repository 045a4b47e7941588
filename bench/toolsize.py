"""How many characters a model reads from memdir's list tools (what Claude Code passes it).

    python bench/toolsize.py            # the bundled example vault, hashing embedder, limit 5

Claude Code gives the model JSON.stringify(structuredContent) whenever a tool returns one and drops
the text block; other clients read the text block. Both are measured, for the same five queries.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import anyio

BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
from mcp import Client  # noqa: E402

from mcp_server.tools import mcp_tools as tools  # noqa: E402
from mcp_server.service.app import App  # noqa: E402
from mcp_server.service.memory_service import MemoryService  # noqa: E402

EXAMPLE = BENCH.parent / ".memories-example"
QUERIES = ["how do we lock statement imports", "deploy to fly", "database migrations",
           "test fixtures", "why did the build fail"]


async def measure(service: MemoryService) -> dict[str, list[int]]:
    sizes: dict[str, list[int]] = {"structured": [], "text": [], "hits": []}
    async with Client(tools.build(service)) as client:
        for query in QUERIES:
            result = await client.call_tool("search_memory", {"query": query, "limit": 5})
            structured = result.structured_content or {}
            sizes["structured"].append(len(json.dumps(structured, ensure_ascii=False, separators=(",", ":"))))
            sizes["text"].append(sum(len(block.text) for block in result.content))
            sizes["hits"].append(len(structured.get("results", [])))
    return sizes


@contextmanager
def example_service() -> Iterator[MemoryService]:
    """The bundled example vault, copied to a scratch folder, with the hashing embedder: open, then closed."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "vault"
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".memdir"))
        (root / "memdir.toml").write_text('[search]\nembedder = "hashing-256"\n')
        app = App(root)
        try:
            yield MemoryService(app)
        finally:
            app.close()


def main() -> None:
    with example_service() as service:
        sizes = anyio.run(measure, service)
    print(json.dumps({key: {"median": statistics.median(values), "each": values} for key, values in sizes.items()}))


if __name__ == "__main__":
    main()
