"""Indexing throughput, search latency, save-to-searchable time and memory, at several vault sizes.

    python bench/speed.py --json                     # 1k and 10k memories, the real model
    python bench/speed.py --sizes 10000,100000       # both sizes in one run (100k: long on 2 cores)
    python bench/speed.py --in-process               # the model in this process, as before issue 32

Memories are windows of real conversation turns from the LoCoMo dev split (read from
../shared/bench, never copied; seeded, so runs are comparable), written as ordinary memory
files and indexed by memdir's own indexer; queries are LoCoMo questions.
Latencies are wall time in-process with the query embedding included.

Memory is reported per process, as a server runs: this process holds the index (the vault server's
part) and the model lives in the per-user embedding host (mcp_server/embedding/host.py), started here
in a private registry folder and stopped at the end. For each size: the peak resident memory of each
process during the build, and in steady state (the peak while searching, saving and syncing after
the build; each process's peak is reset in between through /proc/PID/clear_refs), plus the RSS at
the end. `--in-process` loads the model here instead (then the host's columns are absent).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.live import LiveIndex  # noqa: E402
from indexer.search import SearchRequest, Searcher  # noqa: E402
from indexer.settings import SearchSettings, WatchSettings  # noqa: E402
from vault import Change, Vault  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo-dev.json"
COLLECTIONS = ["history", "patterns", "memory_bank", "working"]
TYPES = ["learning", "decision", "fact", "observation", "preference", "constraint", "journal"]


def corpus(data: Path) -> tuple[list[list[str]], list[str]]:
    """Conversations as lists of "Speaker: text" turns, and the benchmark's questions (CC BY-NC: read, never copied)."""
    samples = json.loads(data.read_text())
    conversations = []
    for sample in samples:
        turns = []
        for key, value in sorted(sample["conversation"].items()):
            if key.startswith("session_") and isinstance(value, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in value]
        conversations.append(turns)
    questions = [item["question"] for sample in samples for item in sample["qa"] if item.get("category") != 5]
    return conversations, questions


def generate(root: Path, count: int, data: Path, seed: int = 7) -> None:
    """Write `count` memory files of 1-3 consecutive real conversation turns each.

    Plain writes: this is fixture data, not the code under test. Past the ~8,000 distinct windows
    the corpus offers, texts repeat (the embedding cache then skips them, so a 100k build is
    about fast as the distinct texts allow).
    """
    conversations, _ = corpus(data)
    rng = random.Random(seed)
    for collection in COLLECTIONS:
        (root / collection).mkdir(parents=True, exist_ok=True)
    for i in range(count):
        turns = rng.choice(conversations)
        start = rng.randrange(len(turns) - 3)
        body = "\n".join(turns[start:start + rng.randint(1, 3)])
        collection = rng.choice(COLLECTIONS)
        text = (f"---\nid: m-{i:08x}\ncollection: {collection}\ntype: {rng.choice(TYPES)}\n"
                f"title: {body.split(':', 1)[0]}, turn {start}\ntags: [{rng.choice(['ops', 'db', 'ci', 'api'])}]\n"
                f"created_at: 2026-10-{1 + i % 28:02d}T12:00:00Z\nuses: {rng.randint(0, 9)}\n---\n{body}\n")
        (root / collection / f"m{i}.md").write_text(text)


def queries(count: int, data: Path, seed: int = 11) -> list[str]:
    _, questions = corpus(data)
    return random.Random(seed).sample(questions, min(count, len(questions)))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def memory_mb(pid: int, field: str) -> float | None:
    """VmHWM (peak resident since the last reset) or VmRSS of a process, in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def reset_peak(pid: int) -> None:
    """Start a new peak: writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        pass


class Processes:
    """The processes a served vault runs in: this one (the vault server's part) and the model host."""

    def __init__(self, embedder_name: str, in_process: bool, registry: Path) -> None:
        self.host_pid: int | None = None
        if in_process or embedder_name != "all-MiniLM-L6-v2":
            self.model = make_embedder(embedder_name)
            return
        os.environ["MEMDIR_SERVERS_DIR"] = str(registry)  # a host of our own, not the user's
        from mcp_server.embedding.host import SharedEmbedder, running

        self.model = SharedEmbedder(idle_exit_seconds=0)
        self.model.embed_query("start the host")
        info = running(registry)
        self.host_pid = info.pid if info else None

    def pids(self) -> dict[str, int]:
        return {"server": os.getpid(), **({"host": self.host_pid} if self.host_pid else {})}

    def reset(self) -> None:
        for pid in self.pids().values():
            reset_peak(pid)

    def figures(self, phase: str) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for name, pid in self.pids().items():
            out[f"{name}_{phase}_peak_mb"] = memory_mb(pid, "VmHWM")
        if self.host_pid:
            out[f"total_{phase}_peak_mb"] = round(sum(v or 0.0 for v in out.values()), 1)
        return out

    def stop(self) -> None:
        if self.host_pid:
            os.kill(self.host_pid, signal.SIGTERM)


def measure(size: int, processes: Processes, cache: Path, searches: int, data: Path, embedder_name: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="memdir-speed-") as tmp:
        root = Path(tmp) / "vault"
        generate(root, size, data)
        gc.collect()
        embedder = CachedEmbedder(processes.model, cache)
        processes.reset()
        started = time.perf_counter()
        index = Index.open(Vault(root), embedder)
        build_seconds = time.perf_counter() - started
        build = processes.figures("build")
        gc.collect()
        gc.freeze()  # as the vault server does once its indices are loaded (mcp_server/server/process.py)
        processes.reset()
        searcher = Searcher(index, SearchSettings(embedder=embedder_name))
        latencies = []
        for query in queries(searches, data):
            embedder.forget_queries()
            started = time.perf_counter()
            searcher.search(SearchRequest(query=query, limit=10))
            latencies.append((time.perf_counter() - started) * 1000)
        vault = Vault(root)
        misses = embedder.misses
        changed = list(index.all_memories())[:50]
        for memory in changed:
            vault.edit(memory, Change(derive=lambda m: {"uses": m.uses + 1}))
        counter_sync = index.sync()
        counter_embeddings = embedder.misses - misses
        save_ms = save_to_searchable(index, searcher, root)
        steady = processes.figures("steady")
        now = {f"{name}_rss_end_mb": memory_mb(pid, "VmRSS") for name, pid in processes.pids().items()}
        index.close()
        embedder.close()
        gc.unfreeze()
    return {
        "memories": size,
        "index_seconds": round(build_seconds, 2),
        "index_memories_per_s": round(size / build_seconds, 1),
        "search_p50_ms": round(statistics.median(latencies), 2),
        "search_p95_ms": round(percentile(latencies, 0.95), 2),
        "save_to_searchable_p50_ms": round(statistics.median(save_ms), 1),
        "save_to_searchable_max_ms": round(max(save_ms), 1),
        "counter_changes": len(changed),
        "embeddings_for_counter_changes": counter_embeddings,
        "counter_sync_ms": round(counter_sync.seconds * 1000, 1),
        **build,
        **steady,
        **now,
    }


def save_to_searchable(index: Index, searcher: Searcher, root: Path, saves: int = 10) -> list[float]:
    """Write a new memory with a unique word and time until search returns it (default watcher settings)."""
    timings = []
    with LiveIndex(index, WatchSettings(rescan_seconds=0.0)) as live:
        for n in range(saves):
            word = f"zqx{n}marker"
            seen = live.syncs
            started = time.perf_counter()
            (root / "history" / f"fresh{n}.md").write_text(
                f"---\nid: m-fresh{n:04d}\ncollection: history\ntitle: Fresh {word}\n---\n{word} body\n")
            found = threading.Event()
            deadline = started + 10
            while not found.is_set() and time.perf_counter() < deadline:
                live.wait_for_sync(seen, 10)
                seen = live.syncs
                hits = searcher.search(SearchRequest(query=word, limit=1, mode="keyword"))
                if hits and hits[0].memory.id == f"m-fresh{n:04d}":
                    found.set()
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated vault sizes")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo dev split (text for the vaults)")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "speed-embeddings.sqlite",
                        help="document embedding cache shared by runs (queries are always embedded)")
    parser.add_argument("--in-process", action="store_true", help="load the model in this process (no embedding host)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdir-speed-registry-") as registry:
        processes = Processes(args.embedder, args.in_process, Path(registry))
        try:
            results = [measure(int(size), processes, args.cache, args.searches, args.data, args.embedder)
                       for size in args.sizes.split(",")]
        finally:
            processes.stop()
    if args.json:
        print(json.dumps({"embedder": args.embedder, "results": results}, indent=2))
        return
    for r in results:
        print(", ".join(f"{k}={v}" for k, v in r.items()))


if __name__ == "__main__":
    main()
