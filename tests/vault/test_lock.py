"""The write lock between memdir processes: fair under contention, bounded, never kept by a writer that gave up."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vault.errors import LockTimeout
from vault.lock import LOCK_NAME, WriteLock

# Another memdir process that holds the write lock ~2 ms at a time and re-takes it at once, until its
# stdin closes: a poller that sleeps between tries almost never finds it free (it starved for seconds,
# measured), and a plain blocked flock lost the race on each release too (4 runs in 5 on one VM).
HOG = r"""
import select, sys, time
from pathlib import Path
from vault.lock import WriteLock
lock = WriteLock(Path(sys.argv[1]), timeout=60.0)
first = True
while first or not select.select([sys.stdin], [], [], 0)[0]:
    with lock.held():
        if first:
            print("holding", flush=True)
            first = False
        held = time.perf_counter()
        while time.perf_counter() - held < 0.002:
            pass
"""


def _lock_path(root: Path) -> Path:
    path = root / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_a_writer_gets_the_lock_from_a_process_that_keeps_re_taking_it(tmp_path: Path):
    hog = subprocess.Popen([sys.executable, "-c", HOG, str(tmp_path)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert hog.stdout.readline() == "holding\n"  # type: ignore[union-attr]
        lock = WriteLock(tmp_path, timeout=2.0)  # a waiter in line gets it after one ~2 ms hold
        for _ in range(20):
            with lock.held():
                pass
    finally:
        hog.stdin.close()  # type: ignore[union-attr]
        hog.wait(timeout=60)
        hog.stdout.close()  # type: ignore[union-attr]


def test_a_writer_that_gives_up_leaves_the_lock_free_for_the_next(tmp_path: Path):
    fd = os.open(_lock_path(tmp_path), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(LockTimeout), WriteLock(tmp_path, timeout=0.2).held():
            pass
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    with WriteLock(tmp_path, timeout=10.0).held():  # the abandoned wait got the lock and let it go at once
        pass


def test_a_writer_stuck_at_the_gate_times_out_and_leaves_both_files_free(tmp_path: Path):
    from vault.lock import GATE_NAME

    gate = tmp_path / GATE_NAME
    gate.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(gate, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(LockTimeout, match="queued"), WriteLock(tmp_path, timeout=0.2).held():
            pass
        probe = os.open(_lock_path(tmp_path), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the write lock itself was never taken
        os.close(probe)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    with WriteLock(tmp_path, timeout=10.0).held():  # the abandoned wait at the gate let it go
        pass


def test_the_lock_is_re_entrant_in_a_thread_and_released_when_the_outermost_hold_ends(tmp_path: Path):
    lock = WriteLock(tmp_path, timeout=1.0)
    with lock.held(), lock.held():
        probe = os.open(_lock_path(tmp_path), os.O_RDWR | os.O_CREAT, 0o600)
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(probe)
