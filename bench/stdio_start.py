"""How soon `memdir mcp` answers an assistant's first `tools/list`, beside a bare Python start.

    python bench/stdio_start.py                       # this checkout
    python bench/stdio_start.py TREE_A TREE_B         # A/B: each tree first on PYTHONPATH, interleaved

Claude Code waits for `initialize` and `tools/list` before a session's first request. Each run starts
the proxy on a fresh hashing-256 vault in a temporary HOME, sends both requests at once and times the
`tools/list` answer; `python -c pass` with the same interpreter is the floor no proxy can beat. The
machine's load moves every number: compare the trees and the floor within one run.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 9
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}


def first_tools_list_ms(vault: Path, env: dict[str, str]) -> float:
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "mcp_server", "mcp", "--vault", str(vault)], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        process.stdin.write((json.dumps(HELLO) + "\n" + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
                             + "\n").encode())
        process.stdin.flush()
        process.stdout.readline()
        answer = process.stdout.readline()
        took = (time.monotonic() - started) * 1000
        if b'"tools"' not in answer:
            raise SystemExit(f"no tool list: {answer[:200]!r}")
        return took
    finally:
        process.kill()
        process.wait(10)
        process.stdin.close()
        process.stdout.close()


def main() -> None:
    trees = sys.argv[1:] or [str(Path(__file__).resolve().parents[1])]
    with tempfile.TemporaryDirectory() as folder:
        home, vault = Path(folder) / "home", Path(folder) / "v"
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "MEMDIR_SERVERS_DIR": str(home / "servers")}
        env.pop("XDG_RUNTIME_DIR", None)
        subprocess.run([sys.executable, "-m", "mcp_server", "init", str(vault)], env={**env, "PYTHONPATH": trees[-1]},
                       check=True, capture_output=True)
        (vault / "memdir.toml").write_text('[search]\nembedder = "hashing-256"\n')
        times: dict[str, list[float]] = {tree: [] for tree in trees}
        floor: list[float] = []
        try:
            for _ in range(RUNS):
                for tree in trees:
                    times[tree].append(first_tools_list_ms(vault, {**env, "PYTHONPATH": tree}))
                started = time.monotonic()
                subprocess.run([sys.executable, "-c", "pass"], env={**env, "PYTHONPATH": trees[-1]}, check=True)
                floor.append((time.monotonic() - started) * 1000)
        finally:
            subprocess.run([sys.executable, "-m", "mcp_server", "stop", "--all"], env={**env, "PYTHONPATH": trees[-1]},
                           capture_output=True, timeout=60)
    print(f"python -c pass (the floor): median {statistics.median(floor):.0f} ms")
    for tree in trees:
        print(f"{tree}: first tools/list median {statistics.median(times[tree]):.0f} ms "
              f"(floor + {statistics.median(times[tree]) - statistics.median(floor):.0f} ms), runs {RUNS}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
