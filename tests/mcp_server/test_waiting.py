"""mcp_server.waiting: the one bounded poll that waits on other processes (a port bound, a lock let go, an exit)."""

from __future__ import annotations

import subprocess
import sys
import time

from mcp_server import client
from mcp_server.waiting import attempts, wait_until


def test_attempts_tries_at_once_then_with_growing_pauses_and_stops_after_the_deadline():
    tries = []
    begun = time.monotonic()
    for _ in attempts(0.6, first=0.05, longest=0.2, grow=2.0):
        tries.append(time.monotonic() - begun)
    pauses = [b - a for a, b in zip(tries, tries[1:])]
    assert tries[0] < 0.05  # the first try does not wait
    assert tries[-1] >= 0.6  # one try at the deadline, as a loop that checks it after each try
    assert all(p >= 0.045 for p in pauses[:-1]) and max(pauses) < 0.2 + 0.15  # grown, capped at `longest` (slack for
    # load); the last pause may be cut short at the deadline
    assert len(tries) <= 1 + 6  # 0.05 + 0.1 + 0.2 + 0.2 + 0.2 passes 0.6: never a busy loop


def test_an_attempt_loop_left_early_is_not_continued():
    assert sum(1 for _ in zip(range(3), attempts(60))) == 3  # the caller's break or return ends it; no thread, no timer


def test_an_attempt_loop_ends_at_its_next_pause_once_its_event_is_set():
    import threading

    stop = threading.Event()
    tries = 0
    for _ in attempts(600, first=600, longest=600, until=stop):  # one whole pause would outlast the test's timeout
        tries += 1
        stop.set()  # the server exiting, say: the pause is not waited out
    assert tries == 1


def test_wait_until_answers_as_soon_as_another_process_exits_and_false_when_it_outlives_the_bound():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert wait_until(lambda: not client.process_alive(child.pid), 0.3) is False
        child.stdin.close()
        child.wait(timeout=30)  # reaped, so process_alive sees it gone
        assert wait_until(lambda: not client.process_alive(child.pid), 30) is True
    finally:
        child.kill()
        child.wait(timeout=30)
