"""A hook whose event could not be spooled (a full disk) and whose server is exiting: the event has no other copy,
so the hook starts the next server (once the exiting one has let go of its lock) and hands it the event, within its
unspooled budget. The server's side of the exit ("exiting; ask again", the address forgotten at once, the process
lock held until it has gone) is played by fakes on a clock the test moves: no sleep, no real exit to race."""

from __future__ import annotations

import io
import json
import time
import types
from pathlib import Path

import pytest

from mcp_server import client, waiting
from mcp_server.clients import hooks

OLD, NEW = client.ServerInfo(101, 1, "old", 0.0), client.ServerInfo(102, 2, "new", 0.0)


class ExitingServer:
    """The exiting server and its successor, as a hook sees them."""

    def __init__(self, old_answer: Exception, lock_released_after: float = 0.8, listens_after: float = 0.6) -> None:
        self.now = 1000.0
        self.old_answer = old_answer
        self.address: client.ServerInfo | None = OLD
        self.released_at = self.now + lock_released_after
        self.listens_after = listens_after
        self.spawned_at: float | None = None
        self.delivered: list[tuple[client.ServerInfo, str, dict]] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def running(self) -> client.ServerInfo | None:
        if self.address is None and self.spawned_at is not None and self.now >= self.spawned_at + self.listens_after:
            self.address = NEW
        return self.address

    def start_detached(self, root: str) -> int | None:
        if self.spawned_at is None and self.address is None and self.now >= self.released_at:
            self.spawned_at = self.now  # the old server has let go of its lock: the next one starts
            return NEW.pid
        return None

    def request(self, info: client.ServerInfo, method: str, path: str, body: dict, timeout: float, vault: str) -> dict:
        if info is OLD:
            self.address = None  # an exiting server forgets its address at once
            raise self.old_answer
        self.delivered.append((info, path, body))
        return {}


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    def spool(*args: object) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(hooks, "spool", spool)
    monkeypatch.setattr(hooks, "find_vault", lambda explicit, cwd: str(tmp_path))
    monkeypatch.setattr(client, "process_age", lambda: 0.05)

    def run(server: ExitingServer, event: str, payload: dict) -> int:
        # The clock the hook waits by is the fake's; when an event was made is still read off the real one.
        fake_time = types.SimpleNamespace(monotonic=server.monotonic, sleep=server.sleep, time_ns=time.time_ns)
        monkeypatch.setattr(waiting, "time", fake_time)
        monkeypatch.setattr(hooks, "time", fake_time)
        for name in ("running", "start_detached", "request"):
            monkeypatch.setattr(client, name, getattr(server, name))
        monkeypatch.setattr(hooks.sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(json.dumps(payload).encode())))
        return hooks.main([event])

    return run


STOP = {"session_id": "s1", "hook_event_name": "Stop", "last_assistant_message": "Use the reporting replica."}


@pytest.mark.parametrize("answer", [
    client.RemoteError("Unavailable", "the memdir server is exiting; ask again", 503),
    client.Refused("the memdir server on port 1 did not answer: [Errno 111] Connection refused"),
], ids=["said-exiting", "already-gone"])
def test_an_unspooled_event_met_by_an_exiting_server_is_handed_to_the_next_one(full_disk, answer: Exception):
    server = ExitingServer(answer)
    begun = server.now
    assert full_disk(server, "stop", STOP) == 0
    [(info, path, body)] = server.delivered
    assert info is NEW and path == "/api/hook/stop" and body["last_assistant_message"] == "Use the reporting replica."
    assert server.now - begun <= hooks.UNSPOOLED_START_SECONDS - 0.05  # within the budget, from the process's start


def test_a_server_that_went_quiet_is_not_asked_again_as_it_may_have_taken_the_event(full_disk):
    server = ExitingServer(client.NoAnswer("the memdir server on port 1 did not answer: timed out"))
    assert full_disk(server, "stop", STOP) == 0
    assert server.delivered == [] and server.spawned_at is None


def test_an_unspooled_event_whose_next_server_is_not_up_in_time_is_said_lost(full_disk, capsys):
    server = ExitingServer(client.RemoteError("Unavailable", "the memdir server is exiting; ask again", 503),
                           lock_released_after=2.5, listens_after=1.0)
    assert full_disk(server, "stop", STOP) == 0
    assert server.delivered == [] and "could not be spooled, and is lost" in capsys.readouterr().err


def test_an_unspooled_event_that_finds_the_address_already_gone_waits_for_the_next_server_not_for_nothing(full_disk):
    """The exiting server forgot its address but holds its lock: a start then starts nothing, and a hook that only
    waited for an address waited out its budget for a server nobody started."""
    server = ExitingServer(AssertionError("the exiting server is not asked"))
    server.address = None
    assert full_disk(server, "stop", STOP) == 0
    assert [info for info, _, _ in server.delivered] == [NEW]
