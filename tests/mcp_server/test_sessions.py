"""Session state: survives restarts, is cleaned after 7 idle days, and a hostile session id stays inside."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

from mcp_server.service.app import App
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service.memory_service import MemoryService
from mcp_server.service.sessions import MAX_AGE_SECONDS, SessionStore

from ..conftest import write
from mcp_server.service import operations as ops


def test_a_session_saved_by_one_server_is_read_by_the_next(tmp_path: Path):
    SessionStore(tmp_path).update("abc", lambda s: (s.show([("m-1234abcd", "h1")]), setattr(s, "completed", True)))
    again = SessionStore(tmp_path).load("abc")
    assert again.shown == {"m-1234abcd": "h1"} and again.completed and again.turn_shown == ["m-1234abcd"]


def test_sessions_idle_for_more_than_seven_days_are_removed_and_recent_ones_kept(tmp_path: Path):
    store = SessionStore(tmp_path)
    for name in ("old", "recent"):
        store.update(name, lambda s: None)
    old = store.path("old")
    os.utime(old, (time.time() - MAX_AGE_SECONDS - 60,) * 2)
    assert store.clean() == 1
    assert not old.exists() and store.path("recent").exists()


def test_a_session_id_cannot_name_a_file_outside_the_sessions_folder(tmp_path: Path):
    store = SessionStore(tmp_path)
    for hostile in ("../../memdir.toml", "/etc/passwd", "a\x00b", "..", "C:\\x"):
        path = store.path(hostile)
        assert path.parent == store.folder and path.resolve().parent == store.folder.resolve()
    assert store.path("a/b") != store.path("a_b")  # made safe, yet distinct ids never share a file


def test_the_context_block_respects_its_budget_and_is_empty_when_nothing_is_relevant(service):
    handler = HookHandler(service)
    handler.settings = replace(handler.settings, max_chars=1100)  # the preamble is ~560 of them
    small = handler.prompt({"session_id": "budget", "prompt": "how do we make celery retries safe"})
    assert 0 < len(small["additionalContext"]) <= 1100
    handler.settings = replace(handler.settings, max_chars=6000, min_relevance=1.01)
    nothing = handler.prompt({"session_id": "strict", "prompt": "how do we make celery retries safe"})
    standing = [m for m in service.index.all_memories() if m.always_inject]
    assert all(f"[id:{m.id}]" in nothing["additionalContext"] for m in standing)
    assert len(nothing["shown"]) == len(standing)  # only the standing facts: nothing else is relevant enough


def test_an_empty_vault_injects_nothing_at_all(hashing_root: Path):
    app = App(hashing_root)
    try:
        answer = HookHandler(MemoryService(app)).prompt({"session_id": "s", "prompt": "anything at all"})
    finally:
        app.close()
    assert answer["additionalContext"] == "" and answer["shown"] == []


def test_a_tool_call_joins_the_latest_session_whose_hooks_came_from_the_same_client(tmp_path: Path):
    store = SessionStore(tmp_path)
    store.update("hook-old", lambda s: setattr(s, "client_pids", [4242]))
    store.update("hook-new", lambda s: setattr(s, "client_pids", [4242, 77]))
    store.update("mcp-1", lambda s: s.show([("m-1234abcd", "h")]))
    assert store.latest_of_client(4242, excluding="mcp-1") == "hook-new"
    assert store.latest_of_client(4242, excluding="hook-new") == "hook-old"
    assert store.latest_of_client(9999, excluding="mcp-1") is None
    assert SessionStore(tmp_path).latest_of_client(77, excluding="mcp-1") == "hook-new"  # rebuilt from the files
    store.update("hook-old", lambda s: None)  # touched last: now the latest of client 4242
    assert store.latest_of_client(4242, excluding="mcp-1") == "hook-old"


def test_a_stop_hook_arriving_during_a_prompt_hook_loses_neither_update(hashing_example: Path):
    import threading

    app = App(hashing_example)
    service = MemoryService(app)
    handler = HookHandler(service)
    base = {"session_id": "s1", "cwd": str(hashing_example)}
    handler.prompt({**base, "prompt": "celery retries"})
    stop_loaded = threading.Event()
    load, hits = service.sessions.load, service.hits

    def watched_load(session_id):
        if threading.current_thread().name == "stop":
            stop_loaded.set()
        return load(session_id)

    def searching_while_the_stop_hook_arrives(request):
        stop.start()
        stop_loaded.wait(timeout=0.5)  # bounded: an interleaving Stop hook would load the session right now
        return hits(request)

    stop = threading.Thread(name="stop", target=lambda: handler.stop({**base, "last_assistant_message": "acks_late"}))
    service.sessions.load, service.hits = watched_load, searching_while_the_stop_hook_arrives
    try:
        handler.prompt({**base, "prompt": "and the visibility timeout"})
        stop.join(timeout=60)
        final = load("s1")
        assert final.completed and final.last_exchange is not None and final.turn == 2
    finally:
        app.close()


def test_a_superseded_always_inject_memory_is_no_longer_injected_beside_its_successor(hashing_example: Path):
    # The example's "Never force-push to main" (m-0c4fa8d2) is always_inject; a newer rule replaces it.
    write(hashing_example, "memory_bank/force-push-v2.md",
          "---\nid: m-f0bced02\ncollection: memory_bank\ntype: constraint\ntitle: Force-push only with lease\n"
          "supersedes: ['[[never-force-push-main]]']\nalways_inject: true\n---\n"
          "Force-push to feature branches only with --force-with-lease; never to main.\n")
    app = App(hashing_example)
    try:
        service = MemoryService(app)
        assert "m-0c4fa8d2" in app.project.index.links.superseded_ids()
        context = HookHandler(service).prompt({"session_id": "a1", "prompt": "anything"})["additionalContext"]
    finally:
        app.close()
    assert "[id:m-f0bced02]" in context
    assert "[id:m-0c4fa8d2]" not in context


def test_where_did_we_leave_off_injects_the_newest_working_and_history_memories_as_recent(hashing_example: Path):
    app = App(hashing_example)
    try:
        service = MemoryService(app)
        fresh = service.add(ops.Add(content="Half-way through moving the FX importer to ECB rates; the tests for rounding still fail.",
                            type="context", collection="working")).memory.id
        context = HookHandler(service).prompt({"session_id": "leave-off", "prompt": "where did we leave off?"})
    finally:
        app.close()
    lines = [line for line in context["additionalContext"].splitlines() if f"[id:{fresh}]" in line]
    assert lines and "recent" in lines[0]


def test_memories_shown_for_an_interrupted_prompt_are_asked_for_after_the_next_answer(hashing_example):
    app = App(hashing_example)
    try:
        handler = HookHandler(MemoryService(app))
        first = handler.prompt({"session_id": "cut", "prompt": "why do the ledger imports take an advisory lock?"})
        assert first["shown"]
        # The user interrupts: no Stop hook. The next prompt shows other memories and is answered.
        second = handler.prompt({"session_id": "cut", "prompt": "how do we deploy the release command on fly?"})
        assert not second["scoring_required"], "nothing was answered yet: nothing to score"
        handler.stop({"session_id": "cut", "last_assistant_message": "Fly runs the release command first."})
        third = handler.prompt({"session_id": "cut", "prompt": "thanks"})
    finally:
        app.close()
    asked = third["additionalContext"]
    assert third["scoring_required"]
    assert all(memory_id in asked for memory_id in first["shown"] + second["shown"])


def test_the_memories_a_session_awaits_are_found_with_one_look_at_the_vaults(hashing_example, monkeypatch):
    # A prompt finds every memory its session still awaits a score for, and that list grows while no score comes:
    # a look at the vaults an id was a stat of the user vault's folder each (bench/results/s22-hook22.md).
    app = App(hashing_example)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        shown = handler.prompt({"session_id": "s", "prompt": "why do the ledger imports take an advisory lock?"})["shown"]
        shown += handler.prompt({"session_id": "s", "prompt": "how do we deploy the release command on fly?"})["shown"]
        looks: list[int] = []
        sides = app.sides
        monkeypatch.setattr(app, "sides", lambda *args, **kwargs: looks.append(1) or sides(*args, **kwargs))
        found = service.find_many(shown + ["no-such-memory", "../not-an-id"])
    finally:
        app.close()
    assert len(shown) > 2
    assert [m.id for m in found[:len(shown)] if m is not None] == shown
    assert found[len(shown):] == [None, None]
    assert looks == [1]


def test_a_prompt_is_answered_before_its_session_is_saved_and_a_stop_sent_meanwhile_captures_that_prompt(
        hashing_example: Path, monkeypatch):
    # The session file's save (a JSON dump, a write, a rename) was on the prompt's answer path: 9-12 ms of a hook's
    # wall at load 7-10 (bench/results/s20-hook20.md). It now follows the answer, under the session's lock, so a Stop
    # sent as soon as the context came still finds the turn its prompt opened.
    import threading

    from indexer.embed import HashingEmbedder
    from vault import Vault

    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        store, saving, release, updating, saved = handler.service.sessions, *(threading.Event() for _ in range(3)), []
        real_save, real_update = store.save, store.update
        stop: threading.Thread | None = None  # the Stop's thread, below

        def slow_save(session, at=None):  # type: ignore[no-untyped-def]
            if not saving.is_set():  # the prompt's, the session's first
                saving.set()
                release.wait(5.0)  # a bound: reached only when the answer waits for the save (the failure)
            real_save(session, at)
            saved.append(session.id)

        def update(*args, **kwargs):  # type: ignore[no-untyped-def]
            if threading.current_thread() is stop:
                updating.set()
            return real_update(*args, **kwargs)

        monkeypatch.setattr(store, "save", slow_save)
        monkeypatch.setattr(store, "update", update)
        answer, stop, stopped = _prompt_then_its_stop_on_a_thread(handler, hashing_example)
        assert "[id:m-a4c81f63]" in answer["additionalContext"]
        assert saving.is_set() and not saved  # answered; its session still being saved
        stop.start()
        assert updating.wait(30.0)  # the Stop is at its session's update
        stop.join(0.2)  # a bound: an update that did not wait for the save has read the session before it by now
        release.set()
        stop.join(30.0)
        assert stopped and stopped[0]["stored"]
        exchange = [m.body for m in Vault(hashing_example).scan().memories if m.id == stopped[0]["stored"]]
        assert exchange and "turn one" in exchange[0] and "ANSWER ONE" in exchange[0]
        assert not list((hashing_example / ".memdir" / "spool").iterdir())  # both events settled
    finally:
        app.close()


def test_a_stop_sent_while_its_prompts_save_fails_captures_that_prompt_not_the_answer_alone(hashing_example: Path,
                                                                                           monkeypatch):
    # A prompt's session is saved after its answer (above); a save that fails (a full disk) puts the prompt's event
    # back in the spool. A Stop sent meanwhile had already looked for its session's earlier events (the prompt's file
    # was still this server's) and waited at the session's lock: it then found no turn opened, stored the answer
    # alone as if its prompt had been lost, and the prompt was replayed after it, a turn that never ends. The Stop
    # now waits for the save's outcome before it looks, and applies the put-back prompt first.
    import threading

    from indexer.embed import HashingEmbedder
    from vault import Vault
    from vault.errors import DiskFullError

    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        store, saving, release, waiting = handler.service.sessions, *(threading.Event() for _ in range(3))
        real_save, real_update, real_saved = store.save, store.update, getattr(store, "saved", None)
        stop: threading.Thread | None = None  # the Stop's thread, below

        def failing_save(session, at=None):  # type: ignore[no-untyped-def]
            if not saving.is_set():  # the prompt's, the session's first: the disk is full then
                saving.set()
                release.wait(30.0)  # a bound: reached only if the Stop never comes to wait
                raise DiskFullError("could not save the session: the disk is full")
            real_save(session, at)

        def update(*args, **kwargs):  # type: ignore[no-untyped-def]
            if threading.current_thread() is stop:
                waiting.set()  # (main: the Stop at its session's lock, its look for earlier events made)
            return real_update(*args, **kwargs)

        def saved(session_id):  # type: ignore[no-untyped-def]
            if threading.current_thread() is stop:
                waiting.set()  # the Stop waits for its session's save before it looks for earlier events
            return real_saved(session_id)  # type: ignore[misc]

        monkeypatch.setattr(store, "save", failing_save)
        monkeypatch.setattr(store, "update", update)
        if real_saved is not None:
            monkeypatch.setattr(store, "saved", saved)
        answer, stop, stopped = _prompt_then_its_stop_on_a_thread(handler, hashing_example)
        assert "[id:m-a4c81f63]" in answer["additionalContext"] and saving.is_set()
        stop.start()
        assert waiting.wait(30.0)
        release.set()  # the save fails; the disk has room again after it
        stop.join(30.0)
        handler.service.sessions.flush()
        handler.replay(handler.spool)
        exchanges = [m.body for m in Vault(hashing_example).scan().memories
                     if m.collection == "working" and m.type == "history"]
        assert len(exchanges) == 1 and "turn one" in exchanges[0] and "ANSWER ONE" in exchanges[0]
        state = handler.service.sessions.load("s-a")
        assert state.turn == 1 and state.completed  # one turn, ended by its Stop
    finally:
        app.close()


def _prompt_then_its_stop_on_a_thread(handler: HookHandler, root: Path):  # type: ignore[no-untyped-def]
    """Turn one's prompt answered here, and its Stop (ANSWER ONE) ready to be sent on a thread of its own, not started
    yet: (the prompt's answer, the thread, the Stop's answers)."""
    import threading

    from mcp_server.clients.hooks import spool

    asked = {"session_id": "s-a", "hook_event_name": "UserPromptSubmit", "prompt": "turn one: celery retries"}
    answer = handler.prompt({**asked, "spool": spool(root, "prompt", asked)})
    finished = {"session_id": "s-a", "hook_event_name": "Stop", "stop_hook_active": False,
                "last_assistant_message": "ANSWER ONE: make the task idempotent."}
    stopped: list[dict] = []
    thread = threading.Thread(target=lambda: stopped.append(handler.stop({**finished, "spool": spool(root, "stop", finished)})))
    return answer, thread, stopped


def test_a_prompts_query_is_asked_of_the_model_before_its_turn_is_opened_and_only_then(hashing_example: Path,
                                                                                      monkeypatch):
    # The search sent its query to the model host only when it began, after the claim, the session's lock and the
    # turn's opening; the model now computes it meanwhile (bench/results/s23-hook23.md). Its search reads that vector.
    from indexer.embed import HashingEmbedder, Ready

    class Model(HashingEmbedder):  # takes a query's request on the calling thread, as the embedding host does
        def __init__(self) -> None:
            super().__init__()
            self.asked: list[str] = []

        def start_query(self, text: str) -> Ready:
            self.asked.append(text)
            return Ready(self.embed_query(text))

    model = Model()
    app = App(hashing_example, embedder=model)
    try:
        handler = HookHandler(MemoryService(app))
        store = handler.service.sessions
        asked_at_turn: list[list[str]] = []
        real = store.update_answered
        monkeypatch.setattr(store, "update_answered", lambda *args, **kwargs: (
            asked_at_turn.append(list(model.asked)), real(*args, **kwargs))[1])
        answer = handler.prompt({"session_id": "ahead", "prompt": "why do the ledger imports take an advisory lock?"})
    finally:
        app.close()
    assert answer["shown"]
    assert asked_at_turn == [["why do the ledger imports take an advisory lock?"]]  # asked before the turn
    assert model.asked == ["why do the ledger imports take an advisory lock?"]  # and the search asked no more


def test_a_query_that_cannot_be_sent_ahead_leaves_the_prompt_as_it_was(hashing_example: Path, monkeypatch):
    # Sending the query ahead is only a head start: a vault error there (the search meets it again) must not take
    # the prompt's event out of its order (raised before the claim, it would have left the event unclaimed).
    from vault import VaultError

    app = App(hashing_example)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        asked = {"prompt": "why do the ledger imports take an advisory lock?"}
        expected = handler.prompt({"session_id": "plain", **asked})
        monkeypatch.setattr(service, "send_query", lambda request: (_ for _ in ()).throw(VaultError("broken")))
        answer = handler.prompt({"session_id": "unsent", **asked})
    finally:
        app.close()
    assert answer["shown"] == expected["shown"] and answer["additionalContext"] == expected["additionalContext"]
