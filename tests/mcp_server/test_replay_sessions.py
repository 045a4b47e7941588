"""The hook events nine sessions spooled while no server served them are replayed session by session, side by side:
their captures share index syncs instead of a Whoosh commit each, and each session's turns keep their order."""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import pytest
from indexer.embed import HashingEmbedder
from mcp_server.clients.hooks import spool
from mcp_server.clients.hooks_server import PUT_BACK_CAP_SECONDS, PUT_BACK_FIRST_SECONDS, HookHandler
from mcp_server.service.app import App
from mcp_server.service import turns
from mcp_server.service.memory_service import MemoryService
from tests.conftest import Clock
from vault import Vault

BOUND = 30.0  # seconds; a bound on a wait, never reached when the code under test works


def spooled_turn(root: Path, session: str, prompt: str, answer: str) -> None:
    """What a prompt hook and a Stop hook leave in the spool when no server answers."""
    spool(root, "prompt", {"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    spool(root, "stop", {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": False,
                         "last_assistant_message": answer})


def exchanges(root: Path) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for memory in Vault(root).scan().memories:
        if memory.collection == "working" and memory.type == "history":
            found.setdefault(memory.frontmatter["session"], []).append({"id": memory.id, "title": memory.title,
                                                                   "previous": memory.frontmatter.get("previous")})
    return found


def test_stops_spooled_by_three_sessions_are_indexed_in_one_sync(hashing_example: Path):
    for n in range(3):
        spooled_turn(hashing_example, f"s-{n}", f"are the retries of service {n} safe",
                     f"Service {n}: yes, the task is idempotent now.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        group = app.curator._later  # the captures' shared sync (indexer/group_sync.py)
        group.searches_first = BOUND
        replayed: list[int] = []
        with app.index.searches.running():  # a prompt's search, which the captures' sync lets finish first
            replay = threading.Thread(target=lambda: replayed.append(handler.replay(handler.spool)))
            replay.start()
            together = group.wait_queued(3, timeout=10)  # one by one, the second capture waits behind the first
        replay.join(BOUND)
        assert together and replayed == [6] and group.syncs == 1
        assert sorted(exchanges(hashing_example)) == ["s-0", "s-1", "s-2"]
    finally:
        app.close()


def test_a_sessions_spooled_turns_are_replayed_in_their_order_each_linked_to_the_one_before(hashing_example: Path):
    for turn in range(3):
        spooled_turn(hashing_example, "s-a", f"turn {turn}: how do we make celery retries safe",
                     f"Turn {turn}: make the task idempotent first.")
        spooled_turn(hashing_example, "s-b", f"turn {turn}: which pgbouncer pool mode do we use",
                     f"Turn {turn}: transaction mode.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        assert handler.replay(handler.spool) == 12
    finally:
        app.close()
    for session in exchanges(hashing_example).values():
        ordered = sorted(session, key=lambda e: e["title"])  # "Exchange: turn 0: ...", "turn 1", "turn 2"
        assert [e["previous"] for e in ordered] == [None] + [e["id"] for e in ordered[:-1]]


def spooled_at(root: Path, moment: datetime, session: str, prompt: str, answer: str, pid: int) -> None:
    """A turn spooled at `moment` (the spool file's name says when: hooks.spool)."""
    folder = root / ".memdir" / "spool"
    names = [spool(root, "prompt", {"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                                    "client_pids": [pid]}),
             spool(root, "stop", {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": False,
                                  "last_assistant_message": answer})]
    for step, name in enumerate(names):
        assert name is not None
        (folder / name).rename(folder / f"{int(moment.timestamp()) * 10**9 + step}-{name.split('-', 1)[1]}")


def test_replayed_sessions_keep_their_own_times_whichever_replay_ends_last(hashing_example: Path):
    """Sessions are replayed side by side and end in no fixed order: stamped when their replay ended, a session spooled
    yesterday morning was the client's latest over one spooled at noon (its MCP tools then scored for the wrong
    session), and both exchanges were written today (review of session 9)."""
    morning, noon = datetime(2026, 11, 26, 9, tzinfo=timezone.utc), datetime(2026, 11, 26, 12, tzinfo=timezone.utc)
    spooled_at(hashing_example, morning, "s-morning", "how do we make celery retries safe", "Idempotent tasks.", 4242)
    spooled_at(hashing_example, noon, "s-noon", "which pgbouncer pool mode do we use", "Transaction mode.", 4242)
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        real, noon_done = handler._replay_one, threading.Event()

        def replay_one(path: Path, text: str | None) -> int:
            if "s-morning" in (text or "") and path.name.endswith("-stop.json"):
                noon_done.wait(BOUND)  # the morning's replay ends last
            applied = real(path, text)
            if "s-noon" in (text or "") and path.name.endswith("-stop.json"):
                noon_done.set()
            return applied

        handler._replay_one = replay_one  # type: ignore[method-assign]
        assert handler.replay(handler.spool) == 4
        assert service.sessions.latest_of_client(4242, excluding="mcp-connection") == "s-noon"
        assert service.sessions.load("s-morning").updated < service.sessions.load("s-noon").updated
        captured = {m.frontmatter["session"]: m.created_at for m in Vault(hashing_example).scan().memories
                    if m.collection == "working" and m.type == "history"}
        assert captured == {"s-morning": morning, "s-noon": noon}
        logged = {e["session"]: e["at"] for e in turns.read(hashing_example) if e["kind"] == "exchange"}
        assert logged == {"s-morning": morning.timestamp(), "s-noon": noon.timestamp()}  # the web view's Turns page
    finally:
        app.close()


def test_a_drain_beside_a_running_replay_does_not_apply_a_sessions_stop_before_its_prompt(hashing_example: Path):
    """The timer's drain (and a hook's look for stale events) may find the events a replay is applying: the prompt it
    has taken is not there any more, so the drain took the Stop behind it and captured the exchange before its prompt
    had opened the turn ("Exchange: (no prompt)"). One replay at a time applies the spool; a drain finding one under way
    leaves the rest to it, or to the next drain."""
    spooled_at(hashing_example, datetime(2026, 11, 26, 9, tzinfo=timezone.utc), "s-a",
               "how do we make celery retries safe", "Idempotent tasks first.", 4242)
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        real, prompt_taken, go_on = service.sessions.update, threading.Event(), threading.Event()

        def update(*args, **kwargs):  # type: ignore[no-untyped-def]
            if threading.current_thread().name == "replay" and not prompt_taken.is_set():
                prompt_taken.set()  # the replay took the prompt's file and is about to apply it
                go_on.wait(BOUND)
            return real(*args, **kwargs)

        service.sessions.update = update  # type: ignore[method-assign]
        replay = threading.Thread(target=handler.replay, args=(handler.spool,), name="replay")
        replay.start()
        assert prompt_taken.wait(BOUND)
        handler.drain()  # the server's 2 s timer
        go_on.set()
        replay.join(BOUND)
        assert [e["title"] for e in exchanges(hashing_example)["s-a"]] == ["Exchange: how do we make celery retries safe"]
    finally:
        app.close()


def test_an_event_a_replay_cannot_apply_for_a_disk_error_is_put_back_and_applied_by_the_next_replay(
        hashing_example: Path, caplog):
    """Taken and left under its hidden name, it waited for the next server start, and the error ended the replay
    (review of session 10). The session's later event waits behind it, so the turn is still applied in its order."""
    spooled_turn(hashing_example, "s-a", "how do we make celery retries safe", "Make the task idempotent first.")
    folder = hashing_example / ".memdir" / "spool"
    spooled = sorted(p.name for p in folder.iterdir())
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        real, failed = service.sessions.update, []

        def update(*args, **kwargs):
            if len(failed) < 2:
                failed.append(1)
                raise OSError(28, "No space left on device")
            return real(*args, **kwargs)

        service.sessions.update = update  # type: ignore[method-assign]
        clock = handler.put_back.clock = Clock()
        with caplog.at_level(logging.WARNING, logger="memdir.hooks"):
            assert handler.replay(handler.spool) == 0
        assert sorted(p.name for p in folder.iterdir()) == spooled  # nothing hidden, nothing lost
        assert f"{spooled[0]} left in the spool for the next replay" in caplog.text and "No space left" in caplog.text
        caplog.clear()
        clock.now += PUT_BACK_FIRST_SECONDS
        with caplog.at_level(logging.WARNING, logger="memdir.hooks"):  # the disk still full: said once, not every drain
            assert handler.replay(handler.spool, spooled_before=time.time_ns()) == 0
        assert caplog.text == "" and sorted(p.name for p in folder.iterdir()) == spooled
        clock.now += 2 * PUT_BACK_FIRST_SECONDS
        assert handler.replay(handler.spool, spooled_before=time.time_ns()) == 2  # a drain: no start in between
        assert list(folder.iterdir()) == [] and list(exchanges(hashing_example)) == ["s-a"]
    finally:
        app.close()


def working_exchanges(root: Path) -> list[tuple[str, object]]:
    return [(m.id, m.frontmatter.get("restated")) for m in Vault(root).scan().memories
            if m.collection == "working" and m.type == "history"]


def _failing_once(fails: list[str], name: str, real):  # type: ignore[no-untyped-def]
    """The session's save, except that its first call with a completed session raises ENOSPC (noted in `fails`)."""
    def call(session, *args, **kwargs):  # type: ignore[no-untyped-def]
        if session.completed and name not in fails:
            fails.append(name)
            raise OSError(28, "No space left on device")
        return real(session, *args, **kwargs)
    return call


def _settling_fails_once(service: MemoryService, failing: str, monkeypatch) -> list[str]:
    """After the exchange is written, the first try of `failing` (the session's save, or the turn log) raises ENOSPC
    (noted in the list returned)."""
    fails: list[str] = []
    if failing == "the session's save":
        monkeypatch.setattr(service.sessions, "save", _failing_once(fails, failing, service.sessions.save))
        return fails
    real_record = turns.record

    def record(root, kind, *args, **kwargs):  # type: ignore[no-untyped-def]
        if kind == "exchange" and not fails:
            fails.append(failing)
            raise OSError(28, "No space left on device")
        return real_record(root, kind, *args, **kwargs)

    monkeypatch.setattr(turns, "record", record)
    return fails


@pytest.mark.parametrize("failing", ["the session's save", "the turn log"])
def test_a_stop_put_back_after_its_exchange_was_written_does_not_capture_it_again(hashing_example: Path, monkeypatch,
                                                                                  failing: str):
    """The exchange's file is written before the turn log and the session's save: a disk error in those put the Stop
    back, and each replay captured it again, the exchange restated once a drain (review of session 11)."""
    spooled_turn(hashing_example, "s-a", "how do we make celery retries safe", "Make the task idempotent first.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        fails = _settling_fails_once(service, failing, monkeypatch)
        assert handler.replay(handler.spool) == 1 and fails == [failing]  # the prompt; the Stop is put back
        written = working_exchanges(hashing_example)
        assert len(written) == 1
        assert handler.replay(handler.spool) == 1  # a start's replay: every file is due
        assert working_exchanges(hashing_example) == written  # not restated
        logged = [t["stored"] for t in turns.read(hashing_example) if t["kind"] == "exchange"]
        assert logged == [written[0][0]]
    finally:
        app.close()


@pytest.mark.parametrize("failing", ["the session's save", "the turn log"])
def test_a_stop_put_back_after_its_exchange_was_written_is_not_restated_by_the_next_servers_replay(
        hashing_example: Path, monkeypatch, failing: str):
    """The record that a put-back Stop was captured lived in the server's memory: after a restart, the replay added 1
    to the exchange's `restated` count (closing note of session 11). The exchange's frontmatter tells it instead."""
    spooled_turn(hashing_example, "s-a", "how do we make celery retries safe", "Make the task idempotent first.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        fails = _settling_fails_once(service, failing, monkeypatch)
        assert HookHandler(service).replay(app.root / ".memdir" / "spool") == 1 and fails == [failing]
    finally:
        app.close()
    monkeypatch.undo()
    written = working_exchanges(hashing_example)
    assert len(written) == 1
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)  # the next server
    try:
        service = MemoryService(app)
        assert HookHandler(service).replay(app.root / ".memdir" / "spool") == 1
        assert working_exchanges(hashing_example) == written  # not restated, and not written twice
        assert service.sessions.load("s-a").last_exchange == written[0][0]
    finally:
        app.close()


def test_a_session_that_repeats_an_exchange_it_already_had_restates_it(hashing_example: Path):
    """The guard of the rule above: the same prompt and answer twice in one session is a restatement, counted."""
    for _ in range(2):
        spooled_turn(hashing_example, "s-a", "are the celery retries safe now", "Yes: the task is idempotent.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        assert HookHandler(MemoryService(app)).replay(app.root / ".memdir" / "spool") == 4
        assert [restated for _, restated in working_exchanges(hashing_example)] == [1]
    finally:
        app.close()


def test_a_stop_whose_exchange_was_written_but_not_indexed_for_a_full_disk_is_one_memory(
        hashing_example: Path, monkeypatch):
    """The exchange's file fit, the keyword index's segment did not, and the session's save failed too: the replay
    that applied the Stop again did not see the unindexed file and wrote a second exchange (review of session 11)."""
    from indexer.curator import Curator
    from vault.errors import DiskFullError
    spooled_turn(hashing_example, "s-a", "how do we make celery retries safe", "Make the task idempotent first.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        real_indexed, fails = Curator._indexed, []

        def indexed(self, memory, paths, later=False):  # type: ignore[no-untyped-def]
            if later and not fails:
                fails.append("index")
                raise DiskFullError("no space left for the keyword index")
            return real_indexed(self, memory, paths, later)

        monkeypatch.setattr(Curator, "_indexed", indexed)
        monkeypatch.setattr(service.sessions, "save", _failing_once(fails, "save", service.sessions.save))
        handler.replay(handler.spool)
        assert handler.replay(handler.spool) == 1 and fails == ["index", "save"]
        assert len(working_exchanges(hashing_example)) == 1
    finally:
        app.close()


def test_a_stop_put_back_for_a_full_disk_waits_longer_each_time_and_is_said_once(
        hashing_example: Path, monkeypatch, caplog):
    """The drain (every 2 s) tried a Stop on a full disk again each time, and each try logged "exchange not stored:
    the disk is full", which was not so: it is put back and captured once there is room (review of session 11)."""
    from vault import atomic
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        clock = handler.put_back.clock = Clock()
        handler.prompt({"session_id": "s-a", "hook_event_name": "UserPromptSubmit",
                        "prompt": "how do we make celery retries safe"})
        service.sessions.flush()  # its session is saved after its answer: before the full disk below
        spool(hashing_example, "stop", {"session_id": "s-a", "hook_event_name": "Stop", "stop_hook_active": False,
                                        "last_assistant_message": "Make the task idempotent first."})
        real_write, tries = atomic._write_temp, []

        def full(*args, **kwargs):  # type: ignore[no-untyped-def]
            tries.append(clock.now)
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(atomic, "_write_temp", full)  # no new file anywhere: the vault's or the session's
        with caplog.at_level(logging.WARNING, logger="memdir.hooks"):
            for _ in range(40):  # the drain every 2 s: 80 s
                handler.replay(handler.spool, spooled_before=time.time_ns())
                clock.now += 2.0
        assert len(caplog.records) == 1 and "left in the spool for the next replay" in caplog.text
        assert sorted(set(tries)) == [1000.0, 1004.0, 1012.0, 1028.0, 1060.0]  # waits of 4, 8, 16, 32 s
        monkeypatch.setattr(atomic, "_write_temp", real_write)  # room again
        clock.now += 64.0
        assert handler.replay(handler.spool, spooled_before=time.time_ns()) == 1
        assert list(exchanges(hashing_example)) == ["s-a"]
    finally:
        app.close()


def _live(root: Path, handler: HookHandler, event: str, payload: dict) -> dict:
    """What the hook process does: spool the event, then hand it to the server under its spool name."""
    name = spool(root, event, payload)
    return (handler.prompt if event == "prompt" else handler.stop)({**payload, "spool": name})


def test_a_sessions_next_live_turn_waits_behind_its_stop_put_back_for_a_full_disk(hashing_example: Path, monkeypatch):
    """The put-back Stop waits its back-off while the disk has room again and the user goes on: applied after the
    next live turn, it captured the new prompt with the old answer, and the old turn was never stored (review of
    session 11). Now the live event applies it first, or waits behind it in the spool."""
    from vault import atomic
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        handler.put_back.clock = Clock()
        _turn_one_with_its_stop_left_in_the_spool(hashing_example, handler)
        real_write = atomic._write_temp

        def full(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(atomic, "_write_temp", full)
        handler.replay(handler.spool, spooled_before=time.time_ns())  # put back; its wait has begun
        assert list(handler.spool.glob("*stop.json"))  # put back: its wait has begun
        still_full = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})
        assert still_full["replayed"]  # the disk still full: in the spool behind the Stop, in order
        monkeypatch.setattr(atomic, "_write_temp", real_write)  # room again, the Stop's wait not over
        _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn three: pool size"})
        _live(hashing_example, handler, "stop", {"session_id": "s-a", "stop_hook_active": False,
                                                 "last_assistant_message": "ANSWER THREE: twenty."})
        handler.replay(handler.spool)
        got = sorted(m.body for m in Vault(hashing_example).scan().memories
                     if m.collection == "working" and m.type == "history")
        assert len(got) == 2
        assert "turn one" in got[0] and "ANSWER ONE" in got[0]
        assert "turn three" in got[1] and "ANSWER THREE" in got[1]  # turn two's prompt, unanswered, came before it
        assert MemoryService(app).sessions.load("s-a").prompt.startswith("turn three")
        assert not list(handler.spool.glob("*.json"))
    finally:
        app.close()


def test_a_stop_whose_exchange_was_written_but_not_indexed_for_another_os_error_is_one_memory(
        hashing_example: Path, monkeypatch):
    """Out of descriptors (or an I/O error) after the exchange's file was written: the Stop was put back with no
    record of its capture, and the next replay wrote a second exchange (review of session 11)."""
    import errno
    from indexer.curator import Curator
    spooled_turn(hashing_example, "s-a", "how do we make celery retries safe", "Make the task idempotent first.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        real_indexed, fails = Curator._indexed, []

        def indexed(self, memory, paths, later=False):  # type: ignore[no-untyped-def]
            if later and not fails:
                fails.append("index")
                raise OSError(errno.EMFILE, "Too many open files")
            return real_indexed(self, memory, paths, later)

        monkeypatch.setattr(Curator, "_indexed", indexed)
        handler.replay(handler.spool)
        handler.replay(handler.spool)
        assert fails == ["index"] and len(working_exchanges(hashing_example)) == 1
        assert not list(handler.spool.glob("*.json"))
    finally:
        app.close()


def _turn_one_with_its_stop_left_in_the_spool(root: Path, handler: HookHandler) -> None:
    """Turn one's prompt applied live; its Stop spooled by a hook that never asked (killed, or not yet)."""
    _live(root, handler, "prompt", {"session_id": "s-a", "prompt": "turn one: celery retries"})
    handler.service.sessions.flush()  # its session is saved after its answer: before the tests' full disk comes
    spool(root, "stop", {"session_id": "s-a", "stop_hook_active": False,
                         "last_assistant_message": "ANSWER ONE: make the task idempotent."})


def _only_turn_one_captured(root: Path) -> bool:
    got = [m.body for m in Vault(root).scan().memories if m.collection == "working" and m.type == "history"]
    return len(got) == 1 and "turn one" in got[0] and "ANSWER ONE" in got[0]


def test_a_live_prompt_applies_its_sessions_orphaned_stop_first(hashing_example: Path):
    """The hook of a Stop was killed before it asked (`claude -p` exits), and the next prompt came within the
    drain's 2 s: the prompt went ahead, and the Stop then captured the new prompt with the old answer (review of
    session 11)."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _turn_one_with_its_stop_left_in_the_spool(hashing_example, handler)
        _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})
        assert _only_turn_one_captured(hashing_example)
        assert not list(handler.spool.glob("*.json"))
    finally:
        app.close()


def test_a_live_prompt_does_not_wait_for_its_sessions_slow_stop_to_be_applied_and_its_turn_opens_after_it(
        hashing_example: Path):
    """A prompt whose session's Stop is still in the spool applied that Stop first, on its own request: a capture and
    an index sync, 0.4-3.3 s under nine sessions from a cold start, past the hook's 0.9 s (bench/results/s23-cold23.md).
    Now the Stop is applied on the catch-up thread while the prompt searches: the prompt is answered, with its context,
    while the Stop's capture is still under way, and its turn is opened after it."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    gate = threading.Event()
    try:
        handler = HookHandler(MemoryService(app))
        _turn_one_with_its_stop_left_in_the_spool(hashing_example, handler)
        capturing = _captures_held(handler.service, gate)
        answer = _turn_two_answered_while_held(hashing_example, handler, capturing, gate)
        gate.set()
        _caught_up(handler)  # the Stop, then the prompt's turn behind it
        _turn_two_opened_after_turn_one(hashing_example, handler, answer)
    finally:
        gate.set()
        app.close()


def test_a_prompt_does_not_wait_for_its_sessions_stop_still_being_captured_and_its_turn_opens_after_it(
        hashing_example: Path):
    """The session's Stop is being applied live, its capture waiting for the index (a keyword merge: 3-5 s under nine
    sessions from a cold start), and its hook gave up after 0.9 s: the next prompt waited for the session behind it,
    past its own hook's 0.9 s (bench/results/s23-cold23.md). Now it is answered ahead, with its context, and its turn
    is opened once the Stop is applied."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    gate = threading.Event()
    try:
        handler = HookHandler(MemoryService(app))
        _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn one: celery retries"})
        handler.service.sessions.flush()
        capturing = _captures_held(handler.service, gate)
        stopping = threading.Thread(target=lambda: _live(hashing_example, handler, "stop", {
            "session_id": "s-a", "stop_hook_active": False, "last_assistant_message": "ANSWER ONE: idempotent."}))
        stopping.start()
        assert capturing.wait(10)
        answer = _turn_two_answered_while_held(hashing_example, handler, capturing, gate)
        gate.set()
        stopping.join(30)
        _caught_up(handler)  # the prompt's turn, behind the Stop
        _turn_two_opened_after_turn_one(hashing_example, handler, answer)
    finally:
        gate.set()
        app.close()


def _captures_held(service: MemoryService, gate: threading.Event) -> threading.Event:
    """Every capture waits for `gate` (the index busy under load) once it begins; the returned event says it began."""
    capturing, real_capture = threading.Event(), service.capture_exchange

    def held(*args, **kwargs):  # type: ignore[no-untyped-def]
        capturing.set()
        assert gate.wait(30)  # until the test lets it go
        return real_capture(*args, **kwargs)

    service.capture_exchange = held  # type: ignore[method-assign]
    return capturing


def _turn_two_answered_while_held(root: Path, handler: HookHandler, capturing: threading.Event,
                                  gate: threading.Event) -> dict:
    """Turn two's prompt, sent while turn one's Stop is held in its capture: answered, with its context, meanwhile."""
    answers: list[dict] = []
    asking = threading.Thread(target=lambda: answers.append(_live(
        root, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})))
    asking.start()
    asking.join(10)
    assert capturing.is_set() and not gate.is_set()
    assert answers, "the prompt waited for its session's Stop to be captured"
    [answer] = answers
    assert answer["replayed"] and "pgbouncer" in answer["additionalContext"].lower()
    return answer


def _turn_two_opened_after_turn_one(root: Path, handler: HookHandler, answer: dict) -> None:
    """Turn one captured with its own answer, turn two opened after it with what its answer showed, nothing left."""
    assert _only_turn_one_captured(root)
    assert not list(handler.spool.glob("*.json"))
    state = MemoryService(handler.service.app).sessions.load("s-a")
    assert state.turn == 2 and state.prompt.startswith("turn two") and set(answer["shown"]) <= set(state.shown)


def test_a_live_prompt_behind_a_replay_under_way_waits_in_the_spool_keeps_its_order_and_still_gets_its_context(
        hashing_example: Path):
    """A replay holds the spool (a vault opening drains every session's events): the prompt does not wait for all of
    it, past the hook's patience; it goes back to the spool behind its session's Stop, and the replay applies both.
    Its context is found now all the same (before, such a prompt got none: 36 of 68 prompts after a cold start's
    first 5 s under nine sessions), and what it showed is recorded when the replay opens its turn."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _turn_one_with_its_stop_left_in_the_spool(hashing_example, handler)
        assert handler._replaying.acquire(timeout=5)  # a replay under way
        try:
            answer = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})
            assert answer["replayed"] and len(list(handler.spool.glob("*.json"))) == 2
            assert "pgbouncer" in answer["additionalContext"].lower() and answer["shown"]
            assert len(handler._ahead) == 1
        finally:
            handler._replaying.release()
        _caught_up(handler)  # the replay let go of the spool: the catch-up the prompt asked for applies both, in order
        assert handler.replay(handler.spool) == 0 and not list(handler.spool.glob("*.json"))
        assert _only_turn_one_captured(hashing_example)
        state = MemoryService(app).sessions.load("s-a")
        assert state.prompt.startswith("turn two") and state.turn == 2
        assert state.turn_shown == [i for i in answer["shown"] if i in state.turn_shown] and state.turn_shown
        assert set(answer["shown"]) <= set(state.shown)
        logged = [r for r in turns.read(hashing_example) if r.get("kind") == "prompt" and r.get("turn") == 2]
        assert [[s["id"] for s in r["shown"]] for r in logged] == [answer["shown"]]
        assert len(handler._ahead) == 0
    finally:
        app.close()


def test_a_memory_made_private_while_a_prompt_that_showed_it_waits_is_logged_without_its_title(
        hashing_example: Path, tmp_path: Path, monkeypatch):
    """A waiting prompt's context is found ahead and its turn logged when the replay opens it, seconds (a disk's
    back-off: minutes) later. A memory it showed that was made private meanwhile (the answer to that very prompt may
    do it: `update_memory` with privacy=private) had its title written to the project vault's turn log, which logs
    a private memory by id alone. Now whether it is private is read when the line is written."""
    from mcp_server.service import operations as ops
    monkeypatch.setenv("MEMDIR_USER_VAULT", str(tmp_path / "user-vault"))
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        _turn_one_with_its_stop_left_in_the_spool(hashing_example, handler)
        assert handler._replaying.acquire(timeout=5)  # a replay under way: the prompt waits behind the Stop
        try:
            answer = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})
            assert answer["replayed"] and answer["shown"]
            made_private = answer["shown"][0]
            title = service.find(made_private).title
            service.update(ops.Update(memory_id=made_private, content=None, fields={"privacy": "private"}))
        finally:
            handler._replaying.release()
        _caught_up(handler)
        assert not list(handler.spool.glob("*.json"))  # the catch-up the prompt asked for applied both
        [logged] = [r for r in turns.read(hashing_example) if r.get("kind") == "prompt" and r.get("turn") == 2]
        [entry] = [s for s in logged["shown"] if s["id"] == made_private]
        assert entry.get("private") is True and "title" not in entry
        assert title not in str(logged)  # (turn one's line named it: it was shared then)
    finally:
        app.close()


def test_a_live_prompt_whose_session_save_fails_is_opened_later_with_what_it_showed(hashing_example: Path,
                                                                                   monkeypatch):
    """A full disk failed the session's save after a live prompt found its context: the prompt got it (s19) and its
    event went back to the spool, but the replay that opened its turn later knew nothing of what it showed, so the
    session never marked those memories shown (no repeat pointers, no scoring request for them). Now the replay
    records them, and the turn log keeps the one line the live prompt wrote."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn one: celery retries"})
        _live(hashing_example, handler, "stop", {"session_id": "s-a", "stop_hook_active": False,
                                                 "last_assistant_message": "ANSWER ONE: make the task idempotent."})
        with _turn_two_not_saved(handler, monkeypatch):
            answer = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})
        assert "pgbouncer" in answer["additionalContext"].lower() and answer["shown"]
        assert len(list(handler.spool.glob("*prompt.json"))) == 1  # put back for a replay
        assert handler.replay(handler.spool) == 1
        state = MemoryService(app).sessions.load("s-a")
        assert state.turn == 2 and state.prompt.startswith("turn two")
        assert set(answer["shown"]) <= set(state.shown) and state.turn_shown
        logged = [r for r in turns.read(hashing_example) if r.get("kind") == "prompt" and r.get("turn") == 2]
        assert [[s["id"] for s in r["shown"]] for r in logged] == [answer["shown"]]
        assert not handler._ahead
    finally:
        app.close()


def test_a_waiting_prompt_put_back_after_its_turn_log_line_logs_its_turn_once(hashing_example: Path, monkeypatch):
    """A prompt that waited behind its session's Stop got its context ahead, and the replay that opens its turn writes
    what it showed to the turn log. The session's save can fail after that line is appended (a nearly full disk: an
    append fits where a new file does not), and the event is put back: every later try appended the line again, so
    the Turns page listed the turn once per try. Now it is logged once, as a put-back Stop's exchange is."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _stop_one_put_back(hashing_example, handler, monkeypatch)
        with _full_disk(monkeypatch):
            answer = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})
            _caught_up(handler)  # the catch-up it asked for meets the same full disk: the Stop stays put back
        assert answer["replayed"] and answer["shown"]  # waits behind the Stop, its context found now
        with _turn_two_not_saved(handler, monkeypatch):
            for _ in range(3):
                handler.replay(handler.spool)  # the Stop applied, the prompt put back after its turn log line
        assert handler.replay(handler.spool) == 1 and not list(handler.spool.glob("*.json"))
        logged = [r for r in turns.read(hashing_example) if r.get("kind") == "prompt" and r.get("turn") == 2]
        assert [[s["id"] for s in r["shown"]] for r in logged] == [answer["shown"]]
        state = MemoryService(app).sessions.load("s-a")
        assert state.turn == 2 and state.prompt.startswith("turn two") and set(answer["shown"]) <= set(state.shown)
    finally:
        app.close()


def _caught_up(handler: HookHandler) -> None:
    """Wait for the catch-ups prompts asked for (HookHandler._catch_up): one thread, so those asked before are done."""
    handler._catching.submit(lambda: None).result(timeout=30)


def _caught_up_or_closed(handler: HookHandler) -> None:
    """Wait for the catch-up thread of a closed handler to end (the one under way, if any)."""
    handler._catching.shutdown(wait=True)


@contextmanager
def _turn_two_not_saved(handler: HookHandler, monkeypatch, turn: int = 2) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """A session whose turn two (`turn`) is opened cannot be saved while inside (a nearly full disk: the turn log's
    append still fits); saved again after."""
    from vault.errors import DiskFullError
    sessions = type(handler.service.sessions)
    real_save = sessions.save

    def save(self, session, at=None):  # type: ignore[no-untyped-def]
        if session.turn == turn:
            raise DiskFullError("could not save the session: the disk is full")
        return real_save(self, session, at)

    monkeypatch.setattr(sessions, "save", save)
    try:
        yield
        handler.service.sessions.flush()  # a prompt's session is saved after its answer: still inside
    finally:
        monkeypatch.setattr(sessions, "save", real_save)


@contextmanager
def _full_disk(monkeypatch) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Every atomic write fails for a full disk while inside; room again after."""
    from vault import atomic
    real_write = atomic._write_temp

    def full(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "_write_temp", full)
    try:
        yield
    finally:
        monkeypatch.setattr(atomic, "_write_temp", real_write)


def _stop_one_put_back(root: Path, handler: HookHandler, monkeypatch) -> None:
    """Turn one's Stop put back by a replay for a full disk: its back-off has begun."""
    handler.put_back.clock = Clock()
    _turn_one_with_its_stop_left_in_the_spool(root, handler)
    with _full_disk(monkeypatch):
        handler.replay(handler.spool, spooled_before=time.time_ns())
    assert list(handler.spool.glob("*stop.json"))


def test_an_event_its_hook_could_not_spool_is_applied_after_its_sessions_put_back_stop(
        hashing_example: Path, monkeypatch):
    """The hook could not spool turn two's prompt (a full disk, gone a moment later): the server applied it at once,
    ahead of turn one's Stop still waiting its back-off, which then captured turn two's prompt with turn one's answer
    (closing note of session 11). Now the Stop is applied first."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _stop_one_put_back(hashing_example, handler, monkeypatch)
        answer = handler.prompt({"session_id": "s-a", "prompt": "turn two: pool mode"})  # no spool name
        assert "additionalContext" in answer  # applied now, its session's Stop first
        assert _only_turn_one_captured(hashing_example)
        assert not list(handler.spool.glob("*.json"))
    finally:
        app.close()


def test_an_unspooled_event_behind_a_stop_that_still_fails_waits_in_memory_and_keeps_its_order(
        hashing_example: Path, monkeypatch):
    """The disk still full, the unspooled prompt can wait neither in the spool nor behind a Stop applied now: the
    server holds it, and the replays apply it after the Stop. No turn is lost, none captured with the wrong answer."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _stop_one_put_back(hashing_example, handler, monkeypatch)
        with _full_disk(monkeypatch):
            assert handler.prompt({"session_id": "s-a", "prompt": "turn two: pool mode"})["replayed"]
            assert handler.stop({"session_id": "s-a", "stop_hook_active": False,
                                 "last_assistant_message": "ANSWER TWO: transaction mode."}) == \
                {"stored": None, "reason": "replayed"}  # behind the held prompt
            _caught_up(handler)  # the catch-ups the prompt asked for met the full disk too
        handler.put_back.clock.now += PUT_BACK_CAP_SECONDS
        assert handler.drain(spooled_before=time.time_ns()) == 3
        got = sorted(m.body for m in Vault(hashing_example).scan().memories
                     if m.collection == "working" and m.type == "history")
        assert len(got) == 2
        assert "turn one" in got[0] and "ANSWER ONE" in got[0]
        assert "turn two" in got[1] and "ANSWER TWO" in got[1]
        assert not list(handler.spool.glob("*.json")) and not handler._held
    finally:
        app.close()


def test_a_session_that_repeats_its_first_exchange_after_the_one_between_was_removed_restates_it(
        hashing_example: Path):
    """The rule above reads the exchange's `previous:`; when the session's last exchange is gone from the index (removed,
    or kept on the private side), none is written, and a repeat of the session's first exchange looked like that
    first exchange's own replay: not counted (review of session 12)."""
    spooled_turn(hashing_example, "s-a", "are the celery retries safe now", "Yes: the task is idempotent.")
    spooled_turn(hashing_example, "s-a", "and the beat schedule", "It runs every five minutes.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        assert handler.replay(handler.spool) == 4
        between = next(m for m in Vault(hashing_example).scan().memories
                       if m.collection == "working" and m.type == "history" and "beat schedule" in m.body)
        (hashing_example / between.path).unlink()
        app.curator.index.sync([between.path])
        spooled_turn(hashing_example, "s-a", "are the celery retries safe now", "Yes: the task is idempotent.")
        assert handler.replay(handler.spool) == 2
        assert [restated for _, restated in working_exchanges(hashing_example)] == [1]
    finally:
        app.close()


def _history(root: Path) -> list[tuple[str, str, object]]:
    return sorted((m.title, m.body, m.frontmatter.get("restated")) for m in Vault(root).scan().memories
                  if m.collection == "working" and m.type == "history")


def test_a_stop_whose_prompt_never_arrived_stores_its_answer_alone_not_beside_the_previous_prompt(
        hashing_example: Path):
    """Turn two's prompt hook could not spool its event (a full disk) and found no server, or one still opening: the
    event was lost, and turn two's Stop captured turn one's prompt with turn two's answer, a wrong pair in a memory
    (review of session 12). The answer is kept, without a prompt, in a turn of its own."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn one: celery retries"})
        _live(hashing_example, handler, "stop", {"session_id": "s-a", "stop_hook_active": False,
                                                  "last_assistant_message": "ANSWER ONE: make the task idempotent."})
        turn = service.sessions.load("s-a").turn
        # turn two's prompt never arrives
        _live(hashing_example, handler, "stop", {"session_id": "s-a", "stop_hook_active": False,
                                                  "last_assistant_message": "ANSWER TWO: transaction mode."})
        (one_title, one, _), (alone_title, alone, _) = sorted(_history(hashing_example), key=lambda e: "TWO" in e[1])
        assert "turn one" in one and "ANSWER ONE" in one
        assert "ANSWER TWO" in alone and "turn one" not in alone and alone_title == "Exchange: (no prompt)"
        assert service.sessions.load("s-a").turn == turn + 1  # the Turns page keeps turn one's exchange its own
    finally:
        app.close()


def test_a_stop_that_repeats_the_answer_just_stored_is_not_a_new_turn(hashing_example: Path):
    """The guard of the rule above: a client that reports the same finished answer twice (OpenCode's idle event may)
    stores it once, and does not count it as said again."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn one: celery retries"})
        for _ in range(2):
            _live(hashing_example, handler, "stop", {"session_id": "s-a", "stop_hook_active": False,
                                                      "last_assistant_message": "ANSWER ONE: make the task idempotent."})
        assert [(title, restated) for title, _, restated in _history(hashing_example)] == \
            [("Exchange: turn one: celery retries", None)]
    finally:
        app.close()


def test_a_held_event_that_fails_unexpectedly_is_logged_and_let_go_so_its_sessions_later_events_flow(
        hashing_example: Path, monkeypatch, caplog):
    """A held event that raised none of the errors the server expects stayed held: every later event of its session
    tried it first, failed with it, and went back behind it, until a restart (review of session 12). It is logged
    with its reason and dropped; the session's next turn is applied at once."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _stop_one_put_back(hashing_example, handler, monkeypatch)
        with _full_disk(monkeypatch):
            assert handler.prompt({"session_id": "s-a", "prompt": "turn two: pool mode"})["replayed"]  # held
        real_start = handler._start_turn

        def start_turn(state, prompt, event):  # type: ignore[no-untyped-def]
            if prompt.startswith("turn two"):
                raise RuntimeError("a bug met applying it")
            return real_start(state, prompt, event)

        monkeypatch.setattr(handler, "_start_turn", start_turn)
        handler.put_back.clock.now += PUT_BACK_CAP_SECONDS
        with caplog.at_level(logging.WARNING, logger="memdir.hooks"):
            assert handler.drain(spooled_before=time.time_ns()) == 1  # turn one's Stop
        assert "dropped" in caplog.text and "RuntimeError: a bug met applying it" in caplog.text
        assert not handler._held
        assert "additionalContext" in _live(hashing_example, handler, "prompt",
                                            {"session_id": "s-a", "prompt": "turn three: beat schedule"})
        assert _live(hashing_example, handler, "stop", {"session_id": "s-a", "stop_hook_active": False,
                                                        "last_assistant_message": "ANSWER THREE: 5 min."})["stored"]
        got = sorted(m.body for m in Vault(hashing_example).scan().memories
                     if m.collection == "working" and m.type == "history")
        assert len(got) == 2 and "ANSWER ONE" in got[0] and "turn three" in got[1] and "ANSWER THREE" in got[1]
    finally:
        app.close()


@pytest.mark.parametrize("delivered", ["replayed", "live"])
@pytest.mark.parametrize("failing", ["the session's save", "the turn log"])
def test_a_stop_put_back_after_it_restated_another_sessions_exchange_counts_once_after_a_restart(
        hashing_example: Path, monkeypatch, failing: str, delivered: str):
    """Session s-a's Stop restated the same exchange session s-b had stored, then its session's save failed and it was
    put back: the next server's replay counted it again, restated twice for one saying (review of session 12)."""
    spooled_turn(hashing_example, "s-b", "are the celery retries safe now", "Yes: the task is idempotent.")
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        assert handler.replay(handler.spool) == 2
        if delivered == "replayed":
            spooled_turn(hashing_example, "s-a", "are the celery retries safe now", "Yes: the task is idempotent.")
            fails = _settling_fails_once(service, failing, monkeypatch)
            assert handler.replay(handler.spool) == 1 and fails == [failing]
        else:
            _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "are the celery retries safe now"})
            fails = _settling_fails_once(service, failing, monkeypatch)
            answer = {"session_id": "s-a", "stop_hook_active": False, "last_assistant_message": "Yes: the task is idempotent."}
            name = spool(hashing_example, "stop", answer)
            assert name is not None
            # spooled in the last millisecond of the second before, so its request is applied in the next second
            late = f"{(time.time_ns() // 10**9 - 1) * 10**9 + 999_000_000}-{name.split('-', 1)[1]}"
            handler.spool.joinpath(name).rename(handler.spool / late)
            with pytest.raises(OSError):
                handler.stop({**answer, "spool": late})
            assert fails == [failing] and len(list(handler.spool.glob("*-stop.json"))) == 1  # put back
    finally:
        app.close()
    monkeypatch.undo()
    assert [restated for _, restated in working_exchanges(hashing_example)] == [1]
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)  # the next server
    try:
        assert HookHandler(MemoryService(app)).replay(app.root / ".memdir" / "spool") == 1
        assert [restated for _, restated in working_exchanges(hashing_example)] == [1]
    finally:
        app.close()


def test_a_prompt_a_replay_opened_asks_for_no_score_so_its_stop_warns_of_none_and_the_next_prompt_asks(
        hashing_example: Path, caplog):
    """A replay opens the turn of a prompt that waited behind its session's Stop (or whose file it took first): the
    answer it got was found ahead and carries no scoring request, yet the turn was marked as asking for one, so its
    Stop logged "asked for score_memories and it was not called" for a request the model never saw (review21's
    leftover). The memories waiting for a score are still asked for at the next live prompt."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _turn_one_with_its_stop_left_in_the_spool(hashing_example, handler)
        assert MemoryService(app).sessions.load("s-a").turn_shown  # turn one showed memories to score
        assert handler._replaying.acquire(timeout=5)  # a replay under way: turn two waits behind turn one's Stop
        try:
            answer = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})
        finally:
            handler._replaying.release()
        assert answer["replayed"] and "score_memories" not in answer["additionalContext"]
        _caught_up(handler)  # the Stop, then the prompt's turn
        assert not list(handler.spool.glob("*.json"))
        with caplog.at_level(logging.WARNING, logger="memdir.hooks"):
            stopped = _live(hashing_example, handler, "stop", {"session_id": "s-a", "stop_hook_active": False,
                                                               "last_assistant_message": "ANSWER TWO: session mode."})
        assert "not called" not in caplog.text and stopped["scoring_required"] is False
        third = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn three: beat schedule"})
        assert "score_memories" in third["additionalContext"] and third["scoring_required"]
    finally:
        app.close()


def test_a_waiting_prompts_context_is_recorded_by_the_next_servers_replay(hashing_example: Path):
    """What a waiting prompt showed was kept in the server's memory only: a server that ended before the replay
    applied the prompt (the disk still full, or stopped) left the next server to open the turn without it, so the
    session never marked those memories shown and the turn log had no line for it (review21's leftover). It goes back
    to the spool with its event now."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        _turn_one_with_its_stop_left_in_the_spool(hashing_example, handler)
        assert handler._replaying.acquire(timeout=5)  # a replay under way: turn two waits behind turn one's Stop
        try:
            answer = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn two: pool mode"})
            handler.close()  # let go before the replay under way ends: the catch-up the prompt asked for applies nothing
        finally:
            handler._replaying.release()
        assert answer["replayed"] and answer["shown"]
        _caught_up_or_closed(handler)
    finally:
        app.close()  # the server ends (stopped, or its closing replay met the full disk again): the event waits
    _next_servers_replay(hashing_example, 2, "turn two", answer["shown"]).close()


def test_a_live_prompt_whose_save_failed_is_recorded_once_by_the_next_servers_replay(hashing_example: Path,
                                                                                    monkeypatch):
    """The live prompt's answer showed memories and wrote its turn log line; the session's save failed and the event
    went back to the spool. A server that ended before its replay applied it left the next one to open the turn
    without what it showed (review21's leftover); now the event carries it, and that its line is logged."""
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        with _turn_two_not_saved(handler, monkeypatch, turn=1):
            answer = _live(hashing_example, handler, "prompt", {"session_id": "s-a", "prompt": "turn one: celery retries"})
        assert answer["shown"] and len(list(handler.spool.glob("*prompt.json"))) == 1  # put back for a replay
    finally:
        app.close()  # the server ends (stopped, or its closing replay met the full disk again): the event waits
    app = _next_servers_replay(hashing_example, 1, "turn one", answer["shown"])
    try:
        stopped = HookHandler(MemoryService(app)).stop(
            {"session_id": "s-a", "stop_hook_active": False, "last_assistant_message": "ANSWER ONE: idempotent."})
        assert stopped["scoring_required"] is False  # the live answer asked for no score (nothing was shown before)
    finally:
        app.close()


def _next_servers_replay(root: Path, events: int, prompt: str, shown: list[str]) -> App:
    """The next server's replay of the `events` left in the spool: session s-a's last turn is `prompt`'s, the memories
    its live answer showed are marked shown, and the turn log has that turn's line once. The server's App, open."""
    app = App(root, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        assert HookHandler(MemoryService(app)).replay(app.root / ".memdir" / "spool") == events
        state = MemoryService(app).sessions.load("s-a")
        assert state.prompt.startswith(prompt) and set(shown) <= set(state.shown) and state.turn_shown
        logged = [r for r in turns.read(root) if r.get("kind") == "prompt" and r.get("turn") == state.turn]
        assert [[s["id"] for s in r["shown"]] for r in logged] == [shown]
    except BaseException:
        app.close()
        raise
    return app
