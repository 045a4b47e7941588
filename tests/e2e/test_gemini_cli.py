"""memdir inside the real Gemini CLI: `gemini -p` headless against a loopback fake of the Gemini API.

Set up as a user would: `memdir init --client gemini` in a project, the folder trusted the way Gemini
CLI's trust dialog records it (~/.gemini/trustedFolders.json). Two turns: the memories reach the model
through the BeforeAgent hook, the model calls memdir's search_memory and gets its answer, the AfterAgent
hook captures the exchange, and on the resumed session's next turn the model is asked for scores and
score_memories writes them to the memory's file.

Run: `.venv/bin/python -m pytest tests/e2e/test_gemini_cli.py -m e2e` (needs node and npm).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcp_server import client

from .claude_code import Unavailable, npm_binary
from .fake_gemini import FakeGemini, texts, tool_names
from .test_claude_code import MEMDIR, PROVEN, _poll, checkout, example_project, exchanges

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
PINNED = "0.61.0"
VERSION = os.environ.get("MEMDIR_E2E_GEMINI_VERSION", PINNED)
SEARCH, SCORE = "mcp_memdir_search_memory", "mcp_memdir_score_memories"


class Model:
    """The scripted model: search on the first question, score when asked, otherwise answer."""

    def __init__(self) -> None:
        self.called: list[str] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if "read_file" not in tool_names(request):
            return {"text": '{"complexity_reasoning": "simple", "complexity_score": 10}'}  # a side request
        last = request["contents"][-1]
        answering_a_tool = any("functionResponse" in part for part in last.get("parts", []))
        latest = " ".join(p.get("text", "") for p in last.get("parts", []))
        if "memdir-score-required" in latest and SCORE not in self.called:
            return self._call(SCORE, {"outcome": "worked", "memory_scores": {PROVEN: "worked"}})
        if "celery retries" in latest and not answering_a_tool:
            return self._call(SEARCH, {"query": "celery retries idempotent"})
        return {"text": "Make the task idempotent first, then retry with backoff; acks_late keeps it safe."}

    def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.called.append(tool)
        return {"tool": tool, "input": arguments}


@pytest.fixture
def gemini() -> Path:
    try:
        return npm_binary("@google/gemini-cli", VERSION, "gemini", f"gemini-cli-{VERSION}")
    except Unavailable as exc:
        pytest.skip(f"real Gemini CLI {VERSION} unavailable: {exc}")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: Any) -> Any:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))  # this test and Gemini CLI's hooks: one user, one memdir server
    project = example_project(tmp_path / "tidewater")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **checkout()}  # no memdir on PATH
    init = subprocess.run([str(MEMDIR), "init", "--client", "gemini"], cwd=project, env=env, check=True,
                          capture_output=True, text=True)
    assert "Trust folder" in init.stdout and "gemini` was not found" in init.stdout
    user_settings(home, project)
    warm(project / ".memories")  # as after the first session
    return project, env


def user_settings(home: Path, project: Path) -> None:
    """What the user's own login and Gemini CLI's trust dialog record. Usage statistics off, as a user may
    choose: with them on, every start probes the GPU (lspci, clinfo, xrandr) and looks up Google's
    telemetry host, neither of which concerns memdir."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                                                "privacy": {"usageStatisticsEnabled": False}}))
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))


# Gemini CLI loads its 16 MB bundle, then starts node again with a larger heap and loads it a second time:
# half of each start's CPU (`gemini --version` 2.8 -> 1.4 s). A short headless turn needs no larger heap.
ONE_PROCESS = {"GEMINI_CLI_NO_RELAUNCH": "true"}


def run(gemini: Path, project: Path, env: dict[str, str], fake: FakeGemini, prompt: str, *flags: str) -> str:
    result = subprocess.run([str(gemini), "-p", prompt, "-m", "gemini-2.5-flash", "--output-format", "text", *flags],
                            cwd=project, capture_output=True, timeout=240,
                            env={**env, **ONE_PROCESS, "GOOGLE_GEMINI_BASE_URL": fake.url, "GEMINI_API_KEY": "test-key"})
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    return result.stdout.decode()


def test_memdir_works_inside_the_real_gemini_cli_headless(gemini: Path, project: Any):
    project, env = project
    vault = project / ".memories"
    model = Model()
    with FakeGemini(model) as fake:
        answer = run(gemini, project, env, fake, "how do we make celery retries safe")
        assert "idempotent" in answer, [tool_names(r) for r in fake.requests]
        conversation = [r for r in fake.requests if "read_file" in tool_names(r)]
        first = texts(conversation[0])
        assert "memdir memory vault:" in first  # the SessionStart orientation
        assert "KNOWN CONTEXT" in first and f"[id:{PROVEN}]" in first  # BeforeAgent's per-turn context
        for tool in ("search_memory", "score_memories", "read_memory", "add_to_memory_bank"):
            assert f"mcp_memdir_{tool}" in tool_names(conversation[0])
        assert model.called == [SEARCH]
        answered = next(r for r in conversation if "functionResponse" in json.dumps(r["contents"][-1]))
        assert PROVEN in texts(answered)  # the tool ran without a confirmation and its answer reached the model
        client.ensure(vault)
        assert _poll(lambda: exchanges(vault) == ["Exchange: how do we make celery retries safe"]), exchanges(vault)

        before = (vault / "patterns" / "retry-celery-tasks-idempotently.md").read_text()
        run(gemini, project, env, fake, "and the visibility timeout?", "--resume", "latest")
        # Gemini CLI escapes markup inside a hook's context: the model reads &lt;memdir-score-required&gt;
        asked = [r for r in fake.requests if "&lt;memdir-score-required&gt;" in texts(r)]
        assert asked and PROVEN in texts(asked[0])
        assert SCORE in model.called
        after = (vault / "patterns" / "retry-celery-tasks-idempotently.md").read_text()
        changed = [line for line in after.splitlines() if line not in before.splitlines()]
        assert changed and all(line.split(":")[0] in ("score", "uses", "success_count", "outcomes", "last_used_at",
                                                      "last_outcome") for line in changed), changed
        assert _poll(lambda: len(exchanges(vault)) == 2), exchanges(vault)

