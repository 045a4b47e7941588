"""Server time of each `memdir ui` page at N memories: the page functions as the server calls them, in-process.

    python bench/ui.py --json                        # 10k memories (LoCoMo turns), the real model (cached vectors)
    python bench/ui.py --vault /tmp/ui10k --json     # keep (and reuse) the indexed vault there

The vault is generated and indexed as bench/review.py does, committed to git (so a memory page shows its
versions), and opened as the server opens it (App + MemoryService). Timed: the inbox's first render in
the process and its warm renders (the review runs in a background thread; a page waits for it at most
inbox_review.PAGE_WAIT, else says "still checking"), how long until the review is ready (after a server
start, and after a change: a memory added), then a memory page for
memories picked at random (git log and the body diffs included), Search for LoCoMo questions, Turns over a
log of 2000 prompts (all, and filtered by one memory) and the Vault page; the inbox and the Vault page also
with their cache emptied (what the first page after a change pays). Wall time; medians and p90.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from review import build
from servers import DEFAULT_DATA
from speed import queries

from mcp_server.service import turns
from mcp_server.web import inbox_review, pages
from mcp_server.service import operations as ops

TURNS = 2000  # prompt records in the turn log (5 memories shown each), with a score after each


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def prepare(root: Path, size: int, data: Path, embedder: str) -> None:
    if not (root / ".memdir" / "index").is_dir():
        build(root, size, data, embedder)
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
        git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "add", "-A", ".")
        git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "memories")


def fill_turns(root: Path, ids: list[str]) -> None:
    """A turn log of TURNS prompts over 50 sessions (it is local state: written afresh each run)."""
    (root / turns.LOG_NAME).unlink(missing_ok=True)
    rng = random.Random(3)
    for n in range(TURNS):
        shown = rng.sample(ids, 5)
        session = f"s-{n % 50}"
        turns.record(root, "prompt", session, n, prompt=f"prompt number {n}",
                     shown=[{"id": i, "title": i, "relevance": rng.random(), "channel": "both", "labels": []} for i in shown])
        turns.record(root, "score", session, n, scores={i: rng.choice(["worked", "failed"]) for i in shown})


def timed(call) -> float:  # type: ignore[no-untyped-def]
    begun = time.perf_counter()
    call()
    return (time.perf_counter() - begun) * 1000


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"p50_ms": round(statistics.median(ordered), 1), "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 1),
            "runs": len(ordered)}


def measure(root: Path, size: int, data: Path, embedder: str, runs: int) -> dict:
    from mcp_server.service.app import App
    from mcp_server.service.memory_service import MemoryService

    prepare(root, size, data, embedder)
    app = App(root)
    try:
        service = MemoryService(app)
        first_inbox = timed(lambda: pages.inbox(service, "csrf"))
        first_ready = timed(lambda: pages.review_items(service, wait=600))  # the background review, from the page on
        inbox = [timed(lambda: pages.inbox(service, "csrf")) for _ in range(runs)]
        uncached, ready_after_start = [], []
        for _ in range(min(runs, 5)):
            inbox_review.forget()  # what the first page after a server start pays
            uncached.append(timed(lambda: pages.inbox(service, "csrf")))
            ready_after_start.append(timed(lambda: pages.review_items(service, wait=600)))
        changed, ready_after_change, added = [], [], []
        for n in range(min(runs, 5)):
            added.append(service.add(ops.Add(content=f"The bench added note number {n} about the ui page budget.", type="context")).memory.id)
            changed.append(timed(lambda: pages.inbox(service, "csrf")))  # the first page after a change
            ready_after_change.append(timed(lambda: pages.review_items(service, wait=600)))
        for memory_id in added:
            service.delete(ops.Delete(memory_id=memory_id))
        ids = random.Random(5).sample(sorted(app.index.memory_ids()), runs)
        memory = [timed(lambda i=i: pages.memory_page(service, i, "csrf")) for i in ids]
        search = [timed(lambda q=q: pages.search_page(service, q)) for q in queries(runs, data)]
        fill_turns(root, sorted(app.index.memory_ids()))
        turn_pages = [timed(lambda: pages.turns_page(service)) for _ in range(runs)]
        filtered = [timed(lambda i=i: pages.turns_page(service, i)) for i in ids]
        vault = [timed(lambda: pages.vault_page(service)) for _ in range(runs)]
        vault_uncached = []
        for _ in range(min(runs, 5)):
            pages._VAULT_PAGES.clear()  # the first Vault page after a change
            vault_uncached.append(timed(lambda: pages.vault_page(service)))
        items = len(service.review(ops.Review()).items)
    finally:
        app.close()
    return {"memories": size, "inbox_items": items, "inbox_first_in_process_ms": round(first_inbox, 1),
            "review_ready_after_first_page_ms": round(first_ready, 1),
            "inbox": summary(inbox), "inbox_uncached": summary(uncached), "review_ready_after_start": summary(ready_after_start),
            "inbox_after_change": summary(changed), "review_ready_after_change": summary(ready_after_change), "memory": summary(memory),
            "search": summary(search), "turns": summary(turn_pages), "turns_by_memory": summary(filtered),
            "vault": summary(vault), "vault_uncached": summary(vault_uncached), "turn_log_prompts": TURNS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--vault", type=Path, help="where to keep the indexed vault; reused if there")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.vault:
        result = measure(args.vault, args.size, args.data, args.embedder, args.runs)
    else:
        with tempfile.TemporaryDirectory(prefix="memdir-ui-") as tmp:
            result = measure(Path(tmp) / "vault", args.size, args.data, args.embedder, args.runs)
    print(json.dumps(result, indent=2) if args.json else result)


if __name__ == "__main__":
    sys.exit(main())
