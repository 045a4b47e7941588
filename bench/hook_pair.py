"""The prompt hook of two source trees, A/B in one loop: each tree's own warm server and model host, prompts alternated.

    git archive 0e9762d | tar -x -C /tmp/base
    python bench/hook_pair.py --trees /tmp/base,. --long --size 10000 --prompts 24
    python bench/hook_pair.py --trees /tmp/base,. --distinct --sessions 4 --prompts 48   # four sessions at once

Separate runs of bench/hooks.py on a shared machine compare two loads as much as two trees. Here each tree runs
its own bench/servers.py `warm_server` (its own vault, index, server and embedding host, in a subprocess with the
tree first on the path) and every prompt is asked of tree A then tree B (the order flipped every other prompt), so
both see the same load. Beside each tree's p50 / p95: its processes' CPU a prompt (mean over the loop; the hook
process's only with one session). Before the loop each server is left to settle (--settle): until session 22 the
first tree's server did its idle decoding ahead while the second tree was set up, and the second's in the loop, on
its prompts. With --sessions N, N sessions do so at once, each with its share of the prompts (about N
hooks running at any moment, half of each tree); caution: in all five such runs of session 20 the second tree was
slower at the median by x1.15-1.35 whichever tree it was (bench/results/s20-hook20.md; most likely the second server's decoding ahead in the loop,
which --settle now waits for: not re-run with sessions), so run it A/A (one tree
twice) before reading a ratio from it. Prints p50 / p95 per tree and their ratio, the machine's load
before and after, and each tree's vault server and model host resident MB after its hooks.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from hooks import compiled, long_prompts, run_hook  # noqa: E402
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
    compiled(tree)  # before its server starts: a tree's server, host and hooks run from bytecode, as installed
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    holder = subprocess.Popen([sys.executable, "-c", HOLD.format(size=size, data=str(data), embedder=embedder)],
                              cwd=tree / "bench", env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = holder.stdout.readline().split()
    if len(line) != 2:
        holder.kill()
        raise RuntimeError(f"{tree}: the warm server did not start")
    return holder, {**env, "MEMDIR_SERVERS_DIR": line[1]}, Path(line[0])


def hook(tree: Path, env: dict[str, str], root: Path, prompt: str, session: str = "ab") -> float:
    return run_hook(root, session, prompt, env, tree)[0]


def served_pids(env: dict[str, str]) -> dict[str, int | None]:
    """The tree's vault server and model host process ids (read from its own server folder)."""
    from mcp_server import client
    from mcp_server.embedding import host as embed_host

    kept = os.environ.get("MEMDIR_SERVERS_DIR")
    os.environ["MEMDIR_SERVERS_DIR"] = env["MEMDIR_SERVERS_DIR"]
    try:
        host, server = embed_host.running(), client.running()
        return {"server": server.pid if server is not None else None, "host": host.pid if host is not None else None}
    finally:
        if kept is None:
            os.environ.pop("MEMDIR_SERVERS_DIR")
        else:
            os.environ["MEMDIR_SERVERS_DIR"] = kept


def cpu_seconds(pid: int | None) -> float:
    """A live process's user + system CPU so far, every thread's (in clock ticks: summed over a run, not per hook)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pid: int | None, quiet: float = 0.03, span: float = 3.0, at_most: float = 600.0) -> None:
    """Wait until a server spends under `quiet` CPU s in `span` s (bounded): its idle work after an open done (the
    keyword postings and manifest rows a search would decode at its first read, indexer/warm_ahead.py). Prompts sent
    back to back leave it no idle second to do that in, so without this every search of the loop decodes its share."""
    deadline = time.monotonic() + at_most
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(span)
        if cpu_seconds(pid) - before < quiet:
            return


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def resident_mb(env: dict[str, str]) -> dict[str, float | None]:
    """The tree's vault server and model host, resident MB after its hooks (read from its own server folder)."""
    from mcp_server.embedding import host as embed_host
    from mcp_server.server import registry

    kept = os.environ.get("MEMDIR_SERVERS_DIR")
    os.environ["MEMDIR_SERVERS_DIR"] = env["MEMDIR_SERVERS_DIR"]
    try:
        host = embed_host.running()
        host_pid = host.pid if host is not None else None
        return {"server": sum(s.rss_mb or 0.0 for s in registry.servers() if s.pid != host_pid),  # it lists the host too
                "host": registry.rss_mb(host_pid) if host_pid is not None else None}
    finally:
        if kept is None:
            os.environ.pop("MEMDIR_SERVERS_DIR")
        else:
            os.environ["MEMDIR_SERVERS_DIR"] = kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", required=True, help="A,B: two source trees")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--prompts", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=2, help="times each prompt is asked of each tree")
    parser.add_argument("--long", action="store_true", help="bench/long_prompt_set.py's pastes, half behind 8 kB of log")
    parser.add_argument("--distinct", action="store_true",
                        help="a line '(take N)' appended to each prompt in round N: the vault server keeps the query "
                             "vectors it has seen in memory, so without it only the first round embeds its prompts")
    parser.add_argument("--sessions", type=int, default=1, help="sessions asking at once, each its share of the prompts")
    parser.add_argument("--settle", action=argparse.BooleanOptionalAction, default=True,
                        help="after the warm-up, wait until each server is idle (its decoding ahead done), as a server "
                             "is between a user's prompts (default). --no-settle, as before session 22: the first "
                             "tree's server decoded ahead while the second tree's vault was built, the second's did "
                             "it in the loop (+19-24 ms of its CPU a prompt, bench/results/s22-hook22.md)")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--data", type=Path, default=BENCH.parent.parent / "shared" / "bench" / "locomo-dev.json")
    args = parser.parse_args()
    trees = [Path(t).resolve() for t in args.trees.split(",")]
    prompts = long_prompts(args.prompts + 4) if args.long else queries(args.prompts + 4, args.data)
    load = [os.getloadavg()[0]]
    started = [start(tree, args.size, args.data, args.embedder) for tree in trees]
    try:
        times: list[list[float]] = [[] for _ in trees]
        by_kind: list[dict[str, list[float]]] = [{"pastes": [], "behind_log": []} for _ in trees]  # --long
        for tree, (_, env, root) in zip(trees, started):
            for prompt in prompts[:4]:
                hook(tree, env, root, prompt)  # warm: the OS caches, the server's first searches, the host's first queries
        lock = threading.Lock()
        pids = [served_pids(env) for _, env, _ in started]
        if args.settle:
            for ids in pids:
                settle(ids["server"])
        # CPU of each tree's server and host over the whole loop (what a prompt left for later included), and of
        # its hook processes (counted only one hook at a time: the children's CPU is the whole bench's).
        served_cpu = [{k: -cpu_seconds(p) for k, p in ids.items()} for ids in pids]
        hook_cpu = [0.0 for _ in trees]

        def session(number: int) -> None:
            for round_ in range(args.rounds):
                for n, prompt in list(enumerate(prompts[4:]))[number::args.sessions]:
                    prompt = f"{prompt}\n(take {round_ + 1})" if args.distinct else prompt
                    order = [0, 1] if (n + round_) % 2 == 0 else [1, 0]
                    for side in order:
                        _, env, root = started[side]
                        before = children_cpu()
                        elapsed = hook(trees[side], env, root, prompt, f"ab{number}")
                        with lock:
                            hook_cpu[side] += children_cpu() - before
                            times[side].append(elapsed)
                            by_kind[side]["behind_log" if len(prompt) > 8000 else "pastes"].append(elapsed)

        sessions = [threading.Thread(target=session, args=(number,)) for number in range(args.sessions)]
        for thread in sessions:
            thread.start()
        for thread in sessions:
            thread.join()
        for ids, spent in zip(pids, served_cpu):
            for kind, pid in ids.items():
                spent[kind] += cpu_seconds(pid)
        resident = [resident_mb(env) for _, env, _ in started]
    finally:
        for holder, _, _ in started:
            holder.stdin.close()
            holder.wait(timeout=120)
    load.append(os.getloadavg()[0])
    rows = [{"tree": str(tree), "p50_ms": round(statistics.median(t), 1), "p95_ms": round(percentile(t, 0.95), 1),
             "hooks": len(t), "resident_mb": mb,
             "cpu_ms_a_prompt": {"hook": round(1000 * h / len(t), 1) if args.sessions == 1 else None,
                                 **{kind: round(1000 * c / len(t), 1) for kind, c in spent.items()}}}
            for tree, t, mb, h, spent in zip(trees, times, resident, hook_cpu, served_cpu)]
    if args.long:  # half the prompts as they are, half behind 8 kB of log (read by their salient lines)
        for row, kinds in zip(rows, by_kind):
            for kind, values in kinds.items():
                row[f"{kind}_p50_p95_ms"] = [round(statistics.median(values), 1), round(percentile(values, 0.95), 1)]
    ratio = {"p50": round(rows[1]["p50_ms"] / rows[0]["p50_ms"], 2), "p95": round(rows[1]["p95_ms"] / rows[0]["p95_ms"], 2)}
    print(json.dumps({"long": args.long, "size": args.size, "sessions": args.sessions, "settled": args.settle, "load_1min_before_after": load, "trees": rows,
                      "b_over_a": ratio}, indent=2))


if __name__ == "__main__":
    main()
