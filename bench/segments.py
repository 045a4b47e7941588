"""Captures and keyword searches as Whoosh segments pile up: in-process, on a copy of the example vault.

    python bench/segments.py [--captures 180] [--sessions 9] [--code CHECKOUT] [--json]

N captured exchanges (as the Stop hook stores them: linked to the session's previous one) one after another,
then keyword searches. Printed: a capture's time (p50 / p95 / max: the index lock is held for most of it),
the segments left, and a keyword search's p50 / p95 after the captures (wall, and the thread's CPU); and, where the code has a segment
merger (indexer/segment_merger.py), the same searches after it merged, and its merges' time. With `--code` the
same script runs against another checkout (an A/B in one run: `--code` main, then this one). The test embedder
(hashing-256), so that the model's time does not hide the index's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

QUERIES = ("deploy pipeline slow", "celery retries idempotent", "walrus17 image", "why does the deploy fail",
           "redis cache keys", "module_42 handler tests")


def quantiles(ms: list[float]) -> dict:
    ms = sorted(ms)
    return {"p50": round(statistics.median(ms), 2), "p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2),
            "max": round(ms[-1], 2)}


def searches(index, repeat: int = 20) -> dict:  # type: ignore[no-untyped-def]
    """Wall and CPU (this thread's) milliseconds of a keyword search: on a loaded machine the CPU is the steadier."""
    times, cpu = [], []
    for _ in range(repeat):
        for query in QUERIES:
            started, started_cpu = time.perf_counter(), time.thread_time()
            index.keyword_search(query, 20)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - started_cpu) * 1000)
    return {**quantiles(times), "cpu": quantiles(cpu)}


def run(code: Path, count: int, sessions: int) -> dict:
    sys.path.insert(0, str(code))
    from indexer.embed import HashingEmbedder
    from indexer.index import Index
    from tests.indexer.helpers import default_curator
    from vault import Vault

    try:
        from indexer.segment_merger import SegmentMerger
    except ImportError:  # main before this change: Whoosh merges on each commit
        SegmentMerger = None  # noqa: N806
    with tempfile.TemporaryDirectory(prefix="memdir-segments-") as tmp:
        root = Path(tmp) / ".memories"
        shutil.copytree(code / ".memories-example", root, ignore=shutil.ignore_patterns(".memdir"))
        index = Index.open(Vault(root), HashingEmbedder(), defer_embedding=True)
        merger = SegmentMerger(index).start() if SegmentMerger else None
        curator = default_curator(index)
        previous: dict[int, str] = {}
        took, took_cpu, segments = [], [], []
        for n in range(count):
            session = n % sessions
            extra = {"session": f"s{session}", **({"previous": previous[session]} if session in previous else {})}
            started, started_cpu = time.perf_counter(), time.thread_time()
            added = curator.add(f"User: why does the walrus{n} deploy fail in module_{n}\n\nAssistant: the walrus{n} "
                                f"image was stale; I rebuilt it and the tests passed.", title=f"Exchange: walrus{n}",
                                type="history", collection="working", extra=extra, compare=False)
            took.append((time.perf_counter() - started) * 1000)
            took_cpu.append((time.thread_time() - started_cpu) * 1000)
            previous[session] = added.memory.id
            segments.append(len(list(index._keyword._searcher.reader().leaf_readers())) if index._keyword._searcher.doc_count_all() else 0)
        result = {"captures": count, "capture_ms": quantiles(took), "capture_cpu_ms": quantiles(took_cpu), "segments_max": max(segments),
                  "segments_after": segments[-1], "search_after_ms": searches(index)}
        if merger is not None:
            started = time.perf_counter()
            merger.idle = 0.0
            index.merge_wanted.set()
            merger.wait_settled(120)
            result.update(merges=merger.merges, idle_merge_s=round(time.perf_counter() - started, 2),
                          segments_merged=index.keyword_segments(), search_merged_ms=searches(index))
            merger.stop()
        index.close()
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--captures", type=int, default=180)
    parser.add_argument("--sessions", type=int, default=9)
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    r = run(options.code.resolve(), options.captures, options.sessions)
    if options.json:
        print(json.dumps(r))
    else:
        c, u, s = r["capture_ms"], r["capture_cpu_ms"], r["search_after_ms"]
        print(f"{r['captures']} captures: {c['p50']} / {c['p95']} / {c['max']} ms (p50 / p95 / max; CPU {u['p50']} / "
              f"{u['p95']} / {u['max']}); segments at most {r['segments_max']}, {r['segments_after']} at the end; "
              f"keyword search {s['p50']} / {s['p95']} ms (CPU {s['cpu']['p50']} / {s['cpu']['p95']})")
        if "merges" in r:
            m = r["search_merged_ms"]
            print(f"  merger: {r['merges']} merges; idle merge {r['idle_merge_s']} s -> {r['segments_merged']} segments; "
                  f"keyword search {m['p50']} / {m['p95']} ms (CPU {m['cpu']['p50']} / {m['cpu']['p95']})")
