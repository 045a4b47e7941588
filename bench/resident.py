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


def open_cold(root: Path, cache: Path, embedder_name: str) -> dict:
    """In a fresh process: the index's load, step by step, then the deep size of each structure."""
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
    from indexer.chunking import chunks_for
    from indexer.generations import Layout
    from indexer.index import Index
    from indexer.keyword import KeywordIndex
    from indexer.manifest import Manifest
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
    entries = {e.path: e for e in manifest.entries()}
    mark("manifest entries decoded (Entry + Memory per file)")
    vectors = VectorIndex.load(generation, embedder.dim)
    mark("vectors loaded (FAISS, both parts)")
    keyword = KeywordIndex.open(generation / "keyword")
    mark("keyword index opened (Whoosh)")
    owners = {}
    for entry in entries.values():
        if entry.memory is not None and entry.reason is None:
            for chunk in chunks_for(entry.memory):
                owners[chunk.chunk_id] = (chunk.memory_id, chunk.heading)
    mark("chunk owners (chunks_for per memory)")
    graph = LinkGraph.build(e.memory for e in entries.values() if e.memory is not None and e.reason is None)
    mark("link graph built")
    del graph, owners, entries, keyword, vectors
    manifest.close()
    gc.enable()
    gc.collect()
    mark("pieces dropped")
    index = Index(Vault(root), embedder, generation, writable=False)
    mark("Index() as the server opens it")
    searcher = Searcher(index, SearchSettings(embedder=embedder_name))
    searcher.search(SearchRequest(query="what did they say about the trip", limit=10))
    mark("first search answered")
    seen: set[int] = set()
    sizes = {}
    # The index's own structures, behind its read API: a profile of their layout reads them directly.
    for name in ("_memories", "_entries", "path_of", "_chunk_owner", "_unit_owner", "by_dedup_key", "previous_key",
                 "pointed_by", "_graph"):
        sizes[name.lstrip("_")] = round(deep_size(getattr(index, name), seen) / 2**20, 1)
    bodies = sum(sys.getsizeof(m.body) for m in index.all_memories())
    sizes["(of memories: bodies)"] = round(bodies / 2**20, 1)
    vec = index._vectors
    sizes["vectors: searched part (FAISS codes)"] = round(vec._searched.ntotal * vec.dim * 4 / 2**20, 1)
    sizes["vectors: stored part (float16 rows on disk, not resident)"] = round(len(vec._stored) * vec.dim * 2 / 2**20, 1)
    sizes["vectors: id maps (FAISS + sorted copies)"] = round(
        (vec._searched.ntotal * 2 + len(vec._stored) * 2) * 8 / 2**20, 1)
    # What a server's cold open costs: imports, the model, Index() and the first search (not the pieces above).
    named = dict(zip((name for name, _ in marks), range(len(marks))))
    cold = sum(clock[named[n]] - clock[named[n] - 1] for n in (
        "imports (numpy, faiss, whoosh, memdir)", "model loaded", "Index() as the server opens it", "first search answered"))
    cold_cpu = sum(cpu[named[n]] - cpu[named[n] - 1] for n in (
        "imports (numpy, faiss, whoosh, memdir)", "model loaded", "Index() as the server opens it", "first search answered"))
    result = {"cold_open_to_first_answer_seconds": round(cold, 2), "cold_open_cpu_seconds": round(cold_cpu, 2), "peak_rss_mb": round(peak_mb(), 1),
              "searched_vectors": int(vec._searched.ntotal), "stored_vectors": len(vec._stored),
              "deep_size_mb": sizes}
    index.close()
    return {**result, **steps("open", marks, clock, cpu)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "speed-embeddings.sqlite")
    parser.add_argument("--vault", type=Path, help="build the vault here and keep it; if it holds an index, "
                        "only open it cold (repeat the open without rebuilding)")
    parser.add_argument("--open", type=Path, help=argparse.SUPPRESS)  # the cold-open child
    args = parser.parse_args()
    if args.open:
        print(json.dumps(open_cold(args.open, args.cache, args.embedder)))
        return
    if args.vault:
        built = {} if (args.vault / ".memdir").exists() else build(args.size, args.vault, args.cache, args.embedder)
        print(json.dumps({"memories": args.size, **built, **cold_open(args.vault, args)}, indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="memdir-resident-") as tmp:
        root = Path(tmp) / "vault"
        built = build(args.size, root, args.cache, args.embedder)
        opened = cold_open(root, args)
    print(json.dumps({"memories": args.size, **built, **opened}, indent=2))


def cold_open(root: Path, args: argparse.Namespace) -> dict:
    child = subprocess.run([sys.executable, __file__, "--open", str(root), "--cache", str(args.cache),
                            "--embedder", args.embedder], capture_output=True, text=True, check=True)
    return json.loads(child.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
