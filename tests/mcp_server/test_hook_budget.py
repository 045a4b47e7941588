"""A hook holding a prompt for the server it started (an event it could not spool) keeps to its 3 s budget, counted
from its process's start: the wait ends at its deadline (not one pause after), the request is given what is left
(not a floor of 0.2 s), and that is the whole request's bound (not each read's). Arithmetic on a clock the test
moves; what the budget costs in time is measured in bench/hook_unspooled.py."""

from __future__ import annotations

import contextlib
import socket
import threading
import types

import pytest

from mcp_server import client, waiting
from mcp_server.clients import hooks

BOUND = 30.0


class Clock:
    """time's monotonic and sleep, where a sleep moves the clock and returns at once."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    moved = Clock()
    for module in (waiting, hooks):
        monkeypatch.setattr(module, "time", types.SimpleNamespace(monotonic=moved.monotonic, sleep=moved.sleep))
    return moved


def test_the_last_try_of_a_bounded_wait_comes_at_its_deadline_not_a_pause_after(clock: Clock):
    begun = clock.now
    tries = [round(clock.now - begun, 6) for _ in waiting.attempts(1.0, first=0.3, longest=0.3)]
    assert tries == [0.0, 0.3, 0.6, 0.9, 1.0]  # the last pause is cut to the 0.1 s left


def test_a_server_that_listens_late_is_given_only_what_is_left_of_the_budget(clock: Clock,
                                                                            monkeypatch: pytest.MonkeyPatch):
    info = client.ServerInfo(1, 1, "token", 0.0)
    listens_at = clock.now + 2.95
    monkeypatch.setattr(client, "running", lambda: info if clock.now >= listens_at else None)
    begun = clock.now
    found, left = hooks.started_server(3.0)
    assert found is info
    assert (clock.now - begun) + left == pytest.approx(3.0)  # the wait and the request's bound add up to the budget
    assert left < 0.2


def test_a_server_that_listens_only_at_the_deadline_is_not_asked(clock: Clock, monkeypatch: pytest.MonkeyPatch):
    info = client.ServerInfo(1, 1, "token", 0.0)
    listens_at = clock.now + 3.0
    monkeypatch.setattr(client, "running", lambda: info if clock.now >= listens_at else None)
    assert hooks.started_server(3.0) == (None, 0.0)


def test_the_unspooled_wait_is_counted_from_the_hook_process_start(monkeypatch: pytest.MonkeyPatch):
    asked: list[float] = []
    monkeypatch.setattr(client, "process_age", lambda: 0.4)
    monkeypatch.setattr(hooks, "started_server", lambda within, start=None, inbox=None: asked.append(within) or (None, 0.0))
    monkeypatch.setattr(client, "running", lambda: None)
    monkeypatch.setattr(client, "start_detached", lambda root: None)
    monkeypatch.setattr(hooks, "spool", lambda *args: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    monkeypatch.setattr(hooks, "find_vault", lambda explicit, cwd: "/nowhere")
    monkeypatch.setattr(hooks.sys, "stdin", types.SimpleNamespace(buffer=types.SimpleNamespace(
        read=lambda size: b'{"session_id": "s1", "prompt": "hi"}')))
    assert hooks.main(["prompt"]) == 0
    assert asked == [pytest.approx(hooks.UNSPOOLED_START_SECONDS - 0.4)]


def test_this_process_age_is_read_from_its_start():
    assert 0.0 < client.process_age() < 24 * 3600


def test_a_request_bound_holds_for_the_whole_answer_not_for_each_read(monkeypatch: pytest.MonkeyPatch):
    """A server that sends its answer in pieces: the second piece comes after the bound has passed, and the request
    gives up instead of waiting a whole timeout again for it."""
    clock = Clock()
    monkeypatch.setattr(client, "time", types.SimpleNamespace(monotonic=clock.monotonic, time=lambda: 0.0))
    given_up = threading.Event()
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()

        def answer_in_two_pieces() -> None:
            connection, _ = listening.accept()
            with connection:
                connection.recv(65536)
                clock.now += 100.0  # the bound passes while the first piece is on its way
                connection.sendall(b"HTTP/1.1 200 OK\r\n")
                given_up.wait(10.0)  # a client that waits a whole timeout again for each read gets the rest here
                with contextlib.suppress(OSError):  # the client gave up and closed: the reset is the expected end
                    connection.sendall(b"Content-Length: 2\r\n\r\n{}")

        server = threading.Thread(target=answer_in_two_pieces)
        server.start()
        try:
            with pytest.raises(client.Unavailable, match="did not answer"):
                client.request(client.ServerInfo(1, listening.getsockname()[1], "token", 0.0), "GET", "/api/health",
                               timeout=20.0)
        finally:
            given_up.set()
            server.join(BOUND)
