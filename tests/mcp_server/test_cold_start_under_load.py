"""A cold start under many sessions: the hooks that come while the server starts spawn no second server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_server import client
from mcp_server.waiting import wait_until


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch):
    """`spawn_memdir` starting a real process that lives until killed (a server still importing, as seen from
    outside: alive, holding no lock yet); every process it started is killed and collected afterwards."""
    pids: list[int] = []

    def spawn(args: list[str], log: Path) -> int:
        pid = os.posix_spawn("/bin/sleep", ["sleep", "60"], dict(os.environ))
        pids.append(pid)
        return pid

    monkeypatch.setattr(client, "spawn_memdir", spawn)
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def exec_done(lock: Path) -> None:
    """A spawned child holds its parent's descriptors (the start lock's too) for an instant after `posix_spawn`
    returns, until its exec closes them: a caller then is told "starting" by the lock itself."""
    assert wait_until(lambda: not client.lock_held(lock), timeout=10)


def test_a_hook_during_the_servers_start_spawns_no_second_server(tmp_path: Path, spawned: list[int]):
    lock, log = tmp_path / "server.start.lock", tmp_path / "server.log"
    first = client.spawn_once(lock, lambda: False, ["serve"], log)
    assert first is not None
    # Not present yet (it holds no lock before its imports are done), but starting: eight more hooks spawn nothing.
    assert [client.spawn_once(lock, lambda: False, ["serve"], log) for _ in range(8)] == [None] * 8
    assert spawned == [first]


def test_a_starter_that_died_does_not_hold_back_the_next_start(tmp_path: Path, spawned: list[int]):
    lock, log = tmp_path / "server.start.lock", tmp_path / "server.log"
    first = client.spawn_once(lock, lambda: False, ["serve"], log)
    assert first is not None
    os.kill(first, signal.SIGKILL)
    os.waitpid(first, 0)
    exec_done(lock)
    second = client.spawn_once(lock, lambda: False, ["serve"], log)
    assert second is not None and second != first


def test_a_start_older_than_its_bound_no_longer_counts(tmp_path: Path, spawned: list[int]):
    lock, log = tmp_path / "server.start.lock", tmp_path / "server.log"
    first = client.spawn_once(lock, lambda: False, ["serve"], log)
    assert first is not None
    lock.write_text(f"{first} {time.time() - client.STARTING_SECONDS - 1:.3f}")  # alive, but hung for too long
    exec_done(lock)
    assert client.spawn_once(lock, lambda: False, ["serve"], log) is not None


def test_a_start_lock_without_a_record_is_no_start_under_way(tmp_path: Path, spawned: list[int]):
    lock, log = tmp_path / "server.start.lock", tmp_path / "server.log"
    lock.write_text("")  # an older memdir's lock file: empty
    exec_done(lock)
    assert client.spawn_once(lock, lambda: False, ["serve"], log) is not None


def test_the_server_imports_the_web_pages_only_when_a_page_is_asked_for():
    code = ("import sys, mcp_server.server.process as p; p.UserServer()._asgi(None); "
            "print(sorted(m for m in ('mcp_server.web.routes', 'mcp_server.web.pages', 'markdown_it') if m in sys.modules))")
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert imported.stdout.strip() == "[]"
