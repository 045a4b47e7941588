"""MCP tool-call latency through the stdio client, with a warm vault server.

    python bench/mcp_latency.py --json                  # 1k and 10k memories, the real model
    python bench/mcp_latency.py --sizes 1000 --json

The client is the MCP SDK's own stdio client talking to `memdir mcp` (the proxy an assistant
launches), which forwards to the vault server: the path a real assistant's call takes. Each
latency is one call_tool round trip; search queries are distinct (no query embedding is reused).
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

import anyio

from mcp import Client, StdioServerParameters

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from servers import MEMDIR, latency_summary, run_sizes, warm_server  # noqa: E402
from speed import queries  # noqa: E402
from vault import Vault  # noqa: E402


async def timed(session: Client, tool: str, arguments: dict) -> float:
    started = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content}")
    return elapsed


async def session_latencies(root: Path, questions: list[str], calls: int) -> dict:
    ids = [m.id for m in Vault(root).scan().memories if m.collection in ("history", "patterns", "working")]
    rng = random.Random(5)
    params = StdioServerParameters(command=MEMDIR[0], args=[*MEMDIR[1:], "mcp", "--vault", str(root)],
                                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
    async with Client(params) as session:
        for question in questions[:5]:
            await timed(session, "search_memory", {"query": question, "limit": 5})  # warm the connection
        searches = [await timed(session, "search_memory", {"query": q, "limit": 5}) for q in questions[5:5 + calls]]
        scores = []
        for _ in range(calls):
            picked = rng.sample(ids, 3)
            scores.append(await timed(session, "score_memories", {
                "outcome": "unknown", "memory_scores": dict(zip(picked, ("worked", "unknown", "partial")))}))
    return {"search_memory": latency_summary(searches, "calls"), "score_memories": latency_summary(scores, "calls")}


def measure(size: int, data: Path, embedder: str, calls: int) -> dict:
    questions = queries(calls + 5, data)
    with warm_server(size, data, embedder) as root:
        latencies = anyio.run(session_latencies, root, questions, calls)
    return {"memories": size, **latencies}


def line(r: dict) -> str:
    return (f"{r['memories']:>6} memories: search_memory p50 {r['search_memory']['p50_ms']} ms "
            f"p95 {r['search_memory']['p95_ms']} ms; score_memories p50 {r['score_memories']['p50_ms']} ms "
            f"p95 {r['score_memories']['p95_ms']} ms")


if __name__ == "__main__":
    run_sizes(__doc__, "calls", "calls per tool and size", measure, line)
