"""How long `memdir review` takes at N memories: in a fresh process, warm, and after one memory changed.

    python bench/review.py --json                          # 10k memories (LoCoMo turns), the real model
    python bench/review.py --sizes 1000 --json
    python bench/review.py --vault /tmp/rv10k --json       # keep (and reuse) the indexed vault there

The vault is generated and indexed once. Then each phase runs in a process of its own, as
`memdir review` does (opening the vault is timed apart from the review itself):

- `cold`: no review state in `.memdir/` (a vault never reviewed, or `.memdir/review/` deleted);
- `fresh`: a new process against the existing index and what earlier reviews left in `.memdir/`
  (the first call after a server start); in that process the call is then repeated (`warm_p50_ms`,
  with the time of each part from one extra run), and one memory is edited through the curator
  (`after_edit_ms`: what a running server pays for the next review);
- `fresh_after_change`: a file edited on disk, then a new process (its open syncs the edit).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from servers import CACHE, DEFAULT_DATA

from indexer.embed import CachedEmbedder, make_embedder
from mcp_server.config import default_config_text
from speed import generate
from vault import Vault, init_vault

PARTS = ("_stale", "_similar_pairs", "_lifecycle", "_invalid", "_secrets", "_imitations")
REVIEW_STATE = (".memdir/review",)  # what a cold run removes (derived data, safe to delete)


def child(root: Path, runs: int, edit: bool) -> dict:
    """One process's view: open the vault, review it, then (optionally) review again and after one edit."""
    from indexer.review import Inbox
    from mcp_server.service.app import App

    started = time.perf_counter()
    app = App(root)
    opened, cpu = time.perf_counter(), time.process_time()
    try:
        inbox = Inbox(app.project.curator)
        count = len(inbox.items())
        first, cpu = time.perf_counter(), time.process_time() - cpu
        # CPU time beside wall time: on a shared machine the wall clock also counts other processes' turns.
        result = {"open_ms": _ms(opened - started), "first_ms": _ms(first - opened), "first_cpu_ms": _ms(cpu),
                  "items": count}
        if runs > 1:
            times = []
            for _ in range(runs - 1):
                begun = time.perf_counter()
                inbox.items()
                times.append(time.perf_counter() - begun)
            result["warm_p50_ms"] = _ms(statistics.median(times))
            parts = {}
            for name in PARTS:
                begun = time.perf_counter()
                getattr(inbox, name)()
                parts[name.strip("_")] = _ms(time.perf_counter() - begun)
            result["warm_parts_ms"] = parts
        if edit:
            memory = sorted(app.index.all_memories(), key=lambda m: m.path)[app.index.memory_count() // 2]
            app.curator.append(memory.id, f"Edited by the bench at {time.time():.0f}.")
            begun, cpu = time.perf_counter(), time.process_time()
            result["items_after_edit"] = len(inbox.items())
            result["after_edit_ms"] = _ms(time.perf_counter() - begun)
            result["after_edit_cpu_ms"] = _ms(time.process_time() - cpu)
    finally:
        app.close()
    return result


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def run_child(root: Path, runs: int, edit: bool) -> dict:
    command = [sys.executable, __file__, "--child", str(root), "--runs", str(runs)] + (["--edit"] if edit else [])
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def build(root: Path, size: int, data: Path, embedder: str) -> None:
    from indexer.index import Index

    generate(root, size, data)
    config = default_config_text().replace('embedder = "all-MiniLM-L6-v2"', f'embedder = "{embedder}"')
    init_vault(root, config.replace('every = "1h"', 'every = "off"'))
    Index.open(Vault(root), CachedEmbedder(make_embedder(embedder), CACHE)).close()


def measure(root: Path, size: int, data: Path, embedder: str, runs: int) -> dict:
    if not (root / ".memdir" / "index").is_dir():
        build(root, size, data, embedder)
    for state in REVIEW_STATE:
        shutil.rmtree(root / state, ignore_errors=True)
    cold = run_child(root, 1, edit=False)
    fresh = run_child(root, runs, edit=True)
    changed = sorted(root.glob("*/m*.md"))[size // 3]
    changed.write_text(changed.read_text() + "Edited on disk by the bench.\n")
    after = run_child(root, 1, edit=False)
    return {"memories": size, "items": fresh["items"], "cold": cold, "fresh": fresh, "fresh_after_change": after}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--runs", type=int, default=4, help="calls in the `fresh` process (the first, then warm ones)")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--vault", type=Path, help="where to keep the indexed vault (one size only); reused if there")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--edit", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.runs, args.edit)))
        return
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        if args.vault:
            results.append(measure(args.vault, size, args.data, args.embedder, args.runs))
            continue
        with tempfile.TemporaryDirectory(prefix="memdir-review-") as tmp:
            results.append(measure(Path(tmp) / "vault", size, args.data, args.embedder, args.runs))
    print(json.dumps(results, indent=2) if args.json else "\n".join(str(r) for r in results))


if __name__ == "__main__":
    main()
