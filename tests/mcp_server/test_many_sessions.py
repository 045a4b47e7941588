"""Many sessions on one vault while the model is not there to answer (a host starting, a first index build):
prompts still get context from the keyword channel, and every capture is applied without a model call."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from indexer.embed import HashingEmbedder
from indexer.search import SearchRequest
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from vault import Vault

GATE_SECONDS = 30.0  # a bound, never reached when the code under test does not call the model


class StalledModel(HashingEmbedder):
    """The hashing embedder behind a gate that stays shut until the test opens it: a model host that is
    starting, or busy with a first index build. A call made while it is shut is counted."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.calls_while_shut = 0

    def _wait(self) -> None:
        if not self.gate.is_set():
            self.calls_while_shut += 1
            if not self.gate.wait(GATE_SECONDS):
                raise TimeoutError("the model was asked while it could not answer")

    def embed(self, texts):
        self._wait()
        return super().embed(texts)

    def embed_query(self, text):
        self._wait()
        return super().embed_query(text)


@pytest.fixture
def stalled(hashing_example: Path):
    model = StalledModel()
    app = App(hashing_example, embedder=model, defer_embedding=True)  # as the server opens a vault
    yield MemoryService(app), model
    model.gate.set()
    app.close()


def prompt_event(session: str, text: str) -> dict:
    return {"session_id": session, "prompt": text, "hook_event_name": "UserPromptSubmit"}


def stop_event(session: str, answer: str) -> dict:
    return {"session_id": session, "stop_hook_active": False, "hook_event_name": "Stop", "last_assistant_message": answer}


def test_a_prompt_during_the_first_index_build_gets_keyword_context(stalled):
    service, model = stalled
    assert service.app.index.unembedded  # the first build left every vector for the backfill
    answer = HookHandler(service).prompt(prompt_event("s-1", "how do we make celery retries safe"))
    assert "KNOWN CONTEXT" in answer["additionalContext"] and "m-a4c81f63" in answer["shown"]


def test_captures_under_9_concurrent_sessions_are_all_applied_without_a_model_call(stalled):
    service, model = stalled
    handler = HookHandler(service)
    failures: list[BaseException] = []

    def session(number: int) -> None:
        try:
            for turn in range(3):
                sid = f"s-{number}"
                handler.prompt(prompt_event(sid, f"session {number} turn {turn}: how do we make celery retries safe"))
                handler.stop(stop_event(sid, f"Session {number} turn {turn}: made the task idempotent in module_{number}_{turn}."))
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failures.append(exc)

    threads = [threading.Thread(target=session, args=(n,)) for n in range(9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(GATE_SECONDS * 2)
    assert failures == [] and not any(t.is_alive() for t in threads)
    exchanges = [m for m in Vault(service.app.root).scan().memories if m.collection == "working" and m.type == "history"]
    assert len(exchanges) == 27 and len({m.frontmatter.get("session") for m in exchanges}) == 9
    assert service.hits(SearchRequest(query="module_4_2", mode="keyword", limit=3))[0].memory.body.count("module_4_2")
    model.gate.set()
    while service.app.index.backfill(limit=256):
        pass
    assert not service.app.index.unembedded  # the backfill gave the captures their vectors
