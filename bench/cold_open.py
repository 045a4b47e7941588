"""A reader's cold open to its first answer, two code trees alternating on the same built vault.

    python bench/cold_open.py --vault DIR --code /path/to/base --code . --rounds 3 --embedder hashing-384

Each run is a fresh Python process with one tree first on its path: it imports memdir, opens the vault's index as a
reader does (`Index()`), and answers one search. The figures are the process's CPU seconds up to the answer (the
interpreter's start, imports, the open, the search; the steadier figure on a shared machine), the wall seconds from
the parent's start of the process, and the resident memory at the answer. The trees run in turn, round after round,
so load that comes and goes falls on both; medians per tree are printed with each run, and the answers' ids, which
must be the same for every tree (asserted).

    python bench/cold_open.py --served --vault DIR --code /path/to/base --code . --rounds 2

`--served`: each run starts a server on the vault instead (`memdir serve --vault DIR`, its own MEMDIR_SERVERS_DIR) and
asks it one search over HTTP as soon as its address is written (an operation waits for the vault to open): the wall
seconds from the server's start to the answer, the server's CPU seconds and resident memory at the answer (from
/proc). The server's lifecycle schedule, watcher and reconcile run as they do for a user, so the vault needs a
memdir.toml naming its embedder, and lifecycle thresholds under which its first run changes nothing (else the first
run of the first tree moves files and the trees answer different vaults). The server is stopped (SIGTERM) after each
answer.

    python bench/cold_open.py --served --vault DIR --reset COPY --code /path/to/base --code . --rounds 3

`--reset COPY`: before each run, the vault's `.memdir/index` is made a copy of COPY again (a copy of that folder taken
once): a server that rewrites its vectors' snapshot, heals or writes facts after its answer would otherwise hand the
next run, of the other tree, another index (its vectors.log folded in, say). With `--reopen`, each measured run
comes after one served session of the same tree on the reset index (started, asked, stopped; not measured): the
first answer of the vault's next open, as a user finds it the day after.

`--compile`: each tree's modules are compiled to bytecode (its `__pycache__`) before the first round, as a wheel's
install leaves them. Where PYTHONDONTWRITEBYTECODE is set (this machine's sessions), every run otherwise compiled
memdir's modules from source: 0.24 CPU s of a reader's 100k cold open, the same for every tree
(bench/results/s20-open20.md).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mcp_server import client  # noqa: E402  (the bench's own tree: the HTTP client, nothing of the served code)

QUERY = "what did they say about the trip"
SAMPLER = Path(__file__).resolve().parent / "thread_cpu"
# A sampled stack's phase: the first (thread name, frame) test that matches, in this order.
PHASES = [
    ("imports and CLI (main thread)", lambda th, st: th == "MainThread"),
    ("MCP endpoint built", lambda th, st: "served.py:build_mcp" in st),
    ("lifecycle run (its thread)", lambda th, st: th.startswith("memdir-lifecycle")),
    ("reconcile: heal (its thread, the index lock held)", lambda th, st: th.startswith("reconcile") and "index.py:heal" in st),
    ("reconcile: files read and hashed (its thread)", lambda th, st: th.startswith("reconcile") and "index.py:_read_ahead" in st),
    ("reconcile: the rest (its thread)", lambda th, st: th.startswith("reconcile")),
    ("open: manifest rows read", lambda th, st: "manifest.py:rows" in st),
    ("open: vectors' first pass fitted", lambda th, st: "vectors.py:_fit_first_pass" in st),
    ("open: vectors loaded", lambda th, st: "vectors.py:load" in st),
    ("open: chunk and unit owners from the rows", lambda th, st: "index.py:_row_chunk_owners" in st
     or "index.py:_row_whole_owners" in st),
    ("open: rest of Index()", lambda th, st: "index.py:__init__" in st),
    ("open: rest of ServedVault.load", lambda th, st: "served.py:load" in st),
    ("search: lifecycle `_leaving`", lambda th, st: "search.py:_leaving" in st),
    ("search: the facets' pass over the rows", lambda th, st: "lazy_rows.py:facet_rows" in st),
    ("search: rest", lambda th, st: "search.py:search" in st),
]

CHILD = """
import json, resource, sys, time
from pathlib import Path
from indexer.embed import CachedEmbedder, make_embedder
from indexer.generations import Layout
from indexer.index import Index
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from vault import Vault
root, name, query = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
imported = time.process_time()
index = Index(Vault(root), CachedEmbedder(make_embedder(name), None), Layout(root).current(), writable=False)
opened = time.process_time()
hits = Searcher(index, SearchSettings(embedder=name)).search(SearchRequest(query=query, limit=10))
answered = time.process_time()
rss = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS:")) / 1024
print(json.dumps({"at": time.time(), "cpu": answered, "imports_cpu": imported, "open_cpu": opened - imported,
                  "search_cpu": answered - opened, "rss_mb": rss, "hits": [h.memory.id for h in hits]}))
"""


def run(code: Path, vault: Path, embedder: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    started = time.time()
    out = subprocess.run([sys.executable, "-c", CHILD, str(vault), embedder, QUERY], env=env, cwd=code,
                         capture_output=True, text=True, check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    found["wall"] = found.pop("at") - started
    return found


def phases(samples: Path, until: float) -> dict[str, float]:
    """CPU seconds by phase (PHASES) of the samples taken up to `until`."""
    found: dict[str, float] = {}
    for line in samples.read_text().splitlines():
        charge = json.loads(line)
        if charge["ts"] > until + 0.02:  # the sampler's tick that saw the answer
            continue
        stack = " ".join(charge["stack"])
        name = next((name for name, test in PHASES if test(charge["th"], stack)), "other")
        found[name] = found.get(name, 0.0) + charge["cpu"]
    return found


def served(code: Path, vault: Path, embedder: str, sample: bool = False) -> dict:
    """A server started on the vault with `code` first on its path, and its first search's answer."""
    with tempfile.TemporaryDirectory(prefix="memdir-cold-") as folder:
        env = {**os.environ, "PYTHONPATH": str(code), "MEMDIR_SERVERS_DIR": folder, "HF_HUB_OFFLINE": "1"}
        if sample:
            env["PYTHONPATH"] += os.pathsep + str(SAMPLER)
            env["MEMDIR_SAMPLE_OUT"] = str(Path(folder) / "samples.jsonl")
        started = time.time()
        server = subprocess.Popen([sys.executable, "-m", "mcp_server", "serve", "--vault", str(vault)], env=env,
                                  cwd=code, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 600
            while (info := client.ServerInfo.read(Path(folder))) is None:  # nothing to wait on but its address file
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server of {code} did not start; see {folder}")
                time.sleep(0.05)
            answer = client.request(info, "POST", "/api/op", {"op": "search", "args": {"query": QUERY, "limit": 10}},
                                    timeout=1800, vault=vault)
            answered = time.time()
            wall = answered - started
            stat = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime of every thread
            status = Path(f"/proc/{server.pid}/status").read_text().splitlines()
            rss, peak = (next(int(line.split()[1]) for line in status if line.startswith(key)) for key in ("VmRSS:", "VmHWM:"))
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=600)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        by_phase = phases(Path(folder) / "samples.jsonl", answered) if sample else {}
    return {"phases": by_phase, "cpu": cpu, "wall": wall, "rss_mb": rss / 1024, "peak_mb": peak / 1024, "imports_cpu": 0.0, "open_cpu": 0.0, "search_cpu": 0.0,
            "hits": [hit["id"] for hit in answer["result"]["results"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--code", type=Path, action="append", required=True, help="a source tree (give two or more)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embedder", default="hashing-384")
    parser.add_argument("--served", action="store_true", help="a server's first answer, not a reader's (see above)")
    parser.add_argument("--sample", action="store_true", help="with --served: its CPU by phase (see above)")
    parser.add_argument("--reset", type=Path, help="a copy of the vault's .memdir/index put back before each run")
    parser.add_argument("--reopen", action="store_true", help="with --served: measure the open after one served session")
    parser.add_argument("--compile", action="store_true", help="compile each tree's modules to bytecode first (see above)")
    args = parser.parse_args()
    if args.compile:
        for code in args.code:
            compileall.compile_dir(str(code), quiet=1, workers=1)
    measure = (lambda code, vault, embedder: served(code, vault, embedder, args.sample)) if args.served else run
    runs: dict[Path, list[dict]] = {code: [] for code in args.code}
    answers = set()
    for round_ in range(args.rounds):
        for code in args.code:
            if args.reset:
                index = args.vault / ".memdir" / "index"
                shutil.rmtree(index)
                shutil.copytree(args.reset, index)
                os.sync()  # the copy's writeback is not the measured server's
            if args.reopen:
                served(code.resolve(), args.vault.resolve(), args.embedder)
                os.sync()
            found = measure(code.resolve(), args.vault.resolve(), args.embedder)
            runs[code].append(found)
            answers.add(tuple(found["hits"]))
            print(f"round {round_ + 1} {code}: CPU {found['cpu']:.2f} s (imports {found['imports_cpu']:.2f}, open "
                  f"{found['open_cpu']:.2f}, search {found['search_cpu']:.2f}), wall {found['wall']:.2f} s, "
                  f"RSS {found['rss_mb']:.0f} MB, peak {found.get('peak_mb', 0):.0f} MB, load {os.getloadavg()[0]:.1f}", flush=True)
            if found.get("phases"):
                print("  " + ", ".join(f"{name} {cpu:.2f}" for name, cpu in sorted(found["phases"].items(),
                                                                                   key=lambda kv: -kv[1])))
    assert len(answers) == 1, f"the trees answered differently: {answers}"
    for code, found in runs.items():
        median = {key: statistics.median(f.get(key, 0.0) for f in found)
                  for key in ("cpu", "open_cpu", "search_cpu", "wall", "rss_mb", "peak_mb")}
        print(f"median {code}: CPU {median['cpu']:.2f} s (open {median['open_cpu']:.2f}, search {median['search_cpu']:.2f}),"
              f" wall {median['wall']:.2f} s, RSS {median['rss_mb']:.0f} MB, peak {median['peak_mb']:.0f} MB")
        if args.sample:
            names = sorted({name for f in found for name in f["phases"]}, key=[n for n, _ in PHASES + [("other", 0)]].index)
            for name in names:
                print(f"  | {name} | {statistics.median(f['phases'].get(name, 0.0) for f in found):.2f} |")
            print(f"  | sampled, median | {statistics.median(sum(f['phases'].values()) for f in found):.2f} |")


if __name__ == "__main__":
    main()
