"""The scoring request names score_memories the way the asking assistant names MCP tools: Claude Code's
ToolSearch only for Claude Code; Gemini CLI, Codex and OpenCode get their own names."""

from __future__ import annotations

import pytest

from mcp_server.clients.context import scoring_request

from .processes import hook, hook_context
from .test_hooks import event, server, stop  # noqa: F401 (fixture)


@pytest.mark.parametrize("client, named, not_named", [
    ("claude-code", 'ToolSearch "select:mcp__memdir__score_memories"', "mcp_memdir_"),
    ("gemini", "mcp_memdir_score_memories", "ToolSearch"),
    ("codex", "score_memories in the mcp__memdir namespace", "ToolSearch"),
    ("opencode", "memdir_score_memories", "ToolSearch"),
])
def test_the_scoring_request_names_the_tool_as_each_client_does(client: str, named: str, not_named: str):
    text = scoring_request(["m-1"], client=client)
    assert named in text and not_named not in text


def test_a_hook_called_for_opencode_gets_opencodes_tool_name_in_the_next_turns_request(server):
    def prompt(text: str) -> str:
        return hook_context(hook("prompt", event(server, "UserPromptSubmit", prompt=text),
                                 "--vault", str(server), "--client", "opencode"))

    prompt("how do we make celery retries safe")
    stop(server, "Make the task idempotent first, then add retries with backoff.")
    scoring = prompt("and what about the visibility timeout").split("KNOWN CONTEXT from memdir")[0]
    assert "<memdir-score-required>" in scoring and "memdir_score_memories" in scoring
    assert "ToolSearch" not in scoring


def test_an_unknown_client_name_is_refused_with_the_usage_and_the_prompt_goes_through(server):
    result = hook("prompt", event(server, "UserPromptSubmit", prompt="x"), "--vault", str(server), "--client", "vim")
    assert result.returncode == 0 and not result.stdout.strip() and b"usage:" in result.stderr
