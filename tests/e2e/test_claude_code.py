"""memdir inside the real Claude Code: `claude -p` headless against a loopback fake of the Messages API.

Two turns in a scratch project with a temporary HOME and a trusted workspace: the memories reach
the model, `search_memory` is called and answered, the exchange is in the vault once the first
process has exited, the second turn asks for scores and `score_memories` writes them to the file.
On current Claude Code the MCP tools are deferred behind ToolSearch: the scripted model loads them
first, as a real model must.

Run: `.venv/bin/python -m pytest tests/e2e -m e2e` (needs node and npm; installs into ~/.cache/memdir-e2e).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_server import client
from vault import Vault

from ..conftest import EXAMPLE_VAULT, HASHING_TOML
from ..mcp_server.processes import hung_server, stop_all
from .claude_code import VERSIONS, Unavailable, claude_binary
from .fake_messages import FakeMessages, texts, tool_names

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
MEMDIR = Path(sys.executable).with_name("memdir")
PROVEN = "m-a4c81f63"  # retry-celery-tasks-idempotently.md in the example vault


class Model:
    """The scripted model: search on the first question, score when asked, load deferred tools first."""

    def __init__(self) -> None:
        self.called: list[str] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if "Bash" not in tool_names(request):
            return {"text": "ok"}  # a side request (titles, summaries): not the main conversation
        results = [b for m in request["messages"] if isinstance(m.get("content"), list)
                   for b in m["content"] if b.get("type") == "tool_result"]
        last = request["messages"][-1]["content"]
        answering_a_tool = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        seen = texts(request)
        if "<memdir-score-required>" in seen.split("and the visibility timeout")[-1] and \
                "mcp__memdir__score_memories" not in self.called:
            return self._call("mcp__memdir__score_memories", {"outcome": "worked", "memory_scores": {PROVEN: "worked"}},
                              request)
        if "celery retries" in seen and not results:
            return self._call("mcp__memdir__search_memory", {"query": "celery retries idempotent"}, request)
        if answering_a_tool and self.called and self.called[-1] == "ToolSearch":
            return self._call(self.pending, self.pending_input, request)
        if seen.rstrip().endswith("Thanks, that worked"):
            return {"text": "Glad it helped."}
        return {"text": "Make the task idempotent first, then retry with backoff; acks_late keeps it safe."}

    def _call(self, tool: str, arguments: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        if tool not in tool_names(request) and "ToolSearch" in tool_names(request):
            self.pending, self.pending_input = tool, arguments  # deferred: load its schema first
            self.called.append("ToolSearch")
            return {"tool": "ToolSearch", "input": {"query": f"select:{tool}", "max_results": 5}}
        self.called.append(tool)
        return {"tool": tool, "input": arguments}


@pytest.fixture(params=VERSIONS)
def claude(request: pytest.FixtureRequest) -> Path:
    try:
        return claude_binary(request.param)
    except Unavailable as exc:
        pytest.skip(f"real Claude Code {request.param} unavailable: {exc}")


def example_project(folder: Path) -> Path:
    vault = folder / ".memories"
    shutil.copytree(EXAMPLE_VAULT, vault, ignore=shutil.ignore_patterns(".memdir"))
    (vault / "memdir.toml").write_text(HASHING_TOML)
    return folder


def checkout() -> dict[str, str]:
    """PYTHONPATH when the tests run from a checkout that precedes the installed memdir (a worktree): the
    hooks and `memdir mcp` Claude Code starts must run the same code as this test and the server it starts.
    XDG_RUNTIME_DIR when the test shares the warm tests' server (conftest.py): they must find it too."""
    return {name: os.environ[name] for name in ("PYTHONPATH", "XDG_RUNTIME_DIR") if os.environ.get(name)}


def trust(home: Path, *projects: Path) -> None:
    """What Claude Code's onboarding and trust prompt record, merged into what `memdir init` wrote there."""
    path = home / ".claude.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config["hasCompletedOnboarding"] = True
    for project in projects:
        config.setdefault("projects", {}).setdefault(str(project), {})["hasTrustDialogAccepted"] = True
    path.write_text(json.dumps(config))


def initialized(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # this test and Claude Code's hooks: one user, one memdir server
    project = example_project(tmp_path / "tidewater")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **checkout()}  # no memdir on PATH: init writes its path
    subprocess.run([str(MEMDIR), "init", "--claude-code"], cwd=project, env=env, check=True, capture_output=True)
    trust(home, project)
    return project, env


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: Any) -> Any:
    project, env = initialized(tmp_path, monkeypatch)
    warm(project / ".memories")  # as after the first session (the cold one has its own test)
    return project, env


@pytest.fixture
def cold_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A project whose first session starts with nothing of memdir running and no index."""
    project, env = initialized(tmp_path, monkeypatch)
    yield project, env
    stop_all(project / ".memories")


def run(claude: Path, project: Path, env: dict[str, str], fake: FakeMessages, prompt: str, *flags: str,
        mcp_timeout_ms: int | None = 30000) -> str:
    """One headless turn; `mcp_timeout_ms=None` leaves Claude Code's own wait for MCP servers."""
    # On a loaded machine the stdio proxy may list its tools after Claude Code stopped waiting; the
    # warm tests wait for it, the cold-session test keeps Claude Code's default to prove it is not needed.
    waits = {"MCP_TIMEOUT": str(mcp_timeout_ms)} if mcp_timeout_ms is not None else {}
    result = subprocess.run([str(claude), "-p", prompt, *flags], cwd=project, capture_output=True, timeout=240,
                            env={**env, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-test",
                                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", **waits})
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    return result.stdout.decode()


def exchanges(vault: Path) -> list[str]:
    return sorted(m.title for m in Vault(vault).scan().memories if m.type == "history" and m.collection == "working")


def search_result(requests: list[dict]) -> dict:
    """The tool_result block Claude Code sent the model for its search_memory call."""
    blocks = [b for r in requests for m in r["messages"] if isinstance(m["content"], list) for b in m["content"]]
    call = next(b["id"] for b in blocks if b.get("type") == "tool_use" and b.get("name") == "mcp__memdir__search_memory")
    return next(b for b in blocks if b.get("type") == "tool_result" and b.get("tool_use_id") == call)


def test_memdir_works_inside_the_real_claude_code_headless(claude: Path, project: Any):
    project, env = project
    vault = project / ".memories"
    model = Model()
    with FakeMessages(model) as fake:
        answer = run(claude, project, env, fake, "how do we make celery retries safe")
        assert "idempotent" in answer, [tool_names(r) for r in fake.requests]
        # The process has exited: the exchange is stored, or spooled and stored by the running server.
        client.ensure(vault)
        deadline_store = _poll(lambda: exchanges(vault) == ["Exchange: how do we make celery retries safe"])
        assert deadline_store, exchanges(vault)
        conversation = [r for r in fake.requests if "Bash" in tool_names(r)]
        first = texts(conversation[0])
        assert "KNOWN CONTEXT" in first and f"[id:{PROVEN}]" in first
        offered = json.dumps([r.get("tools", []) for r in conversation]) + first
        for tool in ("search_memory", "score_memories", "read_memory", "add_to_memory_bank"):
            assert f"mcp__memdir__{tool}" in offered
        assert "mcp__memdir__search_memory" in model.called
        deferred = "mcp__memdir__search_memory" not in tool_names(conversation[0])
        if deferred:  # current Claude Code: only the names are listed; ToolSearch loads a schema on demand
            assert "ToolSearch" in model.called and "mcp__memdir__search_memory" in first
        answered = next(r for r in conversation if "tool_result" in json.dumps(r["messages"][-1]))
        searched = texts(answered)
        assert PROVEN in searched  # the tool's answer reached the model
        result = search_result(conversation)
        shown = json.dumps(result["content"], ensure_ascii=False)
        if os.environ.get("E2E_TOOL_RESULT_DUMP"):  # what Claude Code hands the model, for the record
            Path(os.environ["E2E_TOOL_RESULT_DUMP"]).write_text(json.dumps(result, ensure_ascii=False, indent=1))
        assert "«" in shown, "memory text reaches the model quoted as data"

        before = (vault / "patterns" / "retry-celery-tasks-idempotently.md").read_text()
        run(claude, project, env, fake, "and the visibility timeout?", "--continue")
        asked = [r for r in fake.requests if "<memdir-score-required>" in texts(r)]
        assert asked and PROVEN in texts(asked[0])
        assert not deferred or 'ToolSearch "select:mcp__memdir__score_memories"' in texts(asked[0])
        assert "mcp__memdir__score_memories" in model.called
        after = (vault / "patterns" / "retry-celery-tasks-idempotently.md").read_text()
        changed = [line for line in after.splitlines() if line not in before.splitlines()]
        assert changed and all(line.split(":")[0] in ("score", "uses", "success_count", "outcomes", "last_used_at",
                                                      "last_outcome") for line in changed), changed

        run(claude, project, env, fake, "Thanks, that worked", "--continue")  # a trivial turn is not stored
        assert _poll(lambda: not list((vault / ".memdir" / "spool").glob("*.json")))
        assert exchanges(vault) == ["Exchange: and the visibility timeout?",
                                    "Exchange: how do we make celery retries safe"]


def test_user_scope_serves_the_project_claude_code_runs_in_even_from_a_subfolder(claude: Path, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                                 warm: Any):
    home, first = tmp_path / "home", tmp_path / "first"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    first.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **checkout()}
    subprocess.run([str(MEMDIR), "init", "--claude-code", "--scope", "user"], cwd=first, env=env, check=True,
                   capture_output=True)
    (first / ".memories" / "memdir.toml").write_text(HASHING_TOML)
    second = example_project(tmp_path / "tidewater")  # registered nowhere itself
    (second / "src" / "billing").mkdir(parents=True)
    trust(home, first, second)
    warm(second / ".memories")
    with FakeMessages(Model()) as fake:
        run(claude, second / "src" / "billing", env, fake, "how do we make celery retries safe")
    first_request = texts(next(r for r in fake.requests if "Bash" in tool_names(r)))
    assert f"[id:{PROVEN}]" in first_request  # the second project's own memory
    assert _poll(lambda: exchanges(second / ".memories") == ["Exchange: how do we make celery retries safe"])
    assert exchanges(first / ".memories") == []  # nothing leaks into the project init ran in


def test_a_hung_server_does_not_hold_up_the_prompt_and_loses_no_event(claude: Path, cold_project: Any):
    project, env = cold_project  # no server of its own: the hung one below is this user's server
    vault = project / ".memories"
    with hung_server():
        with FakeMessages(Model()) as fake:
            answer = run(claude, project, env, fake, "why is the deploy slow", mcp_timeout_ms=3000)
        assert "idempotent" in answer  # the scripted model answered: the prompt went through
        spooled = sorted(p.name.rsplit("-", 1)[1] for p in (vault / ".memdir" / "spool").glob("*.json"))
        assert spooled == ["prompt.json", "stop.json"]


def _poll(condition, seconds: float = 60.0) -> bool:
    """Bounded wait for what another process (the vault server) makes true."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_cold_first_session_is_offered_memdirs_tools_at_claude_codes_default_wait(claude: Path, cold_project: Any):
    project, env = cold_project
    with FakeMessages(Model()) as fake:
        run(claude, project, env, fake, "Thanks, that worked", mcp_timeout_ms=None)
    first = next(r for r in fake.requests if "Bash" in tool_names(r))
    offered = json.dumps(first.get("tools", [])) + texts(first)
    for tool in ("search_memory", "score_memories", "add_to_memory_bank"):
        assert f"mcp__memdir__{tool}" in offered


def test_project_scope_serves_a_session_started_in_a_subfolder(claude: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch, warm: Any):
    if "2.1.197" in str(claude):  # before any set-up: the e2e budget
        pytest.skip("Claude Code 2.1.197 reads a project's .claude/ settings only in the folder it starts in: "
                    "no hooks and no permissions from a subfolder (user scope serves it)")
    project, env = initialized(tmp_path, monkeypatch)
    vault = project / ".memories"
    subprocess.run(["git", "init", "-q", str(project)], check=True)  # Claude Code finds the project at the git root
    (project / "src" / "billing").mkdir(parents=True)
    warm(vault)
    with FakeMessages(Model()) as fake:
        run(claude, project / "src" / "billing", env, fake, "how do we make celery retries safe")
    first = texts(next(r for r in fake.requests if "Bash" in tool_names(r)))
    assert "KNOWN CONTEXT" in first and f"[id:{PROVEN}]" in first  # the hooks found the vault upward
    assert PROVEN in texts(fake.requests[-1]), "the tool call was allowed and answered"
    assert _poll(lambda: exchanges(vault) == ["Exchange: how do we make celery retries safe"]), exchanges(vault)
