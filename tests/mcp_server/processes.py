"""Real processes for server tests: `memdir serve`, stdio MCP sessions and hook commands."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from mcp import Client, StdioServerParameters
from mcp_server import client
from mcp_server.waiting import wait_until


def start_server(root: Path) -> subprocess.Popen:
    """`memdir serve` for `root`, returned once that process is this user's server with `root` open."""
    process = subprocess.Popen([sys.executable, "-m", "mcp_server", "serve", "--vault", str(root)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: (client.running() or client.ServerInfo(0, 0, "", 0)).pid == process.pid)
    assert client.ensure(root).pid == process.pid
    return process


def serves(root: Path) -> bool:
    """Whether this user's server has `root` open (its health check lists it)."""
    info = client.running()
    if info is None:
        return False
    try:
        health = client.request(info, "GET", "/api/health", timeout=5.0)
    except (client.Unavailable, client.RemoteError):
        return False
    return str(root) in [v["vault"] for v in health["vaults"]]


def wait_for(condition, timeout: float = 60.0) -> None:
    """Poll a condition another process will make true (bounded): a server has no event to wait on."""
    assert wait_until(condition, timeout), "timed out"


def stop_all(root: Path | None = None, process: subprocess.Popen | None = None) -> None:
    """Stop this user's server, any server a client restarted after it (each test has its own user folder),
    and any server a hook spawned for `root` that was still starting (not yet registered) when asked."""
    for _ in range(3):
        info = client.running()
        if info is None:
            break
        _terminate(info.pid)
    if root is not None:
        stop_starting(root)
    if process is not None:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=20)
        process.stderr.close()


def stdio(root: Path) -> Client:
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "mcp_server", "mcp", "--vault", str(root)],
                                        env={**os.environ}))


def hook(event: str, payload: Any, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run `memdir hook EVENT` the way Claude Code does: JSON on stdin, a fresh process."""
    stdin = payload if isinstance(payload, (str, bytes)) else json.dumps(payload)
    return subprocess.run([sys.executable, "-m", "mcp_server", "hook", event, *args],
                          input=stdin.encode() if isinstance(stdin, str) else stdin,
                          capture_output=True, timeout=60, cwd=cwd)


def hook_context(result: subprocess.CompletedProcess) -> str:
    """The additionalContext a hook printed ("" when it printed nothing)."""
    assert result.returncode == 0, result.stderr
    if not result.stdout.strip():
        return ""
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def stop_starting(root: Path, keep: int | None = None) -> None:
    """Stop every server started for `root` (a hook's, maybe not registered yet) but the one with pid `keep`."""
    for pid in _starting(root):
        if pid != keep:
            _terminate(pid)


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    wait_until(lambda: not client.process_alive(pid), 20)


def _starting(root: Path) -> list[int]:
    """Servers started for `root` (`memdir serve --vault ROOT`), found by their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp_server" in words and b"serve" in words and str(root).encode() in words:
            found.append(int(entry.name))
    return found


@contextmanager
def hung_server() -> Iterator[None]:
    """This user's server address names a port that takes connections and never answers (a hung server)."""
    with socket.socket() as hung:
        hung.bind(("127.0.0.1", 0))
        hung.listen()
        address = client.own_folder() / client.ADDRESS_FILE
        address.write_text(json.dumps({"pid": os.getpid(), "port": hung.getsockname()[1], "token": "t", "started": 0}))
        address.chmod(0o600)
        try:
            yield
        finally:
            address.unlink(missing_ok=True)
