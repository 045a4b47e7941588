"""`memdir init --client codex`: memdir's MCP server merged into .codex/config.toml as text (the user's
comments and order kept), its hooks into .codex/hooks.json, nothing broken overwritten."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli

from .test_integrations import hook_script_path, project, read, saved_by_someone_else_once  # noqa: F401 (fixture)

USERS = '# my settings\nmodel = "o3"\n\n[mcp_servers.github]\ncommand = "gh-mcp"  # the team one\n'


def init() -> str:
    result = CliRunner().invoke(cli, ["init", "--client", "codex"])
    assert result.exit_code == 0, result.output
    return result.output


def write_config(project: Path, text: str) -> Path:
    (project / ".codex").mkdir(exist_ok=True)
    path = project / ".codex" / "config.toml"
    path.write_text(text)
    return path


def test_init_adds_the_server_after_the_users_own_text_and_claude_codes_hooks_to_hooks_json(project: Path):
    config = write_config(project, USERS)
    output = init()
    text = config.read_text()
    assert text.startswith(USERS)  # comments, order and the user's server as they were
    server = tomllib.loads(text)["mcp_servers"]["memdir"]
    assert server["args"] == ["mcp", "--vault", ".memories"] and Path(server["command"]).is_absolute()
    # Codex gives hooks the whole environment but an MCP server a short list: the server registry's folder
    # must reach `memdir mcp` as it reaches the hooks, or each finds a different server.
    assert server["env_vars"] == ["XDG_RUNTIME_DIR"]
    hooks = read(project / ".codex" / "hooks.json")["hooks"]
    for event, name in (("SessionStart", "session-start"), ("UserPromptSubmit", "prompt"), ("Stop", "stop")):
        [handler] = [h for group in hooks[event] for h in group["hooks"]]
        assert handler["command"] == f'{hook_script_path()} {name} --vault ".memories" --client codex'
    assert "Hooks need review" in output and "--dangerously-bypass-hook-trust" in output


def test_a_second_init_changes_no_byte_and_an_outdated_entry_is_replaced_in_place(project: Path):
    config = write_config(project, USERS + '\n[mcp_servers.memdir]\ncommand = "/old/memdir"\nargs = ["mcp"]\n\n[profiles.fast]\nmodel = "o4-mini"\n')
    init()
    first = config.read_text()
    parsed = tomllib.loads(first)
    assert parsed["mcp_servers"]["memdir"]["command"] != "/old/memdir" and parsed["profiles"]["fast"]["model"] == "o4-mini"
    assert first.count("[mcp_servers.memdir]") == 1
    assert "already up to date" in init() and config.read_text() == first


def test_a_codex_config_that_is_not_toml_is_named_with_its_line_and_nothing_is_written(project: Path):
    config = write_config(project, 'model = "o3"\n[mcp_servers.github\ncommand = "gh"\n')
    result = CliRunner().invoke(cli, ["init", "--client", "codex"])
    assert result.exit_code == 1
    assert f"{config}:2: not valid TOML" in result.output and "nothing was changed" in result.output
    assert config.read_text() == 'model = "o3"\n[mcp_servers.github\ncommand = "gh"\n'
    assert not (project / ".codex" / "hooks.json").exists()


def test_a_save_made_to_the_codex_config_while_init_ran_is_kept(project: Path, monkeypatch: pytest.MonkeyPatch):
    from mcp_server.clients import integrations

    config = write_config(project, USERS)
    original = integrations._parse_toml
    saved: list[bool] = []

    def parse_then_someone_saves(path: Path, data: bytes | None) -> dict:
        parsed = original(path, data)
        if not saved:
            path.write_text(path.read_text() + '\n[profiles.fast]\nmodel = "o4-mini"\n')
            saved.append(True)
        return parsed

    monkeypatch.setattr(integrations, "_parse_toml", parse_then_someone_saves)
    init()
    parsed = tomllib.loads(config.read_text())
    assert parsed["profiles"]["fast"]["model"] == "o4-mini" and "memdir" in parsed["mcp_servers"]


def test_doctor_says_codex_ignores_the_project_until_it_is_trusted(project: Path):
    init()
    doctor = lambda: CliRunner().invoke(cli, ["doctor"]).output  # noqa: E731
    untrusted = next(line for line in doctor().splitlines() if "not trusted" in line)
    assert untrusted.startswith("Codex MISSING:") and "Hooks need review" in untrusted
    home = Path(os.environ["HOME"])
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(f'[projects."{project}"]\ntrust_level = "trusted"\n')
    lines = [line for line in doctor().splitlines() if line.startswith("Codex")]
    assert len(lines) == 4 and all(line.startswith("Codex ok:") for line in lines), lines


def test_doctor_names_codex_hooks_whose_memdir_was_moved_away(project: Path):
    init()
    hooks = project / ".codex" / "hooks.json"
    hooks.write_text(hooks.read_text().replace(hook_script_path(), "/gone/bin/memdir-hook"))  # the venv moved
    output = CliRunner().invoke(cli, ["doctor"]).output
    assert ("Codex MISSING: hook command /gone/bin/memdir-hook not found: Codex's hooks would fail to start; "
            "run memdir init --client codex again") in output, output
    init()  # the advice works
    assert f"Codex ok: hook command {hook_script_path()} found" in CliRunner().invoke(cli, ["doctor"]).output
