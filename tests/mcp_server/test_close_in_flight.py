"""A hook request still running when its vault is let go (past the close's drain of requests): its event is applied
once, and nothing of it is written after the close."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any, Callable

from mcp_server.clients.hooks import spool
from mcp_server.server.served import ServedVault, open_vault
from mcp_server.service import turns
from mcp_server.service.sessions import SessionStore
from vault import VaultError

BOUND = 30.0  # seconds; a bound on a wait, never reached when the code under test works
ASKED = {"session_id": "s-late", "hook_event_name": "UserPromptSubmit", "prompt": "how do we make celery retries safe"}


def held_up(thread: threading.Thread) -> bool:
    """Whether the closing thread has ended or waits: for a session's lock (a replay applying that session's event)
    or for the events being applied (HookHandler.take_no_more)."""
    frame = sys._current_frames().get(thread.ident or -1)
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return not names or names[0] == "update" or (names[0] == "wait" and "take_no_more" in names)


def wait_until(ready: Callable[[], bool]) -> None:
    event = threading.Event()
    for _ in range(int(BOUND * 100)):
        if ready():
            return
        event.wait(0.01)
    raise AssertionError("not within the bound")


def in_flight(served: ServedVault, event: dict[str, Any], where: str) -> tuple[threading.Thread, threading.Event,
                                                                                list[Any]]:
    """The hook request for `event`, held at `where` ("search": as its search begins; "searched": once its context is
    found) until the returned event is set; its answer (or error) lands in the list."""
    handler = served.hooks
    assert handler is not None
    reached, release, answers = threading.Event(), threading.Event(), []
    real = handler._context_lines

    def held(state: Any, prompt: str, *hits: Any) -> Any:
        if where == "search":
            reached.set()
            release.wait(BOUND)
        found = real(state, prompt, *hits)
        if where == "searched":
            reached.set()
            release.wait(BOUND)
        return found

    handler._context_lines = held  # type: ignore[method-assign]

    def run() -> None:
        try:
            answers.append(handler.prompt(event))
        except (VaultError, RuntimeError) as exc:
            answers.append(exc)

    request = threading.Thread(target=run)
    request.start()
    assert reached.wait(BOUND)
    return request, release, answers


def prompt_lines(root: Path) -> list[dict[str, Any]]:
    return [line for line in turns.read(root) if line.get("kind") == "prompt" and line.get("session") == "s-late"]


def test_a_prompt_still_running_when_its_vault_is_let_go_opens_its_turn_once(hashing_example: Path):
    # The close's replay made the request's taken spool file due again and applied it; then the request, done with its
    # search, applied it too: the turn was opened twice (review of session 22).
    served = open_vault(hashing_example, lambda config: None)
    request, release, answers = in_flight(served, {**ASKED, "spool": spool(hashing_example, "prompt", ASKED)}, "search")
    closer = threading.Thread(target=served.close)
    closer.start()
    wait_until(lambda: held_up(closer))
    release.set()
    request.join(BOUND)
    closer.join(BOUND)
    assert not closer.is_alive() and not request.is_alive()
    assert SessionStore(hashing_example).load("s-late").turn == 1
    assert len(prompt_lines(hashing_example)) == 1
    assert "[id:m-a4c81f63]" in answers[0]["additionalContext"]  # it was being applied: the close waited for it
    assert list((hashing_example / ".memdir" / "spool").iterdir()) == []


def test_a_prompt_whose_save_comes_after_the_close_began_is_saved_before_the_close_ends(hashing_example: Path):
    # An event no spool could take (a full disk): the close's replay had nothing of its session to wait for, and the
    # prompt's save, on a saving thread started after the close's flush, landed after the vault was let go (review of
    # session 22), when another server may serve it.
    served = open_vault(hashing_example, lambda config: None)
    order: list[str] = []
    sessions = served.service.sessions  # type: ignore[union-attr]
    real_save = sessions.save
    sessions.save = lambda session, at=None: (real_save(session, at), order.append("saved"))[0]  # type: ignore[method-assign]
    request, release, answers = in_flight(served, dict(ASKED), "searched")
    closer = threading.Thread(target=lambda: (served.close(), order.append("closed")))
    closer.start()
    wait_until(lambda: held_up(closer))
    release.set()
    request.join(BOUND)
    closer.join(BOUND)
    sessions.flush()  # a save still under way lands now
    assert order == ["saved", "closed"]
    assert "[id:m-a4c81f63]" in answers[0]["additionalContext"]


def test_a_prompt_that_reaches_its_turn_after_the_close_began_is_left_to_the_replay_and_applied_once(
        hashing_example: Path):
    served = open_vault(hashing_example, lambda config: None)
    handler = served.hooks
    assert handler is not None
    reached, release, answers = threading.Event(), threading.Event(), []
    real = handler.replay_stale

    def held() -> int:  # the request has taken its spool file, and not begun its turn
        reached.set()
        release.wait(BOUND)
        return real()

    handler.replay_stale = held  # type: ignore[method-assign]

    def run() -> None:
        try:
            answers.append(handler.prompt({**ASKED, "spool": spool(hashing_example, "prompt", ASKED)}))
        except VaultError as exc:
            answers.append(exc)

    request = threading.Thread(target=run)
    request.start()
    assert reached.wait(BOUND)
    served.close()  # its replay applies the taken file, made due again
    release.set()
    request.join(BOUND)
    assert isinstance(answers[0], VaultError) and "letting go" in str(answers[0])
    assert SessionStore(hashing_example).load("s-late").turn == 1
    assert list((hashing_example / ".memdir" / "spool").iterdir()) == []


def test_a_request_that_looks_for_stale_events_after_the_close_applies_none_of_them(hashing_example: Path):
    # A request past the close's drain looks for events left by killed hooks (replay_stale) as it claims its own: it
    # applied a stale prompt (its session saved after the vault was let go) and left a Stop taken, on a closed index.
    import json
    import time

    served = open_vault(hashing_example, lambda config: None)
    handler = served.hooks
    assert handler is not None
    served.close()
    folder = hashing_example / ".memdir" / "spool"
    folder.mkdir(parents=True, exist_ok=True)
    for kind, payload in (("prompt", {"session_id": "s-old", "prompt": "celery retries"}),
                          ("stop", {"session_id": "s-old", "last_assistant_message": "Use acks_late.",
                                    "stop_hook_active": False})):
        (folder / f"{time.time_ns() - 120 * 10**9}-4242-{kind}.json").write_text(json.dumps({"event": kind,
                                                                                           "payload": payload}))
    assert handler.replay_stale() == 0
    assert len(list(folder.glob("*.json"))) == 2 and not list(folder.glob(".*"))  # left for the next server, whole
    assert not SessionStore(hashing_example).path("s-old").exists()
