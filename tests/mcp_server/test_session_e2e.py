"""A scripted five-turn Claude Code session: hooks and MCP tool calls as real processes, the model
played by the test. What memdir promises here: shown memories get scored next turn, scores land
in the files, a memory that misled three times stops being injected, and every exchange is kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import memory_text, write
from vault import Vault

from .processes import hook, hook_context, start_server, stdio, stop_all

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SESSION = "0b6c2a8e-3f1d-4c5a-9e7b-2d4f6a8c0e1f"
MISLEADING = "m-badc0ffe"
HELPFUL = "m-a4c81f63"  # patterns/retry-celery-tasks-idempotently.md
QUESTION = "how do we make celery task retries safe"


@pytest.fixture
def vault_with_a_bad_tip(hashing_example: Path):
    write(hashing_example, "patterns/celery-retries-just-raise-max.md", memory_text(
        MISLEADING, "Celery task retries are safe if you raise max_retries", collection="patterns",
        body="To make celery task retries safe, raise max_retries to 100; celery retries are always safe."))
    process = start_server(hashing_example)
    yield hashing_example
    stop_all(hashing_example, process)


def on_prompt(root: Path, prompt: str) -> str:
    event = {"session_id": SESSION, "cwd": str(root.parent), "hook_event_name": "UserPromptSubmit", "prompt": prompt,
             "transcript_path": "/dev/null", "permission_mode": "default"}
    return hook_context(hook("prompt", event, "--vault", str(root)))


def on_stop(root: Path, answer: str) -> None:
    event = {"session_id": SESSION, "cwd": str(root.parent), "hook_event_name": "Stop", "stop_hook_active": False,
             "last_assistant_message": answer, "transcript_path": "/dev/null", "permission_mode": "default"}
    assert hook_context(hook("stop", event, "--vault", str(root))) == ""


def asked_to_score(context: str) -> list[str]:
    request = re.search(r"score_memories\(outcome=.*?memory_scores=\{(.*?)\}\)", context)
    return re.findall(r'"(m-[0-9a-f]{8})": "___"', request.group(1)) if request else []


def injected(context: str) -> list[str]:
    block = context.split("═══ KNOWN CONTEXT ═══", 1)[-1] if "═══ KNOWN CONTEXT ═══" in context else ""
    return re.findall(r"\[id:(m-[0-9a-f]{8})\]", block)


def counters(root: Path, memory_id: str) -> tuple[int, int, float]:
    memory = next(m for m in Vault(root).scan().memories if m.id == memory_id)
    return memory.uses, memory.success_count, memory.score


async def test_a_five_turn_session_learns_from_its_scores(vault_with_a_bad_tip: Path):
    root = vault_with_a_bad_tip
    helpful_before = counters(root, HELPFUL)
    injections: list[list[str]] = []
    async with stdio(root) as model:
        for turn in range(1, 6):
            context = on_prompt(root, QUESTION if turn != 2 else f"{QUESTION}, and what about backoff")
            injections.append(injected(context))
            pending = asked_to_score(context)
            if turn == 1:
                assert pending == [] and MISLEADING in injections[0] and HELPFUL in injections[0]
            else:
                assert pending, f"turn {turn} did not ask for scores"
                scores = {i: "unknown" for i in pending}
                scores.update({i: outcome for i, outcome in ((HELPFUL, "worked"), (MISLEADING, "failed")) if i in pending})
                result = await model.call_tool("score_memories", {"outcome": "worked", "memory_scores": scores})
                assert not result.is_error, result.content
            found = await model.call_tool("search_memory", {"query": "celery visibility timeout", "limit": 2})
            assert not found.is_error
            on_stop(root, f"Turn {turn}: make the task idempotent, then add retries with backoff.")

    failures, _, bad_score = counters(root, MISLEADING)
    assert 1 <= failures <= 3 and bad_score < 0.5  # scored `failed` each turn it was shown, then dropped
    assert all(MISLEADING not in shown for shown in injections[failures:]), "a memory that misled is still injected"
    uses, successes, score = counters(root, HELPFUL)
    assert uses > helpful_before[0] and successes > helpful_before[1] and score >= helpful_before[2]

    exchanges = [m for m in Vault(root).scan().memories if m.collection == "working" and m.type == "history"]
    after = {m.frontmatter.get("previous"): m for m in exchanges}
    chain = [after[None]]  # the first exchange names no previous one; each next names the one before
    while chain[-1].id in after:
        chain.append(after[chain[-1].id])
    assert [m.body.split("Assistant: ")[1].split(":")[0] for m in chain] == [f"Turn {n}" for n in range(1, 6)]
    scored_exchanges = [m for m in chain[:-1] if m.uses]  # outcome="worked" scored each previous exchange
    assert scored_exchanges, "the session's exchanges were never scored through score_memories(outcome=...)"
