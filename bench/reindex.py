"""How fast memdir embeds a vault: a full reindex, and a `git pull` into a served vault.

    python bench/reindex.py                      # fresh: every LoCoMo dev turn a memory, empty embedding cache
    python bench/reindex.py --mode pull          # pull: 1,000 new memories land in a served vault
    python bench/reindex.py --mode all --json

fresh: one memory per conversation turn, each naming the turn before it as `previous:` (as the Stop
hook writes them; LoCoMo dev, read from ../shared/bench, never copied), rebuilt by `memdir reindex`'s
own function with an empty embedding cache. Prints memories/s and texts/s, and the CPU seconds it took
(on a shared machine, memories per CPU second is the steadier figure).

pull: a vault of --base memories (bench/speed.py's generator; its embedding cache makes the base
cheap after the first run) is opened as the server opens it (vectors deferred to the background
backfill, a watcher on the files); then --pull new memories are written at once, as `git pull` does
(or in --parts parts, --part-gap s apart: a slow pull, which the watcher cuts into batches), their
texts new to the cache. A thread searches all the time. Prints when the last new memory became
keyword-searchable, when the last vector landed (and that rate), and the search latencies meanwhile
(the longest is what a prompt hook waited).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# `--code CHECKOUT` measures another checkout's memdir with this bench (before and after in one session)
CODE = Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv[:-1] else REPO
sys.path.insert(0, str(CODE))
sys.path.insert(0, str(CODE / "bench"))  # its locomo.py and speed.py put their own checkout first on the path

from locomo import DEFAULT_DATA, memory_id, turn_text, turns_of  # noqa: E402
from speed import generate, percentile  # noqa: E402

from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.live import LiveIndex  # noqa: E402
from indexer.rebuild import rebuild  # noqa: E402
from indexer.search import SearchRequest, Searcher  # noqa: E402
from indexer.settings import SearchSettings, WatchSettings  # noqa: E402
from vault import Vault  # noqa: E402


def turn_files(data: Path, limit: int | None = None) -> list[tuple[str, str]]:
    """(relative path, file text) of one memory per turn, ids unique across conversations."""
    files = []
    for c, sample in enumerate(json.loads(data.read_text())):
        for number, when, turns in turns_of(sample["conversation"]):
            previous = None
            for turn in turns:
                mid = f"c{c}-{memory_id(turn['dia_id'])}"
                link = f"previous: {previous}\n" if previous else ""
                files.append((f"history/c{c}/{mid}.md",
                              f"---\nid: {mid}\ncollection: history\ntype: history\n"
                              f"created_at: {when.isoformat()}\ntitle: {turn['speaker']}, {when:%-d %B %Y}\n"
                              f"{link}---\n{turn_text(turn)}\n"))
                previous = mid
    return files[:limit] if limit else files


def write(root: Path, files: list[tuple[str, str]]) -> None:
    for rel, text in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def model(embedder_name: str, int8: bool):  # type: ignore[no-untyped-def]
    """The embedder; `int8`: memories embedded by the int8 graph ([search] int8_documents), asked only then, so the
    bench still runs another checkout's memdir (`--code`) from before the setting."""
    return make_embedder(embedder_name, int8_documents=True) if int8 else make_embedder(embedder_name)


def fresh(embedder_name: str, data: Path, limit: int | None, int8: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="memdir-reindex-") as tmp:
        root = Path(tmp) / "vault"
        files = turn_files(data, limit)
        write(root, files)
        embedder = CachedEmbedder(model(embedder_name, int8), Path(tmp) / "cache.sqlite")
        cpu = time.process_time()
        report = rebuild(Vault(root), embedder)
        cpu = time.process_time() - cpu
        embedder.close()
    return {"memories": report.memories, "texts": report.embedded, "seconds": round(report.seconds, 1),
            "memories_per_s": round(report.memories / report.seconds, 1),
            "texts_per_s": round(report.embedded / report.seconds, 1),
            "texts_per_memory": round(report.embedded / report.memories, 2),
            # CPU seconds of every thread: what the rebuild costs whatever else runs on the machine;
            # memories per CPU second times the cores is the rate it could reach with the cores to itself
            "cpu_s": round(cpu, 1), "memories_per_cpu_s": round(report.memories / cpu, 1)}


def built_base(root: Path, base: int, data: Path, embedder: CachedEmbedder, keep: Path | None) -> None:
    """Write the base vault at `root`, indexed; with `keep`, a copy built once there is reused (a 100k
    build takes minutes; the pull, not the build, is measured)."""
    if keep is not None and (keep / ".memdir").is_dir():
        shutil.copytree(keep, root, symlinks=True)
        return
    generate(root, base, data)
    Index.open(Vault(root), embedder).close()
    if keep is not None:
        shutil.copytree(root, keep, symlinks=True)


SEARCHABLE_POLL = 0.5  # seconds between looks for the pulled memories (it was 5: the figure came up to 5 s late)


def pull(embedder_name: str, data: Path, base: int, count: int, cache: Path, keep: Path | None = None,
         timeline: bool = False, parts: int = 1, gap: float = 1.0, int8: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="memdir-pull-") as tmp:
        root = Path(tmp) / "vault"
        embedder = CachedEmbedder(model(embedder_name, int8), cache)
        built_base(root, base, data, embedder, keep)
        events = watch_events() if timeline else None
        index = Index.open(Vault(root), embedder, defer_embedding=True)
        searcher = Searcher(index, SearchSettings(embedder=embedder_name))
        stamp = f"{time.time_ns():x}"  # new texts every run: none of them is in the cache yet
        files = [(rel.replace("history/", "pulled/"), text.replace(
                      "\n---\n", f"\ntags: [pull{stamp}]\n---\n", 1) + f"pulled {stamp} number{i}\n")
                 for i, (rel, text) in enumerate(turn_files(data, count))]
        latencies: list[float] = []
        finished: list[float] = []  # when each search ended (perf_counter): latencies until searchable are told apart
        stop = threading.Event()
        questions = ["what did she paint", "when is the race", "adoption agency", "camping trip with kids"]

        def searching() -> None:
            n = 0
            while not stop.is_set():
                started = time.perf_counter()  # a new query each time: its embedding is timed too
                searcher.search(SearchRequest(query=f"{questions[n % len(questions)]} {n}", limit=10))
                finished.append(time.perf_counter())
                latencies.append((finished[-1] - started) * 1000)
                n += 1
                stop.wait(0.05)

        with LiveIndex(index, WatchSettings(rescan_seconds=0.0)) as live:
            assert live.backfill is not None
            live.backfill.wait_done(3600)  # the base vault embedded (from the cache) before the pull
            searcher_thread = threading.Thread(target=searching, daemon=True)
            searcher_thread.start()
            idle_until = time.perf_counter() + 30
            while len(latencies) < 10 and time.perf_counter() < idle_until:  # an idle server's latencies first
                time.sleep(0.1)  # (one second gave none on a loaded machine: a search took longer)
            idle = list(latencies)
            latencies.clear()
            finished.clear()
            started = time.perf_counter()
            cpu = time.process_time()
            batches = live.watcher.batches_delivered
            if events is not None:
                events.clear()
            for part in range(parts):  # a pull written over more than the watcher's max_wait reaches it in parts
                if part:
                    time.sleep(gap)
                if events is not None:
                    events.append((time.perf_counter(), f"pull written, part {part + 1}/{parts}: start"))
                write(root, files[part * count // parts:(part + 1) * count // parts])
                if events is not None:
                    events.append((time.perf_counter(), f"pull written, part {part + 1}/{parts}: end"))
            last_written = time.perf_counter()
            last = f"number{count - 1}"
            searchable = None
            while searchable is None and time.perf_counter() - started < 600:
                seen = live.syncs
                hits = searcher.search(SearchRequest(query=f"{stamp} {last}", limit=1, mode="keyword"))
                if hits and last in hits[0].memory.body and len([m for m in index.memory_ids() if m.startswith("c")]) == count:
                    searchable = time.perf_counter() - started
                else:  # a pull is searchable once staged (fresh_keywords), before its sync ends: look again soon
                    live.wait_for_sync(seen, SEARCHABLE_POLL)
            keyword_cpu = time.process_time() - cpu
            searchable_after_last_part = time.perf_counter() - last_written if searchable else None
            live.backfill.wait_done(3600)
            embedded = time.perf_counter() - started
            cpu = time.process_time() - cpu
            stop.set()
            searcher_thread.join()
        batches = live.watcher.batches_delivered - batches  # after stop: the last batch's sync has returned
        index.close()
        embedder.close()
    return {"base": base, "pulled": count, "parts": parts, "watcher_batches": batches,
            "keyword_searchable_s": round(searchable or -1, 2),
            **({"part_gap_s": gap, "keyword_searchable_after_last_part_s": round(searchable_after_last_part or -1, 2)}
               if parts > 1 else {}),
            "embedded_s": round(embedded, 1), "memories_per_s": round(count / embedded, 1),
            "search_idle_p50_ms": round(statistics.median(idle), 1) if idle else None,
            "search_p50_ms": round(statistics.median(latencies), 1), "search_p95_ms": round(percentile(latencies, 0.95), 1),
            "search_max_ms": round(max(latencies), 1), "searches": len(latencies),
            **until_searchable(latencies, finished, started + (searchable or 0)),
            # CPU seconds of the whole process (every thread) until keyword-searchable and until embedded
            "keyword_cpu_s": round(keyword_cpu, 1), "cpu_s": round(cpu, 1),
            **({"timeline": [f"{t - started:7.2f} s  {name}" for t, name in events]} if events is not None else {})}


def until_searchable(latencies: list[float], finished: list[float], at: float) -> dict:
    """p50 / p95 / max of the searches that ended before the pull was keyword-searchable: the latency while
    the pull is read and staged, apart from the Whoosh commit and the backfill after it."""
    before = [ms for ms, end in zip(latencies, finished) if end <= at]
    if not before:
        return {"searches_until_searchable": 0}
    return {"searches_until_searchable": len(before), "search_p50_until_searchable_ms": round(statistics.median(before), 1),
            "search_p95_until_searchable_ms": round(percentile(before, 0.95), 1),
            "search_max_until_searchable_ms": round(max(before), 1)}


def watch_events() -> list[tuple[float, str]]:
    """Wrap the sync and the keyword write to note when each began and ended (`--timeline`)."""
    from indexer.keyword import KeywordIndex
    events: list[tuple[float, str]] = []

    def noted(owner: type, name: str, describe) -> None:  # type: ignore[no-untyped-def]
        inner = getattr(owner, name)

        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            label = f"{owner.__name__}.{name}({describe(*args, **kwargs)})"
            events.append((time.perf_counter(), label + ": start"))
            cpu = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                events.append((time.perf_counter(), f"{label}: end, {time.thread_time() - cpu:.2f} s CPU in its thread"))
        setattr(owner, name, wrapper)

    noted(Index, "sync", lambda self, paths=None, folders=(), **_: "all" if paths is None else
          f"{len(list(paths))} paths" + (f", {len(folders)} folders" if folders else ""))
    noted(Index, "_read_ahead", lambda self, paths, *_: "all" if paths is None else f"{len(paths)} paths")
    noted(Index, "_apply", lambda self, batch, *_, **__: f"{len(batch.keyword_docs)} keyword documents")
    if hasattr(KeywordIndex, "stage_ahead"):  # a later batch staged while an earlier one commits (pullstage)
        noted(KeywordIndex, "stage_ahead", lambda self, *a, **_: "")
    noted(KeywordIndex, "replace", lambda self, docs, removed=(), **_: f"{len(docs)} memories")
    for name in ("stage", "fold"):
        if hasattr(KeywordIndex, name):
            noted(KeywordIndex, name, lambda self, *a, **_: "")
    return events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["fresh", "pull", "all"], default="fresh")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, help="fresh: only the first N turns")
    parser.add_argument("--base", type=int, default=10_000, help="pull: memories in the served vault")
    parser.add_argument("--pull", type=int, default=1000, help="pull: memories the pull brings")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "speed-embeddings.sqlite",
                        help="pull: the base vault's embedding cache (kept between runs)")
    parser.add_argument("--code", type=Path, help="the memdir checkout to measure (default: this one)")
    parser.add_argument("--keep-base", type=Path, help="pull: build the base vault once in this folder, copy it for each run")
    parser.add_argument("--runs", type=int, default=1, help="pull: runs in a row (the median is printed too)")
    parser.add_argument("--timeline", action="store_true", help="pull: when each sync and keyword write began and ended")
    parser.add_argument("--parts", type=int, default=1, help="pull: write it in this many parts, --part-gap apart "
                        "(a pull written slower than the watcher's max_wait reaches the server in several batches)")
    parser.add_argument("--part-gap", type=float, default=1.0, help="pull: seconds between the parts")
    parser.add_argument("--int8-documents", action="store_true",
                        help="embed the memories with the int8 graph ([search] int8_documents)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {}
    if args.mode in ("fresh", "all"):
        results["fresh"] = fresh(args.embedder, args.data, args.limit, args.int8_documents)
    if args.mode in ("pull", "all"):
        runs = [pull(args.embedder, args.data, args.base, args.pull, args.cache, args.keep_base, args.timeline,
                     args.parts, args.part_gap, args.int8_documents)
                for _ in range(args.runs)]
        results["pull"] = runs[0] if len(runs) == 1 else {
            "runs": runs, "median": {key: statistics.median(run[key] for run in runs)
                                     for key, value in runs[0].items() if isinstance(value, (int, float))}}
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, figures in results.items():
            print(name + ": " + ", ".join(f"{k} {v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
