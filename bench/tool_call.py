"""One in-process search tool call, timed: what the typed contract costs between the SDK and the service.

    python bench/tool_call.py            # the bundled example vault, hashing embedder; medians in ms
    python bench/tool_call.py --calls 400

Medians of wall and of CPU time (the process's, all threads). Two paths over the same queries: `search_memory`
through the MCP SDK's in-process client (arguments checked, the Search request built, the service run, the answer
rendered and validated against its output schema), and the bare `service.run(Search(...))` underneath it. Compare two checkouts in one run by calling this script with
each on PYTHONPATH in turn (the machine's load shifts between runs; ratios within one run hold better).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import anyio

BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
from mcp import Client  # noqa: E402

sys.path.insert(0, str(BENCH))
from mcp_server.service import operations as ops  # noqa: E402
from mcp_server.service.memory_service import MemoryService  # noqa: E402
from mcp_server.tools import mcp_tools as tools  # noqa: E402
from toolsize import example_service  # noqa: E402

QUERIES = ["how do we lock statement imports", "deploy to fly", "database migrations", "test fixtures",
           "why did the build fail", "auth token refresh", "flaky test", "release checklist"]


async def tool_calls(service: MemoryService, calls: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    async with Client(tools.build(service)) as client:
        for n in range(calls):
            started, used = time.perf_counter(), time.process_time()
            result = await client.call_tool("search_memory", {"query": QUERIES[n % len(QUERIES)], "limit": 5})
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - used) * 1000)
            assert not result.is_error, result.content
    return wall, cpu


def service_calls(service: MemoryService, calls: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for n in range(calls):
        started, used = time.perf_counter(), time.process_time()
        service.run(ops.Search(query=QUERIES[n % len(QUERIES)], limit=5))
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - used) * 1000)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    with example_service() as service:
        service_calls(service, 20)  # warm: caches, first imports
        tool = anyio.run(tool_calls, service, calls)
        bare = service_calls(service, calls)
    # CPU time (all threads: the SDK runs the tool in a worker) moves less than wall time on a loaded machine.
    print(json.dumps({"tool_call_ms": round(statistics.median(tool[0]), 2), "tool_call_cpu_ms": round(statistics.median(tool[1]), 2),
                      "service_run_ms": round(statistics.median(bare[0]), 2),
                      "service_run_cpu_ms": round(statistics.median(bare[1]), 2), "calls": calls}))


if __name__ == "__main__":
    main()
