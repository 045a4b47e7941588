"""How long the review inbox takes to build: `memdir review`'s work at N memories (in-process, index warm).

    python bench/review.py --json                 # 10k memories (LoCoMo turns), the real model
    python bench/review.py --sizes 1000 --json

Each run builds the whole queue (stale checks, near-duplicate groups, contradictions, the lifecycle
dry run, problems, credential and marker scans) `--runs` times and reports the median, with the
time of each part from one extra run. The first run is what `memdir review` costs without a
running server; a server answers later ones with the credential scans cached.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from servers import CACHE, DEFAULT_DATA

from indexer.embed import CachedEmbedder, make_embedder
from indexer.review import Inbox
from mcp_server.app import App
from mcp_server.config import default_config_text
from speed import generate
from vault import Vault, init_vault

PARTS = ("_stale", "_similar_pairs", "_lifecycle", "_invalid", "_secrets", "_imitations")


def measure(size: int, data: Path, embedder: str, runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="memdir-review-") as tmp:
        root = Path(tmp) / "vault"
        generate(root, size, data)
        config = default_config_text().replace('embedder = "all-MiniLM-L6-v2"', f'embedder = "{embedder}"')
        init_vault(root, config.replace('every = "1h"', 'every = "off"'))
        from indexer.index import Index
        Index.open(Vault(root), CachedEmbedder(make_embedder(embedder), CACHE)).close()
        app = App(root)
        try:
            inbox = Inbox(app.project.curator)
            times, count = [], 0
            for _ in range(runs):
                started = time.perf_counter()
                count = len(inbox.items())
                times.append((time.perf_counter() - started) * 1000)
            parts = {}
            for name in PARTS:
                started = time.perf_counter()
                getattr(inbox, name)()
                parts[name.strip("_")] = round((time.perf_counter() - started) * 1000, 1)
        finally:
            app.close()
    return {"memories": size, "items": count, "first_ms": round(times[0], 1),
            "again_p50_ms": round(statistics.median(times[1:]), 1), "parts_again_ms": parts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--runs", type=int, default=4, help="the first is cold (no scan cached), the rest warm")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [measure(int(size), args.data, args.embedder, args.runs) for size in args.sizes.split(",")]
    print(json.dumps(results, indent=2) if args.json else "\n".join(str(r) for r in results))


if __name__ == "__main__":
    main()
