"""Acknowledgements and scoring-only turns are not captured as exchanges."""

from __future__ import annotations

import pytest

from mcp_server.clients.hooks_server import HookHandler
from mcp_server.clients.trivial import is_trivial_exchange


@pytest.mark.parametrize("prompt, answer", [
    ("Thanks, that worked!", "Glad it helped."),
    ("ok great", "Anything else?"),
    ("perfect, thank you so much", ""),
    ("That did the trick 👍", "Great."),
    ("continue", "Scored the memories: m-a4c81f63 worked."),
    ("", "I called score_memories for the two memories shown."),
])
def test_acknowledgements_and_scoring_turns_are_trivial(prompt: str, answer: str):
    assert is_trivial_exchange(prompt, answer)


@pytest.mark.parametrize("prompt, answer", [
    ("thanks, now fix the login timeout", "Raised the session timeout to 30 minutes in auth/settings.py."),
    ("why did the deploy fail?", "The migration locked the ledger table; run it with lock_timeout."),
    ("how do we score memories in the ranking?", "Scores come from outcomes: worked raises, failed lowers. " * 6),
    ("ok", "Here is the full plan for the billing refactor: split invoices from payments, " * 5),
])
def test_turns_with_content_are_not_trivial(prompt: str, answer: str):
    assert not is_trivial_exchange(prompt, answer)


def test_the_stop_hook_does_not_store_a_thank_you_turn(service):
    handler = HookHandler(service)
    base = {"session_id": "s-thanks", "cwd": str(service.app.root)}
    handler.prompt({**base, "prompt": "how do we make celery retries safe"})
    assert handler.stop({**base, "last_assistant_message": "Make tasks idempotent, then retry."})["stored"]
    handler.prompt({**base, "prompt": "Thanks, that worked"})
    assert handler.stop({**base, "last_assistant_message": "Scored the memories."})["stored"] is None
    titles = [m.title for m in service.app.project.vault.scan().memories if m.type == "history" and m.collection == "working"]
    assert titles == ["Exchange: how do we make celery retries safe"]
