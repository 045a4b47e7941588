"""One vault, two assistants in the same project: what Codex captured, Gemini CLI is shown and scores.

`memdir init --client codex --client gemini` in one project. A Codex turn (real `codex exec`, fake
Responses API) is captured as an exchange; a Gemini CLI turn (real `gemini -p`, fake Gemini API) on the
same subject gets that exchange in its KNOWN CONTEXT, and on its next turn scores it into the file.

Run: `.venv/bin/python -m pytest tests/e2e/test_one_vault_two_clients.py -m e2e` (needs node and npm).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from vault import Vault

from . import test_codex, test_gemini_cli
from .claude_code import Unavailable, npm_binary
from .fake_gemini import FakeGemini, texts
from .fake_responses import FakeResponses
from .test_claude_code import MEMDIR, _poll, checkout, example_project, exchanges

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
QUESTION = "how do we make celery retries safe"


@pytest.fixture
def binaries() -> tuple[Path, Path]:
    try:
        return (npm_binary("@openai/codex", test_codex.VERSION, "codex", f"codex-{test_codex.VERSION}"),
                npm_binary("@google/gemini-cli", test_gemini_cli.VERSION, "gemini", f"gemini-cli-{test_gemini_cli.VERSION}"))
    except Unavailable as exc:
        pytest.skip(f"real Codex or Gemini CLI unavailable: {exc}")


class GeminiScorer:
    """Gemini's scripted model: answers, and scores the memory it was asked about on the next turn."""

    def __init__(self) -> None:
        self.exchange_id = ""
        self.scored = False

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        last = request["contents"][-1]
        latest = " ".join(p.get("text", "") for p in last.get("parts", []))
        if "memdir-score-required" in latest and self.exchange_id in latest and not self.scored:
            self.scored = True
            return {"tool": "mcp_memdir_score_memories", "input": {"outcome": "worked",
                                                                   "memory_scores": {self.exchange_id: "worked"}}}
        return {"text": "As we found earlier: make the task idempotent, then retry."}


def test_an_exchange_captured_in_codex_is_shown_to_gemini_and_scored_there(binaries: tuple[Path, Path],
                                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                          warm: Any):
    codex, gemini = binaries
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    project = example_project(tmp_path / "tidewater")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **checkout()}
    subprocess.run([str(MEMDIR), "init", "--client", "codex", "--client", "gemini"], cwd=project, env=env, check=True,
                   capture_output=True)
    test_gemini_cli.user_settings(home, project)
    vault = project / ".memories"
    warm(vault)
    with FakeResponses(test_codex.Model()) as fake_codex:
        test_codex.user_config(home, project, fake_codex.url)
        test_codex.run(codex, project, env, QUESTION)
    assert _poll(lambda: exchanges(vault) == [f"Exchange: {QUESTION}"]), exchanges(vault)
    [captured] = [m for m in Vault(vault).scan().memories if m.title == f"Exchange: {QUESTION}"]

    model = GeminiScorer()
    model.exchange_id = captured.id
    with FakeGemini(model) as fake_gemini:
        test_gemini_cli.run(gemini, project, env, fake_gemini, "what did we decide about celery retries?")
        shown = texts(next(r for r in fake_gemini.requests if "memdir-score-required" not in texts(r)
                           and "KNOWN CONTEXT" in texts(r)))
        assert f"[id:{captured.id}]" in shown  # Codex's exchange, in Gemini's KNOWN CONTEXT
        test_gemini_cli.run(gemini, project, env, fake_gemini, "and the visibility timeout?", "--resume", "latest")
    assert model.scored
    [after] = [m for m in Vault(vault).scan().memories if m.id == captured.id]
    assert after.uses == captured.uses + 1 and after.last_outcome == "worked", (captured, after)
