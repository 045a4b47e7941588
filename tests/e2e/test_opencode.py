"""memdir inside the real OpenCode: `opencode run` headless against the loopback Responses API fake.

`memdir init --client opencode` writes .opencode/opencode.json (the MCP server) and
.opencode/plugins/memdir.js (memdir's plugin) in the project; the test then points OpenCode's `openai`
provider at the fake in the user's own ~/.config/opencode/opencode.json (a temporary HOME). Two turns of one session (`--continue`):
the orientation and KNOWN CONTEXT reach the model in the system prompt, `memdir_search_memory` is
called and answered, the exchange is in the vault, the second turn asks for scores and
`memdir_score_memories` writes them to the file.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_server import client

from . import scenario
from .claude_code import CACHE, Unavailable, npm_binary
from .fake_responses import FakeResponses, texts, tool_names
from .test_claude_code import PROVEN

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
OPENCODE_VERSION = "1.18.33"
PREFIX = "memdir_"


@pytest.fixture(scope="module")
def opencode() -> Path:
    try:
        return npm_binary("opencode-ai", OPENCODE_VERSION, "opencode", folder_name=f"opencode-{OPENCODE_VERSION}")
    except Unavailable as exc:
        pytest.skip(f"real OpenCode {OPENCODE_VERSION} unavailable: {exc}")


def this_turn(request: dict[str, Any]) -> str:
    """The system prompt (where the plugin puts memdir's context) and the newest user message."""
    users = [i for i in request.get("input", []) if i.get("role") == "user"]
    return texts({"instructions": request.get("instructions"), "input": [i for i in request.get("input", [])
                                                                          if i.get("role") in ("system", "developer")]
                  + users[-1:]})


class Model:
    def __init__(self) -> None:
        self.called: list[str] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if PREFIX + "search_memory" not in tool_names(request):
            return {"text": "Celery retries"}  # a side request (the session title)
        items = request.get("input", [])
        if items and items[-1].get("type") == "function_call_output":
            return {"text": "Make the task idempotent first, then retry with backoff; acks_late keeps it safe."}
        turn = this_turn(request)
        if "<memdir-score-required>" in turn and "score_memories" not in self.called:
            return self._call("score_memories", {"outcome": "worked", "memory_scores": {PROVEN: "worked"}})
        if "celery retries" in texts({"input": [i for i in items if i.get("role") == "user"][-1:]}):
            return self._call("search_memory", {"query": "celery retries idempotent"})
        return {"text": "Make the task idempotent first, then retry with backoff; acks_late keeps it safe."}

    def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.called.append(tool)
        return {"tool": PREFIX + tool, "input": arguments}


def provider(home: Path, url: str) -> None:
    """The user's own choice of model provider, in the user's config (memdir's entries are the project's)."""
    path = home / ".config" / "opencode" / "opencode.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"autoupdate": False, "share": "disabled",
                                "provider": {"openai": {"options": {"baseURL": url, "apiKey": "sk-test"}}}}))


def run_opencode(opencode: Path, project: Path, env: dict[str, str], prompt: str, resume: bool = False) -> str:
    # One argument per word: `opencode run` quotes an argument that holds spaces in the message it sends.
    command = [str(opencode), "run", *(["--continue"] if resume else []), "--model", "openai/gpt-5", *prompt.split()]
    # Offline: no models.dev fetch, no default plugins from npm, no LSP downloads (each waits on the network).
    offline = {name: "1" for name in ("OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH",
                                      "OPENCODE_DISABLE_DEFAULT_PLUGINS", "OPENCODE_DISABLE_LSP_DOWNLOAD",
                                      "OPENCODE_DISABLE_SHARE")}
    started = time.monotonic()
    result = subprocess.run(command, cwd=project, capture_output=True, timeout=240, stdin=subprocess.DEVNULL,
                            env={**env, **offline})
    print(f"opencode run: {time.monotonic() - started:.1f} s")
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-3000:]
    return result.stdout.decode()


# OpenCode installs its plugin SDK (@opencode-ai/plugin) with npm into every config folder it loads, on the
# first start there: the project's .opencode/ (76 s on this machine) and the user's ~/.config/opencode/ (48 s
# in each test's fresh HOME, measured from OpenCode's --print-logs). Installed once, kept in the cache, and
# linked into both folders of each test (OpenCode sees package.json and node_modules and installs nothing).
PLUGIN_DEPENDENCIES = CACHE / f"opencode-{OPENCODE_VERSION}-dot-opencode"
DEPENDENCY_FILES = ("package.json", "package-lock.json", ".gitignore")


def plugin_dependencies(folder: Path, keep: bool = False) -> None:
    """Give `folder` (a config folder of OpenCode's) the plugin SDK install from the cache, or with `keep`,
    fill the cache from the install OpenCode made in `folder` (the first run on this machine)."""
    if keep:
        if not PLUGIN_DEPENDENCIES.exists() and (folder / "node_modules").is_dir() \
                and not (folder / "node_modules").is_symlink():
            shutil.copytree(folder / "node_modules", PLUGIN_DEPENDENCIES / "node_modules", symlinks=True)
            for name in DEPENDENCY_FILES:
                if (folder / name).is_file():
                    shutil.copy2(folder / name, PLUGIN_DEPENDENCIES / name)
        return
    if not (PLUGIN_DEPENDENCIES / "node_modules").is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "node_modules").symlink_to(PLUGIN_DEPENDENCIES / "node_modules", target_is_directory=True)
    for name in DEPENDENCY_FILES:
        if (PLUGIN_DEPENDENCIES / name).is_file():
            shutil.copy2(PLUGIN_DEPENDENCIES / name, folder / name)


@pytest.fixture
def opencode_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: Any) -> Any:
    home, project, env, printed = scenario.set_up(tmp_path, monkeypatch, "opencode")
    assert "`opencode` was not found on PATH" in printed and "nothing to approve" in printed
    user_config = home / ".config" / "opencode"
    plugin_dependencies(project / ".opencode")
    plugin_dependencies(user_config)
    warm(project / ".memories")  # as after the first session
    yield home, project, env
    plugin_dependencies(project / ".opencode", keep=True)


def test_memdir_works_inside_the_real_opencode_headless(opencode: Path, opencode_project: Any):
    home, project, env = opencode_project
    vault = project / ".memories"
    model = Model()
    started = time.monotonic()
    with FakeResponses(model) as fake:
        provider(home, fake.url)
        answer = run_opencode(opencode, project, env, "how do we make celery retries safe")
        assert "idempotent" in answer
        conversation = [r for r in fake.requests if PREFIX + "search_memory" in tool_names(r)]
        scenario.assert_first_turn_had_orientation_and_context(texts(conversation[0]))
        for tool in ("search_memory", "score_memories", "read_memory", "add_to_memory_bank"):
            assert PREFIX + tool in tool_names(conversation[0])
        assert model.called == ["search_memory"]
        answered = next(r for r in conversation if r["input"][-1].get("type") == "function_call_output")
        output = json.dumps(answered["input"][-1]["output"], ensure_ascii=False)
        assert PROVEN in output and "«" in output
        scenario.assert_first_exchange_stored(vault)
        stored = next(p for p in (vault / "working").glob("*.md") if "celery" in p.name).read_text()
        assert "Assistant: Make the task idempotent first" in stored  # the answer, read back at session.idle

        before = (vault / scenario.PROVEN_FILE).read_text()
        run_opencode(opencode, project, env, "and the visibility timeout?", resume=True)
        assert model.called == ["search_memory", "score_memories"]
        asked = next(this_turn(r) for r in fake.requests if "<memdir-score-required>" in this_turn(r))
        assert "memdir_score_memories" in asked and "ToolSearch" not in asked  # OpenCode's name for the tool
        scenario.assert_scored_and_both_exchanges_stored(vault, before)
    print(f"opencode e2e: {time.monotonic() - started:.1f} s")
