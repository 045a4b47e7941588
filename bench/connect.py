"""`memdir mcp`: from process start to the answer to `tools/list`, with no vault server running.

What Claude Code waits for before a session's first request: initialize, initialized, tools/list
over stdio. The vault server the proxy starts meanwhile is stopped after each run.

    python bench/connect.py --runs 10
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcp_server import client  # noqa: E402
from mcp_server.server import registry  # noqa: E402

MESSAGES = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def once(vault: Path) -> float:
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "mcp_server", "mcp", "--vault", str(vault)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin and process.stdout
    process.stdin.write("".join(json.dumps(m) + "\n" for m in MESSAGES).encode())
    process.stdin.flush()
    while True:
        answer = json.loads(process.stdout.readline())
        if answer.get("id") == 2:
            elapsed = time.perf_counter() - started
            assert len(answer["result"]["tools"]) >= 15
            break
    process.stdin.close()
    process.wait(timeout=10)
    process.stdout.close()
    client.ensure(vault, timeout=120)  # the proxy started the vault server while warming: stop it for the next run
    registry.stop()
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdir-connect-") as tmp:
        os.environ["MEMDIR_SERVERS_DIR"] = str(Path(tmp) / "servers")
        vault = Path(tmp) / ".memories"
        shutil.copytree(REPO / ".memories-example", vault, ignore=shutil.ignore_patterns(".memdir"))
        (vault / "memdir.toml").write_text('[search]\nembedder = "hashing-256"\n')  # the vault server is not timed
        times = sorted(once(vault) for _ in range(args.runs))
    result = {"runs": args.runs, "median_ms": round(statistics.median(times), 1), "min_ms": round(times[0], 1),
              "max_ms": round(times[-1], 1)}
    print(json.dumps(result) if args.json else
          f"tools/list after {result['median_ms']} ms (median of {args.runs}; {result['min_ms']}-{result['max_ms']})")


if __name__ == "__main__":
    main()
