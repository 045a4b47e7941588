"""Resident memory of memdir's processes: one project against three, with one shared model and with a model each.

Each project is a copy of the bundled `.memories-example/` vault with no index yet, as a new user
has it: it is asked for the way a hook or `memdir mcp` asks (the first starts this user's server, the
others are opened by that same process), its index is built, and it answers five searches; then the
resident memory (VmRSS) of every memdir process of this user (the server and the embedding host) is
summed. They register in a temporary folder, so nothing of the user's is touched. "a model each" means
`shared_embedder = false`: each vault's App loads its own model, inside the one server process.

    python bench/memory.py          # table
    python bench/memory.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcp_server import client  # noqa: E402
from mcp_server.embedding import host as embed_host  # noqa: E402
from mcp_server.server import registry  # noqa: E402

QUESTIONS = ("how do we lock imports", "what did we decide about squash merges", "money rounding",
             "celery redelivery", "what am I working on right now")


def processes() -> dict[int, float]:
    """pid -> resident MB of this run's memdir server and embedding host (the vaults of one server share its pid)."""
    found = {s.pid: s.rss_mb or 0.0 for s in registry.servers()}
    host = embed_host.running()
    if host is not None:
        found[host.pid] = registry.rss_mb(host.pid) or 0.0
    return found


def run(projects: int, shared: bool, work: Path) -> dict:
    os.environ["MEMDIR_SERVERS_DIR"] = str(work / f"servers-{projects}-{shared}")
    roots = []
    answers = []
    try:
        for n in range(projects):
            root = work / f"project-{projects}-{shared}-{n}" / ".memories"
            shutil.copytree(REPO / ".memories-example", root, ignore=shutil.ignore_patterns(".memdir"))
            config = (root / "memdir.toml").read_text()
            (root / "memdir.toml").write_text(config.replace("shared_embedder = true", f"shared_embedder = {str(shared).lower()}"))
            roots.append(root)
            started = time.perf_counter()
            client.ensure(root, timeout=180)
            client.call(root, "search", {"query": QUESTIONS[0]}, timeout=60)
            answers.append(round(time.perf_counter() - started, 1))  # (start,) open, index from scratch, first answer
            for question in QUESTIONS[1:]:
                client.call(root, "search", {"query": question}, timeout=60)
        rss = processes()
        return {"projects": projects, "shared_model": shared, "processes": len(rss),
                "resident_mb": round(sum(rss.values()), 1), "per_process_mb": sorted(rss.values(), reverse=True),
                "first_answer_s_per_project": answers}
    finally:
        registry.stop()
        host = embed_host.running()
        if host is not None:
            os.kill(host.pid, 15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="memdir-memory-") as tmp:
        work = Path(tmp)
        rows = [run(1, False, work), run(1, True, work), run(3, True, work), run(3, False, work)]
    one = {r["shared_model"]: r["resident_mb"] for r in rows if r["projects"] == 1}
    for r in rows:
        r["ratio_to_one_project"] = round(r["resident_mb"] / one[r["shared_model"]], 2)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'projects':>8} {'shared model':>13} {'processes':>9} {'resident MB':>12} {'x one':>6}  first answer s, per project")
    for r in rows:
        print(f"{r['projects']:8} {str(r['shared_model']):>13} {r['processes']:9} {r['resident_mb']:12.1f} "
              f"{r['ratio_to_one_project']:6.2f}  {', '.join(str(a) for a in r['first_answer_s_per_project'])}")


if __name__ == "__main__":
    main()
