"""CPU seconds a pull costs until it is keyword-searchable, phase by phase (issue 32 item 4).

    python bench/pull_cpu.py --keep-base DIR [--base 10000] [--pull 1000] [--runs 3] [--code CHECKOUT] [--json]

`bench/reindex.py --mode pull` measures a pull beside a searching thread and a watcher, in wall seconds: on a
shared machine those are mostly waiting (for a core, for the GIL the searches hold). This one applies the same
pull (1,000 new memories in new folders, written before the sync) to a copy of the same base vault with one
`Index.sync` in this thread, nothing else running in the process, and reports the thread's CPU seconds: to the
end of the staging that makes the pull keyword-searchable, and to the end of the sync (Whoosh's commit
included), with the phases before staging and the time the cyclic garbage collector took. `--keep-base` is
`bench/reindex.py`'s (the base vault built once there, copied for each run); `--code` measures another checkout.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CODE = Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv[:-1] else REPO
sys.path.insert(0, str(CODE))
sys.path.insert(0, str(CODE / "bench"))

from locomo import DEFAULT_DATA  # noqa: E402
from reindex import built_base, turn_files, write  # noqa: E402

from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.keyword import KeywordIndex  # noqa: E402
from vault import Vault  # noqa: E402

PHASES = ("_walk_folders", "_read_ahead", "_chunk")  # timed apart; the rest before staging is reading under the lock


def one_pull(keep: Path, base: int, count: int, embedder_name: str, data: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="memdir-pullcpu-") as tmp:
        root = Path(tmp) / "vault"
        embedder = CachedEmbedder(make_embedder(embedder_name), Path(tmp) / "cache.sqlite")
        built_base(root, base, data, embedder, keep)
        index = Index.open(Vault(root), embedder, defer_embedding=True)
        stamp = f"{time.time_ns():x}"
        files = [(rel.replace("history/", "pulled/"), text + f"pulled {stamp} number{i}\n")
                 for i, (rel, text) in enumerate(turn_files(data, count))]
        write(root, files)
        folders = sorted({root / "/".join(rel.split("/")[:2]) for rel, _ in files})
        phases: dict[str, float] = {}
        staged: list[float] = []
        undo = [_timed(Index, name, phases) for name in PHASES]
        stage = KeywordIndex.stage

        def staging(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            begun = time.thread_time()
            try:
                return stage(self, *args, **kwargs)
            finally:
                phases["stage"] = phases.get("stage", 0.0) + time.thread_time() - begun
                staged.append(time.thread_time())
        KeywordIndex.stage = staging  # type: ignore[method-assign]
        collected = {"seconds": 0.0, "until_staged": 0.0, "full": 0}
        began = [0.0]

        def collecting(phase: str, info: dict) -> None:
            if phase == "start":
                began[0] = time.perf_counter()
                return
            spent = time.perf_counter() - began[0]
            collected["seconds"] += spent
            collected["until_staged"] += spent if not staged else 0.0
            collected["full"] += info["generation"] == 2
        gc.callbacks.append(collecting)
        try:
            start = time.thread_time()
            index.sync([root / rel for rel, _ in files], folders=folders)
            end = time.thread_time()
        finally:
            gc.callbacks.remove(collecting)
            KeywordIndex.stage = stage  # type: ignore[method-assign]
            for restore in undo:
                restore()
            index.close()
            embedder.close()
    return {"cpu_to_searchable_s": round(staged[0] - start, 3), "cpu_sync_s": round(end - start, 3),
            **{f"{name.strip('_')}_cpu_s": round(phases.get(name, 0.0), 3) for name in (*PHASES, "stage")},
            "gc_s_until_searchable": round(collected["until_staged"], 3), "gc_s": round(collected["seconds"], 3),
            "gc_full_passes": collected["full"]}


def _timed(owner: type, name: str, phases: dict[str, float]):  # type: ignore[no-untyped-def]
    inner = getattr(owner, name)

    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        begun = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            phases[name] = phases.get(name, 0.0) + time.thread_time() - begun
    setattr(owner, name, wrapper)
    return lambda: setattr(owner, name, inner)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep-base", type=Path, required=True, help="the base vault, built here once and copied")
    parser.add_argument("--base", type=int, default=10_000)
    parser.add_argument("--pull", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--embedder", default="hashing-256")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--code", type=Path, help="the memdir checkout to measure (default: this one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = [one_pull(args.keep_base, args.base, args.pull, args.embedder, args.data) for _ in range(args.runs)]
    median = {key: round(statistics.median(run[key] for run in runs), 3) for key in runs[0]}
    result = {"code": str(CODE), "base": args.base, "pulled": args.pull, "median": median, "runs": runs}
    print(json.dumps(result, indent=2) if args.json else
          ", ".join(f"{key} {value}" for key, value in median.items()))


if __name__ == "__main__":
    main()
