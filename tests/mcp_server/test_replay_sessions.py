"""The hook events nine sessions spooled while no server served them are replayed session by session, side by side:
their captures share index syncs instead of a Whoosh commit each, and each session's turns keep their order."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from indexer.embed import HashingEmbedder
from mcp_server.clients.hooks import spool
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service.app import App
from mcp_server.service import turns
from mcp_server.service.memory_service import MemoryService
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
        with caplog.at_level(logging.WARNING, logger="memdir.hooks"):
            assert handler.replay(handler.spool) == 0
        assert sorted(p.name for p in folder.iterdir()) == spooled  # nothing hidden, nothing lost
        assert f"{spooled[0]} left in the spool for the next replay" in caplog.text and "No space left" in caplog.text
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="memdir.hooks"):  # the disk still full: said once, not every drain
            assert handler.replay(handler.spool, spooled_before=time.time_ns()) == 0
        assert caplog.text == "" and sorted(p.name for p in folder.iterdir()) == spooled
        assert handler.replay(handler.spool, spooled_before=time.time_ns()) == 2  # a drain: no start in between
        assert list(folder.iterdir()) == [] and list(exchanges(hashing_example)) == ["s-a"]
    finally:
        app.close()
