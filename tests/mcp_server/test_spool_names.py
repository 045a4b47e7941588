"""A spool file's name says its session (spool_names): a live prompt, looking for its session's earlier events not
applied yet, reads no earlier file that its name says is another session's; files named by an older memdir are still
read, and a tag two sessions share is settled by reading the file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from indexer.embed import HashingEmbedder
from mcp_server.clients import hooks_server
from mcp_server.clients.hooks import spool
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.clients.spool_names import may_be_of, session_tag
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService

SAME_TAG = ("s-1122789", "s-1339192")  # two session ids with one tag


def _live(root: Path, handler: HookHandler, payload: dict) -> dict:
    name = spool(root, "prompt", payload)
    return handler.prompt({**payload, "spool": name})


def _orphaned_stop(root: Path, session: str, *, older_name: bool = False) -> Path:
    """A Stop its hook spooled and never asked for (killed); `older_name`: as a memdir without tags named it."""
    payload = {"session_id": session, "stop_hook_active": False, "last_assistant_message": f"The answer of {session}."}
    name = spool(root, "stop", payload)
    assert name is not None
    path = root / ".memdir" / "spool" / name
    if older_name:
        path = path.rename(path.with_name(f"{time.time_ns()}-{os.getpid()}-stop.json"))
    return path


@pytest.fixture
def handler(hashing_example: Path):
    app = App(hashing_example, embedder=HashingEmbedder(), defer_embedding=True)
    try:
        yield HookHandler(MemoryService(app))
    finally:
        app.close()


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []
    real = hooks_server._read_spooled

    def reading(path: Path) -> str | None:
        names.append(path.name)
        return real(path)

    monkeypatch.setattr(hooks_server, "_read_spooled", reading)
    return names


def test_a_spool_name_carries_its_sessions_tag_and_an_older_name_may_be_anyones(tmp_path: Path):
    name = spool(tmp_path, "stop", {"session_id": "s-a"})
    assert name is not None and name.endswith(f"-{session_tag('s-a')}-stop.json")
    assert may_be_of(name, session_tag("s-a")) and not may_be_of(name, session_tag("s-b"))
    assert may_be_of("1764000000000000000-4242-stop.json", session_tag("s-b"))
    assert session_tag(SAME_TAG[0]) == session_tag(SAME_TAG[1])


def test_a_live_prompt_reads_no_earlier_spool_file_of_another_session_but_reads_an_older_name(
        hashing_example: Path, handler: HookHandler, read: list[str]):
    others = _orphaned_stop(hashing_example, "s-b")
    older = _orphaned_stop(hashing_example, "s-c", older_name=True)
    answer = _live(hashing_example, handler, {"session_id": "s-a", "prompt": "how do we make celery retries safe"})
    assert "replayed" not in answer and answer["shown"], "answered live, with context"
    assert others.name not in read, "its name says another session: not read"
    assert older.name in read, "an older name says nothing: read"
    assert others.exists() and older.exists(), "other sessions' events are left to their own turns and the drain"


def test_a_sessions_orphaned_stop_is_applied_first_and_a_shared_tag_is_settled_by_reading(
        hashing_example: Path, handler: HookHandler, read: list[str]):
    mine, theirs = SAME_TAG
    _live(hashing_example, handler, {"session_id": mine, "prompt": "turn one: celery retries"})
    own = _orphaned_stop(hashing_example, mine)
    other = _orphaned_stop(hashing_example, theirs)
    _live(hashing_example, handler, {"session_id": mine, "prompt": "turn two: pool mode"})
    assert other.name in read, "the same tag: read, and its session compared"
    assert not own.exists() and other.exists(), "its own session's Stop applied first; the other's left alone"
