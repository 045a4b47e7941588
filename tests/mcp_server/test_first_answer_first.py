"""A served vault's first answer comes before its MCP endpoint: the endpoint is built after the first search is
answered (or at an MCP request, or after its bound), so at 100k memories the MCP SDK's import does not take the CPU
the first answer needs (bench/results/first-answer.md, issue 32 item 5, session 8 `first100k`)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mcp_server.server import process
from mcp_server.server.served import ServedVault

from .test_cold_start import BOUND, INITIALIZE, MCP_HEADERS, PROMPT, served

SEARCH = {"op": "search", "args": {"query": PROMPT, "limit": 5}}


def observe(monkeypatch: pytest.MonkeyPatch, name: str) -> tuple[threading.Event, list[bool]]:
    """`ServedVault.name` records whether a search had been answered when it began, and says it began."""
    began, answered, step = threading.Event(), [], getattr(ServedVault, name)

    def observed(self: ServedVault, *args: Any) -> Any:
        answered.append(self.app.index.answered.is_set())
        began.set()
        return step(self, *args)

    monkeypatch.setattr(ServedVault, name, observed)
    return began, answered


@pytest.fixture
def no_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound longer than any test: only an answer or a request has the endpoint built."""
    monkeypatch.setattr(process, "MCP_AFTER_SECONDS", 600.0, raising=False)


def test_the_mcp_endpoint_is_built_after_the_first_answer_not_beside_it(hashing_example: Path, monkeypatch, no_bound):
    built, answered = observe(monkeypatch, "build_mcp")
    with served(hashing_example) as (http, headers):
        answer = http.post("/api/op", json=SEARCH, headers=headers)
        assert answer.status_code == 200 and answer.json()["result"]["results"]
        assert built.wait(BOUND), "the endpoint was not built after the first answer"
        assert answered == [True]
        reply = http.post("/mcp", json=INITIALIZE, headers={**headers, **MCP_HEADERS})
        assert reply.status_code == 200 and "serverInfo" in reply.text


def test_an_mcp_request_before_any_answer_has_its_endpoint_built_at_once(hashing_example: Path, monkeypatch, no_bound):
    built, answered = observe(monkeypatch, "build_mcp")
    with served(hashing_example) as (http, headers):
        reply = http.post("/mcp", json=INITIALIZE, headers={**headers, **MCP_HEADERS})  # waits for it, not the bound
        assert reply.status_code == 200 and "serverInfo" in reply.text
        assert answered == [False]


def test_a_vault_let_go_before_its_first_answer_builds_no_endpoint(hashing_example: Path, monkeypatch, no_bound):
    built, built_when = observe(monkeypatch, "build_mcp")
    with served(hashing_example) as (http, headers):
        assert http.post("/api/close", headers=headers).json() == {"closed": True}  # returns without the bound
    assert built_when == []


def test_after_the_first_answer_the_endpoint_waits_for_a_quiet_moment(hashing_example: Path, monkeypatch, no_bound):
    """Built right after the first answer, the endpoint's ~1.5 CPU s came in the middle of a cold start's prompts
    (nine sessions, bench/results/s22-cold22.md): it waits until no request has run for MCP_QUIET_SECONDS."""
    from indexer.in_flight import BUSY

    monkeypatch.setattr(process, "MCP_QUIET_SECONDS", 0.0)
    built, answered = observe(monkeypatch, "build_mcp")
    declined = threading.Event()  # the endpoint was looked at after the first answer, and put off
    due = process._mcp_due

    def noticed(slot: process.Slot) -> bool:
        now = due(slot)
        if not now and slot.vault is not None and slot.vault.answered():
            declined.set()
        return now

    monkeypatch.setattr(process, "_mcp_due", noticed)
    with served(hashing_example) as (http, headers):
        with BUSY.running():  # another session's prompt, still running after the first answer
            assert http.post("/api/op", json=SEARCH, headers=headers).status_code == 200
            assert declined.wait(BOUND)
            assert not built.is_set()
        assert built.wait(BOUND), "the endpoint was not built once the requests had ended"
    assert answered == [True]
