"""`memdir init --client gemini` and Gemini CLI's hooks: memdir's entries merged into .gemini/settings.json,
the user's own kept, and Gemini CLI's hook input and output spoken by the same hook library."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli
from mcp_server.clients.hook_script import command_words, hook_event
from vault import Vault

from .processes import hook
from .test_hooks import server  # noqa: F401 (fixture)
from .test_integrations import hook_script_path, project, read, saved_by_someone_else_once  # noqa: F401 (fixture)

SESSION = "42bace9c-3457-4a1e-874c-2d3d75e84cbe"


def init(*args: str) -> str:
    result = CliRunner().invoke(cli, ["init", "--client", "gemini", *args])
    assert result.exit_code == 0, result.output
    return result.output


def memdir_handler(settings: dict, event: str) -> dict:
    [handler] = [h for group in settings["hooks"][event] for h in group["hooks"] if hook_event(command_words(h["command"]))]
    return handler


def test_init_writes_the_server_hooks_and_tool_approvals_into_the_projects_gemini_settings(project: Path):
    output = init()
    settings = read(project / ".gemini" / "settings.json")
    assert settings["mcpServers"]["memdir"]["args"] == ["mcp", "--vault", ".memories"]  # found upward, from any subfolder
    assert Path(settings["mcpServers"]["memdir"]["command"]).is_absolute()
    for event, name in (("SessionStart", "session-start"), ("BeforeAgent", "prompt"), ("AfterAgent", "stop")):
        assert memdir_handler(settings, event)["command"] == f'{hook_script_path()} {name} --vault ".memories" --client gemini'
    assert "mcp_memdir_search_memory" in settings["tools"]["allowed"]
    assert "mcp_memdir_delete_memory" not in settings["tools"]["allowed"]  # deleting still asks
    assert "Trust folder" in output and "GEMINI_CLI_TRUST_WORKSPACE=true" in output
    assert "only in the folder it starts in" in output  # Gemini CLI 0.61 ignores a parent's .gemini/ from a subfolder


def test_a_second_init_changes_no_byte_and_the_users_own_settings_stay(project: Path):
    (project / ".gemini").mkdir()
    path = project / ".gemini" / "settings.json"
    path.write_text(json.dumps({"theme": "Dracula", "mcpServers": {"github": {"command": "gh-mcp"}},
                                "hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": "./lint.sh"}]}]},
                                "tools": {"allowed": ["run_shell_command(git)"]}}))
    init()
    first = path.read_bytes()
    assert "already up to date" in init() and path.read_bytes() == first
    settings = read(path)
    assert settings["theme"] == "Dracula" and "github" in settings["mcpServers"]
    assert len(settings["hooks"]["BeforeAgent"]) == 2 and settings["tools"]["allowed"][0] == "run_shell_command(git)"


def test_a_gemini_settings_file_that_is_not_json_is_named_with_its_line_and_left_alone(project: Path):
    (project / ".gemini").mkdir()
    broken = project / ".gemini" / "settings.json"
    broken.write_text('{\n  "theme": "Dracula",\n  "hooks": {,\n}\n')
    result = CliRunner().invoke(cli, ["init", "--client", "gemini"])
    assert result.exit_code == 1
    assert f"{broken}:3: not valid JSON" in result.output and "nothing was changed" in result.output
    assert broken.read_text() == '{\n  "theme": "Dracula",\n  "hooks": {,\n}\n'


def test_a_save_gemini_made_while_init_ran_is_kept_with_memdirs_entries(project: Path, monkeypatch: pytest.MonkeyPatch):
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text("{}")
    saved_by_someone_else_once(monkeypatch, "settings.json", lambda config: config.update(theme="Dracula"))
    init()
    settings = read(project / ".gemini" / "settings.json")
    assert settings["theme"] == "Dracula" and "memdir" in settings["mcpServers"]


def test_in_a_git_project_the_machines_gemini_settings_are_kept_out_of_git(project: Path):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    init()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            capture_output=True, text=True, check=True).stdout
    assert ".gemini" not in status


def gemini_event(root: Path, name: str, **fields) -> dict:
    return {"session_id": SESSION, "transcript_path": str(root / "session.jsonl"), "cwd": str(root.parent),
            "hook_event_name": name, "timestamp": "2026-11-26T22:42:16.926Z", **fields}


@pytest.mark.slow
def test_gemini_hooks_inject_context_in_its_words_and_capture_the_answer_without_the_orientation(server):
    orientation = "<hook_context>memdir memory vault: 12 memories</hook_context>\n\n"  # what `gemini -p` prepends
    result = hook("prompt", gemini_event(server, "BeforeAgent", prompt=orientation + "how do we make celery retries safe"),
                  "--vault", str(server), "--client", "gemini")
    output = json.loads(result.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "BeforeAgent" and "[id:m-a4c81f63]" in output["additionalContext"]
    stopped = hook("stop", gemini_event(server, "AfterAgent", prompt=orientation + "how do we make celery retries safe",
                                        prompt_response="Make the task idempotent first.", stop_hook_active=False),
                   "--vault", str(server), "--client", "gemini")
    assert stopped.returncode == 0 and not stopped.stdout.strip(), stopped.stderr
    [exchange] = [m for m in Vault(server).scan().memories if m.collection == "working" and m.type == "history"]
    assert exchange.title == "Exchange: how do we make celery retries safe"
    assert "Make the task idempotent first." in exchange.body and "hook_context" not in exchange.body


def doctor() -> str:
    return CliRunner().invoke(cli, ["doctor"]).output


def test_doctor_says_gemini_ignores_the_project_until_its_folder_is_trusted(project: Path):
    init()
    untrusted = next(line for line in doctor().splitlines() if "folder trust" in line or "not trusted" in line)
    assert untrusted.startswith("Gemini CLI MISSING:") and "Trust folder" in untrusted and "--skip-trust" in untrusted
    home = Path(os.environ["HOME"])
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project / "sub"): "TRUST_PARENT"}))
    lines = [line for line in doctor().splitlines() if line.startswith("Gemini CLI")]
    assert lines and all(line.startswith("Gemini CLI ok:") for line in lines), lines
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project.parent): "TRUST_FOLDER",
                                                                      str(project): "DO_NOT_TRUST"}))
    assert "marked \"Don't trust\"" in doctor()


def test_doctor_says_nothing_about_gemini_for_a_project_without_it(project: Path):
    CliRunner().invoke(cli, ["init"])
    assert "Gemini CLI" not in doctor()


def test_doctor_names_gemini_hooks_whose_memdir_was_moved_away(project: Path):
    init()
    settings = project / ".gemini" / "settings.json"
    settings.write_text(settings.read_text().replace(hook_script_path(), "/gone/bin/memdir-hook"))  # the venv moved
    assert ("Gemini CLI MISSING: hook command /gone/bin/memdir-hook not found: Gemini CLI's hooks would fail to "
            "start; run memdir init --client gemini again") in doctor()
    init()  # the advice works
    assert f"Gemini CLI ok: hook command {hook_script_path()} found" in doctor()
