"""How long a prompt hook holds the prompt when its event cannot be spooled (a full disk) and no server runs: it
waited for the server it starts, up to hooks.UNSPOOLED_START_SECONDS (3.0 s). Session 16 read 3.3-3.5 s at worst.
Since session 20 the event goes to the user's spare spool (client.spare_spool) and the hook does not wait: the same
scenarios then time a hook whose event has a copy (3.01 -> 0.12-0.14 s, s20-lead.md); the wait is left only where the
spare spool cannot be written either.

    python bench/hook_unspooled.py --tree /path/to/memdir-a --tree /path/to/memdir-b [--rounds 5]

Each round runs every scenario once per tree, alternating the trees, and takes the hook's wall time from its
process's start to its exit (`python -m mcp_server hook prompt`, PYTHONPATH = the tree). The spool cannot be written
(`.memdir/spool` is a file), and a stand-in plays the server that is starting (its pid in the start lock, so no real
server is spawned), in one of three ways:

- `none`: it never listens: the hook's wait alone;
- `late-hung`: it listens 2.95 s after the hook was started (just before its wait ends) and never answers;
- `late-trickle`: it listens then too and answers one byte of its headers every 0.15 s (a server that is alive but
  slow to answer: each read gets a byte before a per-read timeout).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STAND_IN = r"""
import json, os, secrets, socket, sys, time
folder, mode, at = sys.argv[1], sys.argv[2], float(sys.argv[3])
if mode == "none":
    sys.stdin.read(); sys.exit(0)
time.sleep(max(at - time.time(), 0))
listening = socket.socket(); listening.bind(("127.0.0.1", 0)); listening.listen()
address = os.path.join(folder, "server.json"); temp = address + ".tmp"
with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as file:
    json.dump({"pid": os.getpid(), "port": listening.getsockname()[1], "token": "t", "started": time.time()}, file)
os.replace(temp, address)
connection, _ = listening.accept()
if mode == "late-trickle":
    try:
        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 200:
            connection.sendall(bytes([byte])); time.sleep(0.15)
    except OSError:
        pass
sys.stdin.read()
"""
SCENARIOS = ("none", "late-hung", "late-trickle")
LISTENS_AFTER = 2.95


def one_run(tree: Path, scenario: str, work: Path) -> float:
    servers = work / f"servers-{secrets.token_hex(3)}"
    servers.mkdir(mode=0o700)
    vault = work / f"vault-{secrets.token_hex(3)}"
    (vault / ".memdir").mkdir(parents=True)
    (vault / "memdir.toml").write_text('[search]\nembedder = "hashing-256"\n')
    (vault / ".memdir" / "spool").write_text("")  # a file where the spool folder goes: the event cannot be spooled
    begun = time.time()
    stand_in = subprocess.Popen([sys.executable, "-c", STAND_IN, str(servers), scenario,
                                 str(begun + LISTENS_AFTER)], stdin=subprocess.PIPE)
    (servers / "server.start.lock").write_text(f"{stand_in.pid} {time.time():.3f}")  # "starting": spawn none
    env = {**os.environ, "PYTHONPATH": str(tree), "MEMDIR_SERVERS_DIR": str(servers), "HF_HUB_OFFLINE": "1"}
    event = {"session_id": "bench", "prompt": "hello", "hook_event_name": "UserPromptSubmit", "cwd": str(vault)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mcp_server", "hook", "prompt", "--vault", str(vault)],
                   input=json.dumps(event).encode(), capture_output=True, env=env, timeout=120,
                   cwd=tree)  # `-m` puts the working folder first on the path: the tree's own package, not this one
    held = time.perf_counter() - started
    stand_in.stdin.close()
    stand_in.kill()
    stand_in.wait()
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    held: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="memdir-unspooled-") as folder:
        for _ in range(args.rounds):
            for scenario in SCENARIOS:
                for tree in args.tree:
                    held.setdefault((str(tree), scenario), []).append(one_run(tree, scenario, Path(folder)))
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; rounds: {args.rounds}")
    print("| tree | scenario | median s | max s |\n|---|---|---|---|")
    for (tree, scenario), times in held.items():
        print(f"| {tree} | {scenario} | {statistics.median(times):.3f} | {max(times):.3f} |")


if __name__ == "__main__":
    main()
