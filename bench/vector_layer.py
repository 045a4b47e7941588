"""The vector layer alone at 10k-100k memories: resident memory, cold open, search latency, first-pass recall.

    python bench/vector_layer.py --sizes 10000,100000 --json
    python bench/vector_layer.py --sizes 100000 --code /work/main     # the same bench on another checkout

A full 100k build with the real model takes hours on a loaded 2-core machine, so this bench builds
only the vector index (indexer/vectors.py), from real all-MiniLM-L6-v2 vectors: bench/speed.py's
embedding cache (LoCoMo windows), replicated with small noise (sigma 0.02 per component, then
normalised) to N searched chunk vectors and 5.26 N stored units (bench/resident.py's profile: 6.26
units per memory). Queries are cached vectors kept out of the vault, with their own noise.

The index is built and saved in one process; a fresh process then opens it cold (import, load,
first search) and measures resident memory (VmRSS, with RssAnon = private and RssFile = pages of
mapped files), its peak (VmHWM), search latency (k = 200, as a memdir search asks for 100
candidates x 2 chunks; each search then reads back 300 stored units by id, as candidate scoring
does), and the first pass's recall of the full scan's top k.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "memdir-bench" / "speed-embeddings.sqlite"
STORED_PER_MEMORY = 5.26
HELD_OUT = 500  # cached vectors kept out of the vault: the queries
K = 200
READ_BACK = 300


def status() -> dict[str, float]:
    """MB figures from /proc/self/status."""
    wanted = ("VmRSS", "VmHWM", "RssAnon", "RssFile")
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in wanted:
            out[key] = int(line.split()[1]) / 1024
    return out


def real_vectors(np):
    db = sqlite3.connect(CACHE)
    rows = db.execute("SELECT vector FROM vectors WHERE model = 'all-MiniLM-L6-v2' ORDER BY key").fetchall()
    return np.stack([np.frombuffer(r[0], dtype=np.float32) for r in rows])


def noisy(np, source, count: int, rng):
    """`count` unit vectors: rows of `source` drawn at random, each moved by N(0, 0.02) noise."""
    out = np.empty((count, source.shape[1]), dtype=np.float32)
    for start in range(0, count, 50_000):
        n = min(50_000, count - start)
        part = source[rng.integers(0, len(source), n)] + rng.normal(0, 0.02, (n, source.shape[1])).astype(np.float32)
        out[start:start + n] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


def build(size: int, folder: Path) -> dict:
    import numpy as np
    from indexer.vectors import VectorIndex

    rng = np.random.default_rng(size)
    vectors = real_vectors(np)[:-HELD_OUT]
    stored = int(size * STORED_PER_MEMORY)
    index = VectorIndex(vectors.shape[1])
    started = time.perf_counter()
    # ids as bench/speed.py's vault has them: unit ids are hashes, chunks and their units interleaved
    ids = rng.permutation(np.arange(1, size + stored + 1, dtype=np.int64) * 7919)
    searched = np.zeros(size + stored, dtype=bool)
    searched[rng.choice(size + stored, size, replace=False)] = True
    for start in range(0, size + stored, 4096):  # Index.sync adds in slices of EMBED_SLICE
        part = slice(start, start + 4096)
        index.add(ids[part], noisy(np, vectors, len(ids[part]), rng), searched[part])
    added = time.perf_counter() - started
    index.save(folder)
    queries = real_vectors(np)[-HELD_OUT:]
    queries = queries + rng.normal(0, 0.02, queries.shape).astype(np.float32)
    np.save(folder / "queries.npy", queries / np.linalg.norm(queries, axis=1, keepdims=True))
    return {"build_s": round(added, 1), "save_s": round(time.perf_counter() - started - added, 1),
            "searched": int(index._searched.ntotal), "units": len(index),
            "files_mb": {p.name: round(p.stat().st_size / 2**20, 1) for p in folder.iterdir()}, "build": status()}


def open_cold(folder: Path, searches: int) -> dict:
    started = time.perf_counter()
    marks = {"python": status()}
    import numpy as np
    import faiss
    from indexer.vectors import VectorIndex
    imported = time.perf_counter()
    marks["imports"] = status()
    queries = np.load(folder / "queries.npy")
    rng = np.random.default_rng(1)
    before_load = time.perf_counter()
    index = VectorIndex.load(folder, queries.shape[1])
    loaded = time.perf_counter()
    marks["loaded"] = status()
    index.search(queries[0], K)
    first = time.perf_counter()
    codes_s = None
    if getattr(index, "_first_pass", None) is not None:  # what the load spent on the first pass's codes
        from indexer.first_pass import SignCodes
        t0 = time.perf_counter()
        SignCodes.of_index(index._searched, queries.shape[1])
        codes_s = round(time.perf_counter() - t0, 2)
    all_ids = np.array(sorted(index.ids()), dtype=np.int64)
    searched_ids = index.searched_order()
    stored_ids = np.setdiff1d(all_ids, searched_ids)
    latencies, reads, recalls, full_scan = [], [], [], []
    for n in range(searches):
        query = queries[1 + n % (HELD_OUT - 1)]
        t0 = time.perf_counter()
        hits = index.search(query, K)
        t1 = time.perf_counter()
        index.vectors(rng.choice(stored_ids, READ_BACK, replace=False))  # candidate scoring's read-back
        t2 = time.perf_counter()
        latencies.append((t1 - t0) * 1e3)
        reads.append((t2 - t1) * 1e3)
        t3 = time.perf_counter()
        _, flat = index._searched.search(query[None, :], K)  # the full scan, first pass or not
        full_scan.append((time.perf_counter() - t3) * 1e3)
        recalls.append(len({u for u, _ in hits} & set(flat[0].tolist())) / K)
    marks["after_searches"] = status()
    ordered = sorted(latencies)
    return {
        "cold_open_s": {"imports": round(imported - started, 2), "load": round(loaded - before_load, 2),
                        "first_search": round(first - loaded, 3), "of_load_sign_codes": codes_s, "total_to_first_answer": round(first - started, 2)},
        "first_pass": getattr(index, "_first_pass", None) is not None,
        "search_ms": {"p50": round(statistics.median(latencies), 2), "p95": round(ordered[int(0.95 * len(ordered)) - 1], 2)},
        "full_scan_ms": {"p50": round(statistics.median(full_scan), 2),  # interleaved with the searches above
                         "p95": round(sorted(full_scan)[int(0.95 * len(full_scan)) - 1], 2)},
        "read_back_ms_p50": round(statistics.median(reads), 2),
        "recall_of_full_scan": round(statistics.mean(recalls), 5),
        "memory_mb": marks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--code", type=Path, default=REPO, help="checkout whose indexer/ is measured")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(args.code))
    if args.child:
        print(json.dumps(open_cold(args.child, args.searches)))
        return
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="vector-layer-") as folder:
            built = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(args.code)!r}); "
                                    f"sys.path.insert(1, {str(REPO / 'bench')!r}); import json, vector_layer as v; "
                                    f"from pathlib import Path; print(json.dumps(v.build({size}, Path({folder!r}))))"],
                                   capture_output=True, text=True, check=True)
            opened = subprocess.run([sys.executable, __file__, "--code", str(args.code), "--child", folder,
                                     "--searches", str(args.searches)], capture_output=True, text=True, check=True)
            results.append({"size": size, "code": str(args.code), **json.loads(built.stdout), **json.loads(opened.stdout)})
    print(json.dumps(results, indent=2) if args.json else "\n".join(map(str, results)))


if __name__ == "__main__":
    main()
