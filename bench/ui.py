"""Server time of each web view page at N memories (issue 31's budget: 300 ms at 10k).

    python bench/ui.py --json                       # 10k memories (LoCoMo turns), hashing embedder
    python bench/ui.py --size 1000 --embedder all-MiniLM-L6-v2

The vault is generated and indexed once (review.build); the pages are then requested in-process through
the server's real Guard and /ui mount, as a signed-in browser would, each `--runs` times after one
warm-up request: medians and maxima in ms. The first inbox request pays for the review passes (bench/review.py
measures those apart); it is reported as `first_inbox_ms`.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
from review import build  # noqa: E402
from servers import DEFAULT_DATA  # noqa: E402

# bench/mcp.py would stand in for the MCP SDK that the server's modules import.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]

from mcp_server.config import load_config  # noqa: E402
from mcp_server.service.app import App  # noqa: E402
from mcp_server.service.memory_service import MemoryService  # noqa: E402
from tests.mcp_server.test_web_ui import Browser  # noqa: E402  (the in-process browser the tests use)


def measure(root: Path, size: int, embedder: str, runs: int, data: Path) -> dict:
    if not (root / ".memdir" / "index").is_dir():
        build(root, size, data, embedder)
    app = App(root, config=load_config(root))
    service = MemoryService(app)
    try:
        browser = Browser(service)
        browser.sign_in()
        started = time.perf_counter()
        assert browser.request("GET", "/ui/")[0] == 200
        first = (time.perf_counter() - started) * 1000
        linked = next(m for m in app.index.memories.values() if app.index.graph.backlinks(m.id) or m.uses) \
            if any(app.index.graph.backlinks(m.id) for m in list(app.index.memories.values())[:50]) \
            else next(iter(app.index.memories.values()))
        pages = {"inbox": "/ui/", "memory": f"/ui/memory/{linked.id}", "search": "/ui/search?q=deploy+database+migration",
                 "turns": "/ui/turns"}
        timings = {}
        for name, path in pages.items():
            browser.request("GET", path)
            samples = []
            for _ in range(runs):
                started = time.perf_counter()
                status, _, body = browser.request("GET", path)
                samples.append((time.perf_counter() - started) * 1000)
                assert status == 200, (name, status, re.sub(r"<[^>]+>", " ", body)[:300])
            timings[name] = {"median_ms": round(statistics.median(samples), 1), "max_ms": round(max(samples), 1)}
        return {"memories": len(app.index.memories), "embedder": embedder, "runs": runs,
                "first_inbox_ms": round(first, 1), "pages": timings}
    finally:
        app.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--embedder", default="hashing-256")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--vault", type=Path, help="keep (and reuse) the indexed vault here")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = args.vault or Path(tempfile.mkdtemp(prefix="memdir-ui-bench-")) / "vault"
    result = measure(root, args.size, args.embedder, args.runs, args.data)
    print(json.dumps(result, indent=2) if args.json else result)


if __name__ == "__main__":
    main()
