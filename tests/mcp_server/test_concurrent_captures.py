"""Sessions that ask the same question at the same moment each keep their exchange: two captures whose titles
name the same file both land, the second under a name made unique with its id (issue 32 item 6: "nothing
captured is lost"; before, the later create found the name taken and the exchange was logged and dropped)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from vault import Vault

from .processes import hook, start_server, stop_all, wait_for

SESSIONS = 9
QUESTION = "why is the deploy slow"


def exchanges(root: Path) -> dict[str, str]:
    """Each captured exchange's session -> its file."""
    return {str(m.frontmatter.get("session")): m.path for m in Vault(root).scan().memories
            if m.collection == "working" and m.type == "history"}


def event(root: Path, session: str, name: str, **fields) -> dict:
    return {"session_id": session, "cwd": str(root.parent), "transcript_path": "/dev/null", "hook_event_name": name,
            **fields}


@pytest.mark.slow
def test_nine_sessions_capturing_the_same_question_at_once_all_keep_their_exchange(hashing_example: Path):
    process = start_server(hashing_example)
    try:
        sessions = [f"same-question-{n}" for n in range(SESSIONS)]
        for sid in sessions:
            assert hook("prompt", event(hashing_example, sid, "UserPromptSubmit", prompt=QUESTION),
                        "--vault", str(hashing_example)).returncode == 0
        start = threading.Barrier(SESSIONS)

        def stop(sid: str) -> int:
            start.wait(60)  # the Stop hooks leave together, as when several sessions finish the same answer
            return hook("stop", event(hashing_example, sid, "Stop", stop_hook_active=False,
                                      last_assistant_message=f"{sid}: the image is rebuilt on every deploy."),
                        "--vault", str(hashing_example)).returncode

        with ThreadPoolExecutor(SESSIONS) as pool:
            assert list(pool.map(stop, sessions)) == [0] * SESSIONS
        spool = hashing_example / ".memdir" / "spool"
        # A Stop the server answered after the hook left is applied from the spool: wait for both to settle.
        wait_for(lambda: not list(spool.glob("*.json")) and not list(spool.glob(".*.taken"))
                 and len(exchanges(hashing_example)) >= SESSIONS)
        captured = exchanges(hashing_example)
        assert sorted(captured) == sorted(sessions)
        assert len(set(captured.values())) == SESSIONS
    finally:
        stop_all(hashing_example, process)


def test_a_new_memory_whose_file_name_is_taken_as_it_writes_goes_under_a_name_with_its_id(
        hashing_example: Path, monkeypatch: pytest.MonkeyPatch):
    vault = Vault(hashing_example)
    rival = vault.add("Another session's exchange.", title="Exchange: why is the deploy slow", collection="working",
                      type="history")
    assert rival.path == "working/exchange-why-is-the-deploy-slow.md"
    rival_file = hashing_example / rival.path
    data = rival_file.read_bytes()
    rival_file.unlink()
    real_create = vault.writer.create

    def create_after_a_rival(path: str, *args, **kwargs):
        # The rival's write lands between this writer's look at the name and its own write.
        if path == rival.path and not rival_file.exists():
            rival_file.write_bytes(data)
        return real_create(path, *args, **kwargs)

    monkeypatch.setattr(vault.writer, "create", create_after_a_rival)
    added = vault.add("This session's exchange.", title="Exchange: why is the deploy slow", collection="working",
                      type="history")
    assert added.path == f"working/exchange-why-is-the-deploy-slow-{added.id}.md"
    assert rival_file.read_bytes() == data  # never overwritten
