"""vault.lock's flock helpers, which the index's owner, a served vault, the server and the embedding host share."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from vault.lock import open_lock_file, release, try_flock, try_lock

HOLD = "import sys, fcntl, os; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()"


def test_a_lock_another_process_holds_is_refused_without_waiting_and_free_once_it_lets_go(tmp_path: Path):
    path = tmp_path / "some.lock"
    fd = try_lock(path)
    assert fd is not None and stat.S_IMODE(path.stat().st_mode) == 0o600  # created for this user only
    release(fd)
    with subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as holder:
        assert holder.stdout.readline().strip() == "held"
        assert try_lock(path) is None
        waiting = open_lock_file(path)
        assert try_flock(waiting) is False
        holder.stdin.close()
        holder.wait(timeout=30)
        assert try_flock(waiting) is True  # the holder's exit released it
        release(waiting)


def test_a_refused_try_lock_leaves_no_descriptor_open(tmp_path: Path):
    path = tmp_path / "some.lock"
    held = try_lock(path)
    before = len(os.listdir("/proc/self/fd"))
    assert all(try_lock(path) is None for _ in range(20))  # another fd of this process holds it: flock refuses
    assert len(os.listdir("/proc/self/fd")) == before
    release(held)
