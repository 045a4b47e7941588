"""memdir inside the real Codex CLI: `codex exec` headless against a loopback fake of the Responses API.

Set up as a user would: `memdir init --client codex` in a project, the folder trusted the way Codex
records it (projects."<dir>".trust_level in ~/.codex/config.toml). Codex reviews new hooks in its TUI;
a headless run that vets them passes --dangerously-bypass-hook-trust, as here. Two turns: the memories
reach the model through the UserPromptSubmit hook, the model calls memdir's search_memory and gets its
answer, the Stop hook captures the exchange, and the resumed session's next turn asks for scores, which
score_memories writes to the memory's file.

Run: `.venv/bin/python -m pytest tests/e2e/test_codex.py -m e2e` (needs node and npm).
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
from .fake_responses import FakeResponses, texts, tool_names
from .test_claude_code import MEMDIR, PROVEN, _poll, checkout, example_project, exchanges

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
PINNED = "0.171.0"
VERSION = os.environ.get("MEMDIR_E2E_CODEX_VERSION", PINNED)


class Model:
    """The scripted model: search on the first question, score when asked, otherwise answer."""

    def __init__(self) -> None:
        self.called: list[str] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        names = tool_names(request)
        answering_a_tool = request["input"][-1].get("type") == "function_call_output"
        # The hooks' context arrives as its own input item, next to the prompt: read the turn as a whole.
        seen = texts(request)
        turn = seen.split("and the visibility timeout?")[-1] if "and the visibility timeout?" in seen else ""
        if "<memdir-score-required>" in turn and not answering_a_tool and "mcp__memdir/score_memories" not in self.called:
            return self._call(names, "score_memories", {"outcome": "worked", "memory_scores": {PROVEN: "worked"}})
        if "celery retries" in seen and not answering_a_tool and not self.called:
            return self._call(names, "search_memory", {"query": "celery retries idempotent"})
        return {"text": "Make the task idempotent first, then retry with backoff; acks_late keeps it safe."}

    def _call(self, names: list[str], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        namespace, name = f"mcp__memdir/{tool}".split("/")
        assert f"{namespace}/{name}" in names, names
        self.called.append(f"{namespace}/{name}")
        return {"tool": name, "namespace": namespace, "input": arguments}


@pytest.fixture
def codex() -> Path:
    try:
        return npm_binary("@openai/codex", VERSION, "codex", f"codex-{VERSION}")
    except Unavailable as exc:
        pytest.skip(f"real Codex CLI {VERSION} unavailable: {exc}")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: Any) -> Any:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))  # this test and Codex's hooks: one user, one memdir server
    project = example_project(tmp_path / "tidewater")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)  # Codex trusts projects by their git root
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **checkout()}  # no memdir on PATH
    init = subprocess.run([str(MEMDIR), "init", "--client", "codex"], cwd=project, env=env, check=True,
                          capture_output=True, text=True)
    assert "Hooks need review" in init.stdout and "codex` was not found" in init.stdout
    warm(project / ".memories")  # as after the first session
    return project, env, home


def user_config(home: Path, project: Path, url: str) -> None:
    """The user's own model provider, and the trust Codex records when the user trusts the folder."""
    (home / ".codex" / "config.toml").write_text(
        f'model = "gpt-5"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\nbase_url = "{url}"\n'
        f'env_key = "FAKE_OPENAI_KEY"\nwire_api = "responses"\n\n[projects."{project}"]\ntrust_level = "trusted"\n')


def checkout_code(env: dict[str, str]) -> list[str]:
    """Codex gives `memdir mcp` a short environment without PYTHONPATH (its hooks get all of it): from a
    checkout that precedes the installed memdir (a worktree), the tool calls ran the installed code. The
    checkout is named for this run only (`-c`), not in the project's config."""
    if not env.get("PYTHONPATH"):
        return []
    return ["-c", f"mcp_servers.memdir.env.PYTHONPATH={json.dumps(env['PYTHONPATH'])}"]


def run(codex: Path, project: Path, env: dict[str, str], *args: str) -> str:
    result = subprocess.run([str(codex), "exec", "--dangerously-bypass-hook-trust", *checkout_code(env), *args],
                            cwd=project, capture_output=True, timeout=240, stdin=subprocess.DEVNULL,
                            env={**env, "FAKE_OPENAI_KEY": "test-key"})
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    return result.stdout.decode()


def proxy_pythonpaths(project: Path) -> list[str | None]:
    """PYTHONPATH of each `memdir mcp` running in `project` (the stdio servers Codex started there)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            if b"mcp" not in words or b"--vault" not in words or (entry / "cwd").resolve() != project.resolve():
                continue
            environ = dict(item.split("=", 1) for item in (entry / "environ").read_text(errors="replace").split("\0")
                           if "=" in item)
        except OSError:
            continue
        found.append(environ.get("PYTHONPATH"))
    return found


def test_memdir_works_inside_the_real_codex_cli_headless(codex: Path, project: Any):
    project, env, home = project
    vault = project / ".memories"
    model = Model()
    proxies: list[list[str | None]] = []

    def answer_and_look(request: dict[str, Any]) -> dict[str, Any]:
        if not proxies:  # Codex lists its MCP servers' tools before the first request: memdir mcp is running
            proxies.append(proxy_pythonpaths(project))
        return model(request)

    with FakeResponses(answer_and_look) as fake:
        user_config(home, project, fake.url)
        answer = run(codex, project, env, "how do we make celery retries safe")
        assert proxies[0] == [env.get("PYTHONPATH")], proxies  # the tool calls run this checkout's memdir
        assert "idempotent" in answer, [tool_names(r) for r in fake.requests]
        first = texts(fake.requests[0])
        assert "memdir memory vault:" in first  # the SessionStart orientation
        assert "KNOWN CONTEXT" in first and f"[id:{PROVEN}]" in first  # UserPromptSubmit's per-turn context
        for tool in ("search_memory", "score_memories", "read_memory", "add_to_memory_bank"):
            assert f"mcp__memdir/{tool}" in tool_names(fake.requests[0])
        assert model.called == ["mcp__memdir/search_memory"]
        answered = next(r for r in fake.requests if r["input"][-1].get("type") == "function_call_output")
        assert PROVEN in texts({"input": [answered["input"][-1]]})  # the tool ran and its answer reached the model
        client.ensure(vault)
        assert _poll(lambda: exchanges(vault) == ["Exchange: how do we make celery retries safe"]), exchanges(vault)

        before = (vault / "patterns" / "retry-celery-tasks-idempotently.md").read_text()
        run(codex, project, env, "resume", "--last", "and the visibility timeout?")
        asked = [r for r in fake.requests if "<memdir-score-required>" in texts(r)]
        assert asked and PROVEN in texts(asked[0])
        assert "mcp__memdir namespace" in texts(asked[-1]) and "ToolSearch" not in texts(asked[-1])  # Codex's names
        assert "mcp__memdir/score_memories" in model.called
        after = (vault / "patterns" / "retry-celery-tasks-idempotently.md").read_text()
        changed = [line for line in after.splitlines() if line not in before.splitlines()]
        assert changed and all(line.split(":")[0] in ("score", "uses", "success_count", "outcomes", "last_used_at",
                                                      "last_outcome") for line in changed), changed
        assert _poll(lambda: len(exchanges(vault)) == 2), exchanges(vault)
