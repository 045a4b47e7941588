"""Hook events that no request delivers are applied by the server on its own, without waiting for another event."""

from __future__ import annotations

import time
from pathlib import Path

from mcp_server.clients.hooks import spool
from mcp_server.server.served import open_vault
from vault import Vault

SESSION = "0d9c1e2f-spool-drain"


def exchange(root: Path, prompt: str, answer: str) -> None:
    """What the prompt and Stop hooks leave in the spool when their requests were told "opening"."""
    base = {"session_id": SESSION, "cwd": str(root.parent)}
    spool(root, "prompt", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    spool(root, "stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                         "last_assistant_message": answer})


def exchanges(root: Path) -> list[str]:
    return [m.title for m in Vault(root).scan().memories if m.collection == "working" and m.type == "history"]


def test_events_spooled_after_the_vault_opened_are_applied_by_the_timer_without_another_event(hashing_example: Path):
    served = open_vault(hashing_example, lambda config: None)
    try:
        exchange(hashing_example, "why is the deploy slow", "The image is rebuilt each time.")
        deadline = time.monotonic() + 30
        while not exchanges(hashing_example):
            assert time.monotonic() < deadline, "the spool was never drained"
            served.drainer.ran.clear()
            served.drainer.ran.wait(deadline - time.monotonic())  # each pass of the server's own spool timer
        assert exchanges(hashing_example) == ["Exchange: why is the deploy slow"]
        assert not list((hashing_example / ".memdir" / "spool").glob("*.json"))
    finally:
        served.close()


def test_events_spooled_while_the_vault_opened_are_applied_the_moment_it_is_open(hashing_example: Path):
    served = open_vault(hashing_example, lambda config: None)
    try:
        exchange(hashing_example, "where are the celery retries", "In tasks/retry.py.")  # told "opening" a moment ago
        assert served.drain_spool(time.time_ns()) == 2  # what the server does as soon as the vault is ready
        assert exchanges(hashing_example) == ["Exchange: where are the celery retries"]
    finally:
        served.close()
