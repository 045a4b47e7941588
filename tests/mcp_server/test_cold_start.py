"""A cold start under many sessions: the first prompts after the server starts get context as soon as the vault
is open. The hooks are served before the MCP endpoint is built, a hook that arrives while its vault opens waits
for it (within a bound, never beyond the hook's budget), and a prompt whose spooled event the opening vault's
drain applied first still gets its context."""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from mcp_server.client import VAULT_HEADER, VAULT_LOCK, lock_held
from mcp_server.clients import hooks, hooks_server
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.server import process
from mcp_server.server.served import ServedVault
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from vault import Vault

from .processes import wait_for

PORT = 47321  # what the Guard expects in the Host header; nothing listens: the client calls the app in-process
BOUND = 60.0  # a gate the test forgot to open fails the test instead of hanging it
PROMPT = "how do we make celery retries safe"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


class Gate:
    """Holds a step of the server until the test opens it, and says when the step was reached."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.opened = threading.Event()

    def hold(self) -> None:
        self.reached.set()
        assert self.opened.wait(BOUND), "the test never opened the gate"


def hold(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> Gate:
    """`owner.name` (a server step) held at a gate the test opens."""
    gate, step = Gate(), getattr(owner, name)

    def held(*args: Any) -> Any:
        gate.hold()
        return step(*args)

    monkeypatch.setattr(owner, name, held)
    return gate


@contextmanager
def served(root: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """This user's server, in-process, opening `root` at its start (as `memdir serve --vault` does)."""
    user = process.UserServer()
    user.port = PORT
    headers = {"Authorization": f"Bearer {user.token}", VAULT_HEADER: quote(str(root.resolve()))}
    with TestClient(user._asgi(root.resolve()), base_url=f"http://127.0.0.1:{PORT}") as http:
        yield http, headers


def prompt_event(session: str) -> dict[str, Any]:
    return {"session_id": session, "prompt": PROMPT, "hook_event_name": "UserPromptSubmit"}


def in_thread(call: Any) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(call()), daemon=True)
    thread.start()
    return thread, answers


def test_a_prompt_is_answered_while_the_mcp_endpoint_is_still_being_built(hashing_example: Path, monkeypatch):
    monkeypatch.setattr(process, "MCP_AFTER_SECONDS", 0.0)  # built at the open, not after the first answer
    building = hold(monkeypatch, ServedVault, "build_mcp")
    with served(hashing_example) as (http, headers):
        assert building.reached.wait(BOUND)  # the vault is open; its MCP endpoint is not built yet
        answer = http.post("/api/hook/prompt", json=prompt_event("s-1"), headers=headers)
        assert answer.status_code == 200 and "m-a4c81f63" in answer.json()["shown"]
        # An MCP request that comes now waits for its endpoint, and is answered once it is built.
        thread, answers = in_thread(lambda: http.post("/mcp", json=INITIALIZE, headers={**headers, **MCP_HEADERS}))
        assert not answers
        building.opened.set()
        thread.join(BOUND)
        assert answers and answers[0].status_code == 200 and "serverInfo" in answers[0].text


def test_a_vault_let_go_while_its_mcp_endpoint_is_built_closes_without_waiting_for_it(hashing_example: Path,
                                                                                      monkeypatch):
    monkeypatch.setattr(process, "MCP_AFTER_SECONDS", 0.0)
    building = hold(monkeypatch, ServedVault, "build_mcp")
    with served(hashing_example) as (http, headers):
        assert building.reached.wait(BOUND)
        thread, answers = in_thread(lambda: http.post("/api/close", headers=headers))  # the folder was deleted, say
        thread.join(BOUND)
        building.opened.set()
        assert answers and answers[0].json() == {"closed": True}
    assert not lock_held(hashing_example / VAULT_LOCK)  # the vault was let go: another process may serve it


def test_a_prompt_that_comes_while_its_vault_opens_waits_for_it_and_gets_context(hashing_example: Path, monkeypatch):
    opening = hold(monkeypatch, process, "open_vault")
    asked = threading.Event()
    slot = process.UserServer._slot

    async def noticed_slot(self: process.UserServer, root: Path, wait: bool, within: float = 0.0) -> Any:
        if not wait:
            asked.set()  # a hook's request reached the server
        return await slot(self, root, wait, within)

    monkeypatch.setattr(process.UserServer, "_slot", noticed_slot)
    monkeypatch.setattr(process, "HOOK_OPEN_WAIT_SECONDS", BOUND)  # the vault opens while the hook waits
    with served(hashing_example) as (http, headers):
        assert opening.reached.wait(BOUND)
        thread, answers = in_thread(lambda: http.post("/api/hook/prompt", json=prompt_event("s-1"), headers=headers))
        assert asked.wait(BOUND)
        opening.opened.set()
        thread.join(BOUND)
        assert answers and answers[0].status_code == 200 and "m-a4c81f63" in answers[0].json()["shown"]


def test_a_hook_is_told_opening_within_its_bound_when_the_vault_takes_longer(hashing_example: Path, monkeypatch):
    opening = hold(monkeypatch, process, "open_vault")
    with served(hashing_example) as (http, headers):
        assert opening.reached.wait(BOUND)
        answer = http.post("/api/hook/prompt", json=prompt_event("s-1"), headers=headers)  # answered, gate still shut
        opening.opened.set()
    assert answer.status_code == process.OPENING and "is opening" in answer.json()["error"]["message"]
    # The hook itself gives up after its timeout: the server's wait leaves it room for an answer.
    assert process.HOOK_OPEN_WAIT_SECONDS < hooks.TIMEOUTS["prompt"]


def test_an_exchange_its_hooks_could_not_spool_while_the_vault_opened_is_captured_once_it_is_open(
        hashing_example: Path, monkeypatch):
    """The disk was full: the hooks handed their events over unspooled, and were told "opening". The events were
    lost there (the open drains only the spool); the server now keeps them for the open, in their order."""
    monkeypatch.setattr(process, "HOOK_OPEN_WAIT_SECONDS", 0.0)
    opening = hold(monkeypatch, process, "open_vault")
    base = {"session_id": "s-full", "cwd": str(hashing_example.parent)}
    with served(hashing_example) as (http, headers):
        assert opening.reached.wait(BOUND)
        asked = http.post("/api/hook/prompt", json={**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT},
                          headers=headers)
        answered = http.post("/api/hook/stop", json={**base, "hook_event_name": "Stop", "stop_hook_active": False,
                                                     "last_assistant_message": "Idempotent tasks first."},
                             headers=headers)
        assert asked.status_code == answered.status_code == process.OPENING
        opening.opened.set()
        wait_for(lambda: exchanges(hashing_example) == [f"Exchange: {PROMPT}"], BOUND)
    [exchange] = [m for m in Vault(hashing_example).scan().memories if m.title == f"Exchange: {PROMPT}"]
    assert "Idempotent tasks first." in exchange.body


def test_an_unspooled_event_whose_hook_gave_up_while_the_vault_opened_is_still_captured(hashing_example: Path,
                                                                                       monkeypatch):
    """The disk was full and the hook, having waited for this server to start, left while the server waited for the
    vault to open. A request's body is not delivered once its client has gone (uvicorn then says "disconnect"), so
    the body is read before that wait: the event, which has no other copy, is kept for the open."""
    opening = hold(monkeypatch, process, "open_vault")
    waiting = threading.Event()
    slot = process.UserServer._slot

    async def noticed_slot(self: process.UserServer, root: Path, wait: bool, within: float = 0.0) -> Any:
        if not wait:
            waiting.set()  # the hook's request waits for the open: its client leaves now
        return await slot(self, root, wait, within)

    monkeypatch.setattr(process.UserServer, "_slot", noticed_slot)
    monkeypatch.setattr(process, "HOOK_OPEN_WAIT_SECONDS", 0.0)
    event = {"session_id": "s-full", "cwd": str(hashing_example.parent), "hook_event_name": "UserPromptSubmit",
             "prompt": PROMPT}

    async def receive() -> dict[str, Any]:  # as uvicorn delivers a body: only while its client is there
        if waiting.is_set():
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": json.dumps(event).encode(), "more_body": False}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with served(hashing_example) as (http, headers):
        assert opening.reached.wait(BOUND)
        scope = {"type": "http", "http_version": "1.1", "method": "POST", "scheme": "http", "path": "/api/hook/prompt",
                 "raw_path": b"/api/hook/prompt", "root_path": "", "query_string": b"",
                 "server": ("127.0.0.1", PORT), "client": ("127.0.0.1", 50000),
                 "headers": [(k.lower().encode(), v.encode()) for k, v in
                             {**headers, "Host": f"127.0.0.1:{PORT}", "Content-Type": "application/json"}.items()]}
        http.portal.call(http.app, scope, receive, send)
        assert sent[0]["status"] == process.OPENING
        opening.opened.set()
        assert http.post("/api/hook/stop", json={**event, "hook_event_name": "Stop", "stop_hook_active": False,
                                                 "last_assistant_message": "Idempotent tasks first."},
                         headers=headers).status_code in (200, process.OPENING)  # kept too while it still opens
        wait_for(lambda: exchanges(hashing_example) == [f"Exchange: {PROMPT}"], BOUND)


def held_in_replay(monkeypatch: pytest.MonkeyPatch) -> Gate:
    """The first replay of the spool (a cold start's) held at a gate, with the replay's lock taken."""
    gate, step, first = Gate(), HookHandler._replay, threading.Lock()

    def held(self: HookHandler, *args: Any) -> Any:
        if first.acquire(blocking=False):
            gate.hold()
        return step(self, *args)

    monkeypatch.setattr(HookHandler, "_replay", held)
    return gate


def spooled_turn(root: Path, session: str) -> None:
    """A turn whose hooks found no server: its prompt and Stop wait in the spool."""
    base = {"session_id": session, "cwd": str(root.parent), "client": "claude-code"}
    hooks.spool(root, "prompt", {**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT})
    hooks.spool(root, "stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                               "last_assistant_message": "Idempotent tasks first."})


def test_a_prompt_that_comes_while_a_cold_start_applies_the_spool_is_answered_with_context(hashing_example: Path,
                                                                                          monkeypatch):
    """Nine sessions' events spooled while no server ran were applied inside the vault's open: every prompt
    meanwhile (1.3 s at load 2, seconds more under load) was told "opening" and got nothing. The vault is now served
    first and the spool applied beside its requests: a prompt that comes meanwhile, of a session whose earlier turn
    still waits in the spool too, gets its context at once (it does not wait for that drain to end), and its turn is
    opened after that earlier one, in order."""
    monkeypatch.setattr(process, "HOOK_OPEN_WAIT_SECONDS", 0.0)
    monkeypatch.setattr(hooks_server, "EARLIER_WAIT_SECONDS", BOUND)  # a replay of a few events is waited for
    spooled_turn(hashing_example, "s-1")
    replaying = held_in_replay(monkeypatch)
    with served(hashing_example) as (http, headers):
        try:
            assert replaying.reached.wait(BOUND)
            fresh = http.post("/api/hook/prompt", json=prompt_event("s-2"), headers=headers)
            assert fresh.status_code == 200 and "m-a4c81f63" in fresh.json()["shown"]
            event = {**prompt_event("s-1"), "client": "claude-code"}
            asked, answers = in_thread(lambda: http.post(
                "/api/hook/prompt", json={**event, "spool": hooks.spool(hashing_example, "prompt", event)},
                headers=headers))
            asked.join(BOUND / 2)  # behind the open's drain it does not wait for the spool (EARLIER_WAIT_SECONDS)
            assert answers and answers[0].status_code == 200 and "m-a4c81f63" in answers[0].json()["shown"]
        finally:
            replaying.opened.set()
        # The spooled turn first (its exchange), then the live prompt's turn, which records what its answer showed.
        wait_for(lambda: turn_log(hashing_example, "s-1") == [("exchange", 1), ("prompt", 2)], BOUND)
    assert exchanges(hashing_example) == [f"Exchange: {PROMPT}"]


def turn_log(root: Path, session: str) -> list[tuple[str, int]]:
    log = root / ".memdir" / "turns.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [(line["kind"], line["turn"]) for line in lines if line["session"] == session]


def exchanges(root: Path) -> list[str]:
    return [m.title for m in Vault(root).scan().memories if m.collection == "working" and m.type == "history"]


def test_a_prompt_whose_spooled_event_a_drain_applied_first_still_gets_its_context(hashing_example: Path):
    app = App(hashing_example, defer_embedding=True)
    try:
        handler = HookHandler(MemoryService(app))
        event = {**prompt_event("s-1"), "client": "claude-code"}
        name = hooks.spool(hashing_example, "prompt", event)
        assert handler.drain(spooled_before=time.time_ns()) == 1  # the vault opened: the spool is applied
        answer = handler.prompt({**event, "spool": name})  # then the request, which waited meanwhile, arrives
        assert "m-a4c81f63" in answer["shown"] and "KNOWN CONTEXT" in answer["additionalContext"]
        session = handler.service.sessions.load("s-1")
        assert session.turn == 1 and "m-a4c81f63" in session.turn_shown  # one turn, started by the drain
    finally:
        app.close()


def test_an_unspooled_event_that_comes_while_its_vault_is_let_go_is_kept_for_its_next_open(
        hashing_example: Path, hashing_root: Path, monkeypatch):
    """The disk was full and a prompt came while the server let its vault go (idle, or memdir stop --vault): the
    request waits for the close, then for the vault to open again, and is told "opening". Its event, which has no
    other copy, is kept for that open as one that came while the vault first opened is."""
    monkeypatch.setattr(process, "HOOK_OPEN_WAIT_SECONDS", 0.0)
    user = process.UserServer()
    user.port = PORT

    def named(root: Path) -> dict[str, str]:
        return {"Authorization": f"Bearer {user.token}", VAULT_HEADER: quote(str(root.resolve()))}

    base = {"session_id": "s-full", "cwd": str(hashing_example.parent)}
    waiting = threading.Event()
    slot = process.UserServer._slot

    async def noticed_slot(self: process.UserServer, root: Path, wait: bool, within: float = 0.0) -> Any:
        if not wait:
            waiting.set()  # the hook's request looks for its vault: it finds it closing and waits for the close
        return await slot(self, root, wait, within)

    with TestClient(user._asgi(hashing_example.resolve()), base_url=f"http://127.0.0.1:{PORT}") as http:
        for root in (hashing_example, hashing_root):  # two vaults: letting one go leaves the server up
            search = {"op": "search", "args": {"query": PROMPT, "limit": 5}}
            assert http.post("/api/op", json=search, headers=named(root)).status_code == 200
        closing = hold(monkeypatch, ServedVault, "close")
        in_thread(lambda: http.post("/api/close", headers=named(hashing_example)))
        assert closing.reached.wait(BOUND)
        monkeypatch.setattr(process.UserServer, "_slot", noticed_slot)
        asked, answers = in_thread(lambda: http.post(
            "/api/hook/prompt", json={**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT},
            headers=named(hashing_example)))
        assert waiting.wait(BOUND)
        opening = hold(monkeypatch, process, "open_vault")
        closing.opened.set()
        assert opening.reached.wait(BOUND)
        asked.join(BOUND)
        assert answers[0].status_code == process.OPENING
        answered = http.post("/api/hook/stop", json={**base, "hook_event_name": "Stop", "stop_hook_active": False,
                                                     "last_assistant_message": "Idempotent tasks first."},
                             headers=named(hashing_example))
        assert answered.status_code == process.OPENING
        opening.opened.set()
        wait_for(lambda: exchanges(hashing_example) == [f"Exchange: {PROMPT}"], BOUND)


def test_a_server_exiting_while_a_vault_waits_for_another_process_to_build_its_index_stops_waiting(
        hashing_root: Path, monkeypatch):
    """A vault whose first index another process is building (a `memdir reindex`, a command on a fresh vault) is
    waited for in its open, up to BUILD_WAIT_SECONDS (120 s); the server's exit waits for the open to end, so a
    stop at that moment took the whole wait. The exit calls the open off."""
    from indexer.generations import Layout

    building = Layout(hashing_root).try_own()  # the other process: owns the index and has no generation yet
    assert building is not None
    waiting, await_build = threading.Event(), Layout.await_build

    def noticed(self: Layout, *args: Any, **kwargs: Any) -> Any:
        waiting.set()
        return await_build(self, *args, **kwargs)

    monkeypatch.setattr(Layout, "await_build", noticed)
    exited = threading.Event()

    def serve_and_exit() -> None:
        with served(hashing_root):
            assert waiting.wait(BOUND), "the open waits for the other process's build"
        exited.set()

    try:
        threading.Thread(target=serve_and_exit, daemon=True).start()
        assert waiting.wait(BOUND)
        assert exited.wait(10), "the server exits without waiting out the other process's build"
    finally:
        building.release()
    assert not lock_held(hashing_root / VAULT_LOCK)


def test_a_vault_without_any_index_does_not_start_the_embedding_host_while_it_opens(example_root: Path,
                                                                                   monkeypatch):
    """A fresh vault's first build leaves every vector to the backfill, which starts the host when it first asks;
    started at the open, the host's ~1 CPU s of imports and model load ran beside a cold server's first answers.
    A vault with an index still starts it while its indices open: its prompts want their queries' vectors."""
    from mcp_server.config import load_config
    from mcp_server.embedding.host import SharedEmbedder

    warmed: list[bool] = []
    monkeypatch.setattr(SharedEmbedder, "warm", lambda self: warmed.append(True))
    config = load_config(example_root)
    user = process.UserServer()
    assert user._embedder_for(config, example_root) is not None and warmed == []
    generation = example_root / ".memdir" / "index" / "gen-1"
    generation.mkdir(parents=True)
    (generation / "meta.json").write_text("{}")
    (generation.parent / "CURRENT").write_text("gen-1\n")
    assert user._embedder_for(config, example_root) is not None and warmed == [True]
