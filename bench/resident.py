"""Where resident memory goes: RSS after each step of building and of opening a vault's index,
and the deep size of each structure the open index holds.

    python bench/resident.py --size 100000        # build, then a cold open in a fresh process

The vault is bench/speed.py's (LoCoMo windows, seeded); document vectors come from speed.py's
embedding cache, so a rebuild costs the model only for texts it has not seen. Steps are measured
as the growth of resident memory (VmRSS) across them, in the order the index does them; a deep
size counts each Python object once, in the first structure that reaches it.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def deep_size(root: object, seen: set[int]) -> int:
    """Bytes of `root` and everything it reaches that `seen` does not hold yet (numpy: its buffer)."""
    import numpy as np

    total, stack = 0, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            total += obj.nbytes + 112
            continue
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
            if hasattr(obj, "__dict__"):
                stack.append(vars(obj))
            for name in getattr(type(obj), "__slots__", ()):
                if hasattr(obj, name):
                    stack.append(getattr(obj, name))
        elif type(obj).__name__ == "mappingproxy":
            stack.extend(obj.values())
    return total


def steps(label: str, marks: list[tuple[str, float]], clock: list[float] | None = None,
          cpu: list[float] | None = None) -> dict:
    """Each step's RSS and growth; with `clock` and `cpu` (perf_counter and process_time at each mark), its
    seconds too (CPU seconds are the steadier figure on a shared machine)."""
    out, previous = {}, None
    for i, (name, value) in enumerate(marks):
        out[name] = {"rss_mb": round(value, 1), "grew_mb": round(value - previous, 1) if previous is not None else None}
        if clock is not None and i:
            out[name]["seconds"] = round(clock[i] - clock[i - 1], 2)
        if cpu is not None and i:
            out[name]["cpu_seconds"] = round(cpu[i] - cpu[i - 1], 2)
        previous = value
    return {label: out}


def build(size: int, root: Path, cache: Path, embedder_name: str) -> dict:
    from bench.speed import DEFAULT_DATA, generate
    from indexer.embed import CachedEmbedder, make_embedder
    from indexer.index import Index
    from vault import Vault

    marks = [("imports", rss_mb())]
    generate(root, size, DEFAULT_DATA)
    embedder = CachedEmbedder(make_embedder(embedder_name), cache)
    embedder.embed(["warm the model"])
    marks.append(("model loaded", rss_mb()))
    started = time.perf_counter()
    index = Index.open(Vault(root), embedder)
    seconds = time.perf_counter() - started
    marks.append(("built and open", rss_mb()))
    result = {"build_seconds": round(seconds, 1), "build_peak_rss_mb": round(peak_mb(), 1),
              "units": index.unit_count(), "chunks": index.chunk_count()}
    index.close()
    embedder.close()
    return {**result, **steps("build", marks)}


def open_cold(root: Path, cache: Path, embedder_name: str, owner: bool = False, searches: int = 200) -> dict:
    """In a fresh process: the index's load, step by step, then the first answer of an index opened as a
    reader (`Index()`) or, with `owner`, as the server's owner opens it (`Index.open`: load, heal, deep
    reconcile of every file), then `searches` more searches and the deep size of each structure."""
    gc.disable()
    started = time.perf_counter()
    marks, clock, cpu = [("python", rss_mb())], [started], [time.process_time()]

    def mark(name: str) -> None:
        marks.append((name, rss_mb()))
        clock.append(time.perf_counter())
        cpu.append(time.process_time())

    import numpy  # noqa: F401
    import faiss  # noqa: F401
    import whoosh.index  # noqa: F401

    from indexer.embed import CachedEmbedder, make_embedder
    from indexer.graph import LinkGraph
    from indexer.generations import Layout
    from indexer.index import Index, _chunk_headings
    from indexer.keyword import KeywordIndex
    from indexer.manifest import Manifest, _entry
    from indexer.owners import Owners
    from indexer.search import SearchRequest, Searcher
    from indexer.settings import SearchSettings
    from indexer.vectors import VectorIndex
    from vault import Vault

    mark("imports (numpy, faiss, whoosh, memdir)")
    embedder = CachedEmbedder(make_embedder(embedder_name), cache)
    embedder.embed_query("warm the model")
    mark("model loaded")
    generation = Layout(root).current()
    manifest = Manifest(generation / "manifest.sqlite")
    rows = manifest._db.execute("SELECT * FROM files ORDER BY path").fetchall()
    mark("manifest rows read (sqlite, no decoding)")
    entries = {e.path: e for e in map(_entry, rows)}
    del rows
    mark("manifest entries decoded (Entry + Memory per file)")
    vectors = VectorIndex.load(generation, embedder.dim)
    mark("vectors loaded (FAISS, both parts)")
    keyword = KeywordIndex.open(generation / "keyword")
    mark("keyword index opened (Whoosh)")
    indexed = [e for e in entries.values() if e.memory_id and e.memory is not None and e.reason is None]
    chunk_owner, unit_owner = Owners(), Owners()
    chunk_owner.update([row for e in indexed for row in _chunk_headings(e)])
    unit_owner.update([(unit, (e.memory_id, role)) for e in indexed for unit, _, role in e.units])
    mark("chunk and unit owners")
    graph = LinkGraph.build(e.memory for e in indexed)
    mark("link graph built")
    if hasattr(manifest, "link_rows") and manifest.links_complete():  # what a search reads instead (link_table.py)
        from indexer.link_table import LinkTable

        table = LinkTable(manifest.link_rows())
        mark("link table read (what a search reads of the graph)")
        del table
    del graph, chunk_owner, unit_owner, indexed, entries, keyword, vectors
    manifest.close()
    gc.enable()
    gc.collect()
    mark("pieces dropped")
    # The server opens its vault with reconcile=False where the code has it (the reconcile follows the first answer).
    later = owner and "reconcile" in inspect.signature(Index.open).parameters
    index_step = ("Index.open(reconcile=False): load" if later else "Index.open(): load, heal, deep reconcile"
                  ) if owner else "Index() as a reader opens it"
    inside = _timed(Index, ("_load", "heal", "sync")) if owner else {}
    if owner:
        index = Index.open(Vault(root), embedder, **({"reconcile": False} if later else {}))
    else:
        index = Index(Vault(root), embedder, generation, writable=False)
    mark(index_step)
    searcher = Searcher(index, SearchSettings(embedder=embedder_name))
    searcher.search(SearchRequest(query="what did they say about the trip", limit=10))
    mark("first search answered")
    first_answer_rss = rss_mb()
    if later:  # what LiveIndex.start runs in its thread; timed here alone
        index.reconcile()
        mark("reconcile after the first answer: heal, deep reconcile")
    from bench.speed import DEFAULT_DATA, percentile, queries
    latencies = []
    for query in queries(searches, DEFAULT_DATA):
        started_one = time.perf_counter()
        searcher.search(SearchRequest(query=query, limit=10))
        latencies.append((time.perf_counter() - started_one) * 1000)
    mark(f"{len(latencies)} searches")
    after_searches_rss = rss_mb()
    seen: set[int] = set()
    sizes = {}
    # The index's own structures, behind its read API: a profile of their layout reads them directly.
    for name in ("_memories", "_entries", "path_of", "_chunk_owner", "_unit_owner", "by_dedup_key", "previous_key",
                 "pointed_by", "_graph", "_link_table"):
        sizes[name.lstrip("_")] = round(deep_size(getattr(index, name, None), seen) / 2**20, 1)
    bodies = sum(sys.getsizeof(m.body) for m in index.all_memories())
    sizes["(of memories: bodies)"] = round(bodies / 2**20, 1)
    vec = index._vectors
    sizes["vectors: searched part (FAISS codes)"] = round(vec._searched.ntotal * vec.dim * 4 / 2**20, 1)
    sizes["vectors: stored part (float16 rows on disk, not resident)"] = round(len(vec._stored) * vec.dim * 2 / 2**20, 1)
    sizes["vectors: id maps (FAISS + sorted copies)"] = round(
        (vec._searched.ntotal * 2 + len(vec._stored) * 2) * 8 / 2**20, 1)
    # What a server's cold open costs: imports, the model, Index() and the first search (not the pieces above).
    named = dict(zip((name for name, _ in marks), range(len(marks))))
    counted = ("imports (numpy, faiss, whoosh, memdir)", "model loaded", index_step, "first search answered")
    cold = sum(clock[named[n]] - clock[named[n] - 1] for n in counted)
    cold_cpu = sum(cpu[named[n]] - cpu[named[n] - 1] for n in counted)
    result = {"memories": index.memory_count(), "inside_index_open_cpu_seconds": inside, "opened_as": "owner (Index.open)" if owner else "reader (Index())",
              "cold_open_to_first_answer_seconds": round(cold, 2), "cold_open_cpu_seconds": round(cold_cpu, 2),
              "rss_at_first_answer_mb": round(first_answer_rss, 1),
              f"rss_after_{len(latencies)}_searches_mb": round(after_searches_rss, 1),
              "search_ms_p50_p95": [round(percentile(latencies, 0.5), 1), round(percentile(latencies, 0.95), 1)],
              "peak_rss_mb": round(peak_mb(), 1),
              "searched_vectors": int(vec._searched.ntotal), "stored_vectors": len(vec._stored),
              "deep_size_mb": sizes}
    index.close()
    return {**result, **steps("open", marks, clock, cpu)}


def _timed(cls: type, names: tuple[str, ...]) -> dict[str, float]:
    """CPU seconds spent in each of these methods (summed over calls), filled in as they run."""
    spent = dict.fromkeys(names, 0.0)

    def wrap(name: str):
        method = getattr(cls, name)

        def timed(self, *args, **kwargs):
            started = time.process_time()
            try:
                return method(self, *args, **kwargs)
            finally:
                spent[name] = round(spent[name] + time.process_time() - started, 2)
        return timed

    for name in names:
        setattr(cls, name, wrap(name))
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "speed-embeddings.sqlite")
    parser.add_argument("--vault", type=Path, help="build the vault here and keep it; if it holds an index, "
                        "only open it cold (repeat the open without rebuilding)")
    parser.add_argument("--owner", action="store_true", help="open as the server's owner does (Index.open: "
                        "load, heal, a deep reconcile of every file) instead of as a reader (Index())")
    parser.add_argument("--searches", type=int, default=200, help="searches after the first answer")
    parser.add_argument("--open", type=Path, help=argparse.SUPPRESS)  # the cold-open child
    args = parser.parse_args()
    if args.open:
        print(json.dumps(open_cold(args.open, args.cache, args.embedder, args.owner, args.searches)))
        return
    if args.vault:
        built = {} if (args.vault / ".memdir").exists() else build(args.size, args.vault, args.cache, args.embedder)
        print(json.dumps({**built, **cold_open(args.vault, args)}, indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="memdir-resident-") as tmp:
        root = Path(tmp) / "vault"
        built = build(args.size, root, args.cache, args.embedder)
        opened = cold_open(root, args)
    print(json.dumps({"memories": args.size, **built, **opened}, indent=2))


def cold_open(root: Path, args: argparse.Namespace) -> dict:
    child = subprocess.run([sys.executable, __file__, "--open", str(root), "--cache", str(args.cache),
                            "--embedder", args.embedder, "--searches", str(args.searches)]
                           + (["--owner"] if args.owner else []), capture_output=True, text=True, check=True)
    return json.loads(child.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
