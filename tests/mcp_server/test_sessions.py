"""Session state: survives restarts, is cleaned after 7 idle days, and a hostile session id stays inside."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

from mcp_server.app import App
from mcp_server.hooks_server import HookHandler
from mcp_server.service import MemoryService
from mcp_server.sessions import MAX_AGE_SECONDS, SessionStore


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
    handler.settings = replace(handler.settings, max_chars=900)
    small = handler.prompt({"session_id": "budget", "prompt": "how do we make celery retries safe"})
    assert 0 < len(small["additionalContext"]) <= 900
    handler.settings = replace(handler.settings, max_chars=6000, min_relevance=1.01)
    nothing = handler.prompt({"session_id": "strict", "prompt": "how do we make celery retries safe"})
    standing = [m for m in service.index.memories.values() if m.always_inject]
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
