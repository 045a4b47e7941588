"""The prompt hook of two source trees, A/B in one loop: each tree's own warm server and model host, prompts alternated.

    git archive 0e9762d | tar -x -C /tmp/base
    python bench/hook_pair.py --trees /tmp/base,. --long --size 10000 --prompts 24

Separate runs of bench/hooks.py on a shared machine compare two loads as much as two trees. Here each tree runs
its own bench/servers.py `warm_server` (its own vault, index, server and embedding host, in a subprocess with the
tree first on the path) and every prompt is asked of tree A then tree B (the order flipped every other prompt), so
both see the same load. Prints p50 / p95 per tree and their ratio, and the machine's load before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from hooks import long_prompts, run_hook  # noqa: E402
from speed import percentile, queries  # noqa: E402

# Run inside the tree's own bench/: start its warm server, say where it is, hold it until stdin closes.
HOLD = """
import os, sys
from pathlib import Path
from servers import warm_server
with warm_server({size}, Path({data!r}), {embedder!r}) as root:
    print(root, os.environ["MEMDIR_SERVERS_DIR"], flush=True)
    sys.stdin.read()
"""


def start(tree: Path, size: int, data: Path, embedder: str) -> tuple[subprocess.Popen, dict[str, str], Path]:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    holder = subprocess.Popen([sys.executable, "-c", HOLD.format(size=size, data=str(data), embedder=embedder)],
                              cwd=tree / "bench", env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = holder.stdout.readline().split()
    if len(line) != 2:
        holder.kill()
        raise RuntimeError(f"{tree}: the warm server did not start")
    return holder, {**env, "MEMDIR_SERVERS_DIR": line[1]}, Path(line[0])


def hook(tree: Path, env: dict[str, str], root: Path, prompt: str) -> float:
    return run_hook(root, "ab", prompt, env, tree)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", required=True, help="A,B: two source trees")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--prompts", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=2, help="times each prompt is asked of each tree")
    parser.add_argument("--long", action="store_true", help="bench/long_prompt_set.py's pastes, half behind 8 kB of log")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--data", type=Path, default=BENCH.parent.parent / "shared" / "bench" / "locomo-dev.json")
    args = parser.parse_args()
    trees = [Path(t).resolve() for t in args.trees.split(",")]
    prompts = long_prompts(args.prompts + 4) if args.long else queries(args.prompts + 4, args.data)
    load = [os.getloadavg()[0]]
    started = [start(tree, args.size, args.data, args.embedder) for tree in trees]
    try:
        times: list[list[float]] = [[] for _ in trees]
        for tree, (_, env, root) in zip(trees, started):
            for prompt in prompts[:4]:
                hook(tree, env, root, prompt)  # warm: the OS caches, the server's first searches, the host's first queries
        for round_ in range(args.rounds):
            for n, prompt in enumerate(prompts[4:]):
                order = [0, 1] if (n + round_) % 2 == 0 else [1, 0]
                for side in order:
                    _, env, root = started[side]
                    times[side].append(hook(trees[side], env, root, prompt))
    finally:
        for holder, _, _ in started:
            holder.stdin.close()
            holder.wait(timeout=120)
    load.append(os.getloadavg()[0])
    rows = [{"tree": str(tree), "p50_ms": round(statistics.median(t), 1), "p95_ms": round(percentile(t, 0.95), 1),
             "hooks": len(t)} for tree, t in zip(trees, times)]
    ratio = {"p50": round(rows[1]["p50_ms"] / rows[0]["p50_ms"], 2), "p95": round(rows[1]["p95_ms"] / rows[0]["p95_ms"], 2)}
    print(json.dumps({"long": args.long, "size": args.size, "load_1min_before_after": load, "trees": rows,
                      "b_over_a": ratio}, indent=2))


if __name__ == "__main__":
    main()
