"""Answers as of a past date: the first search at a commit (snapshot + index build) and warm searches.

A vault of N memories (LoCoMo turns, as in speed.py) is committed, then changed over C more commits
(each rescoring a few memories and rewording one), the way a team's vault moves. The vault's live
index is built first, so its embedding cache holds today's texts, as in a running server. Then a
search is asked as of a date in the middle of the history: the first call writes that commit's files
under .memdir/asof/ and indexes them; later calls reuse the index.

    python bench/asof.py --memories 1000 --commits 200 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from mcp_server.service.app import App  # noqa: E402
from mcp_server.config import default_config_text  # noqa: E402
from mcp_server.service.memory_service import MemoryService  # noqa: E402
from speed import DEFAULT_DATA, generate, queries  # noqa: E402
from vault import init_vault  # noqa: E402
from mcp_server.service import operations as ops


def git(root: Path, *args: str, date: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.com"}
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def build(project: Path, memories: int, commits: int, data: Path) -> list[str]:
    vault = project / ".memories"
    init_vault(vault, default_config_text().replace('every = "1h"', 'every = "off"'))
    generate(vault, memories, data)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "vault", date="2026-09-01T12:00:00Z")
    files = sorted(vault.rglob("m*.md"))
    rng = random.Random(3)
    dates = []
    for n in range(commits):
        for path in rng.sample(files, 5):
            text = path.read_text()
            head, _, rest = text.partition("uses: ")
            uses, _, tail = rest.partition("\n")
            path.write_text(f"{head}uses: {int(uses) + 1}\n{tail}")
        reworded = rng.choice(files)
        reworded.write_text(reworded.read_text().rstrip("\n") + f" (revised in commit {n})\n")
        date = (datetime(2026, 9, 1, 12, tzinfo=timezone.utc) + timedelta(hours=12 * (n + 1))).isoformat()
        git(project, "commit", "-q", "-am", f"change {n}", date=date)
        dates.append(date[:10])
    return dates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="memdir-asof-") as tmp:
        project = Path(tmp)
        started = time.perf_counter()
        dates = build(project, args.memories, args.commits, args.data)
        built = time.perf_counter() - started
        app = App(project / ".memories")
        service = MemoryService(app)
        asked = queries(40, args.data)
        try:
            service.search(ops.Search(query=asked[0]))  # the live index and the model are warm, as in a server
            middle = dates[len(dates) // 2]
            started = time.perf_counter()
            service.search(ops.Search(query=asked[0], as_of=middle))
            first = (time.perf_counter() - started) * 1000
            warm = []
            cache = app.project.index.embedder
            for question in asked[1:]:
                cache.forget_queries()  # each search pays for its query's embedding
                started = time.perf_counter()
                service.search(ops.Search(query=question, as_of=middle))
                warm.append((time.perf_counter() - started) * 1000)
            live = []
            for question in asked[1:]:
                cache.forget_queries()
                started = time.perf_counter()
                service.search(ops.Search(query=question))
                live.append((time.perf_counter() - started) * 1000)
        finally:
            app.close()
    result = {"memories": args.memories, "commits": args.commits + 1, "history_build_s": round(built, 1),
              "as_of": middle, "first_call_ms": round(first, 1), "warm_p50_ms": round(statistics.median(warm), 1),
              "live_p50_ms": round(statistics.median(live), 1)}
    print(json.dumps(result, indent=2) if args.json else
          f"{result['memories']} memories, {result['commits']} commits: as of {middle}, first call "
          f"{result['first_call_ms']} ms, then p50 {result['warm_p50_ms']} ms (live search p50 {result['live_p50_ms']} ms)")


if __name__ == "__main__":
    main()
