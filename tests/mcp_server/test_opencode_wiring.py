"""`memdir init --client opencode`: memdir's MCP server and plugin in the project's .opencode/ folder,
merged with what the user has, kept out of git, and reported by doctor."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli
from mcp_server.clients import integrations

from .test_integrations import hook_script_path, project, read, saved_by_someone_else_once  # noqa: F401 (fixture)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_init_writes_the_server_and_the_plugin_into_the_projects_opencode_folder(project: Path):
    code, output = run("init", "--client", "opencode")
    assert code == 0, output
    config = read(project / ".opencode" / "opencode.json")
    server = config["mcp"]["memdir"]
    assert server["command"][1:] == ["mcp", "--vault", ".memories"] and Path(server["command"][0]).is_absolute()
    plugin = (project / ".opencode" / "plugins" / "memdir.js").read_text()
    assert f"const HOOK = {json.dumps([hook_script_path()])};" in plugin
    assert 'const VAULT = ".memories";' in plugin and "__VAULT__" not in plugin
    assert "`opencode` was not found on PATH" in output and "nothing to approve" in output
    assert not (project / "opencode.json").exists()  # the team's own project config is not touched


def test_a_second_init_changes_no_byte_and_the_users_own_config_stays(project: Path):
    (project / ".opencode").mkdir()
    config = project / ".opencode" / "opencode.json"
    config.write_text('{"theme": "tokyonight", "mcp": {"other": {"type": "local", "command": ["x"]}}}')
    run("init", "--client", "opencode")
    saved = {p: p.read_bytes() for p in (config, project / ".opencode" / "plugins" / "memdir.js")}
    code, output = run("init", "--client", "opencode")
    assert code == 0 and output.count("already up to date") == 2, output
    assert {p: p.read_bytes() for p in saved} == saved
    data = read(config)
    assert data["theme"] == "tokyonight" and data["mcp"]["other"]["command"] == ["x"] and "memdir" in data["mcp"]


def test_an_opencode_config_that_does_not_parse_is_named_and_nothing_is_written(project: Path):
    (project / ".opencode").mkdir()
    config = project / ".opencode" / "opencode.json"
    config.write_text('{\n  // a comment\n}\n')
    code, output = run("init", "--client", "opencode")
    assert code != 0 and f"{config}:2: not valid JSON" in output
    assert config.read_text() == '{\n  // a comment\n}\n'
    assert not (project / ".opencode" / "plugins" / "memdir.js").exists()


def test_a_save_made_to_the_opencode_config_while_init_ran_is_kept(project: Path, monkeypatch: pytest.MonkeyPatch):
    (project / ".opencode").mkdir()
    saved_by_someone_else_once(monkeypatch, "opencode.json", lambda c: c.update(theme="dracula"))
    code, output = run("init", "--client", "opencode")
    assert code == 0, output
    data = read(project / ".opencode" / "opencode.json")
    assert data["theme"] == "dracula" and "memdir" in data["mcp"]


def test_in_a_git_clone_the_machine_specific_files_are_kept_out_of_git(project: Path):
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    run("init", "--client", "opencode")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            capture_output=True, text=True, check=True).stdout
    assert ".opencode/" not in status, status


def test_doctor_reports_the_opencode_wiring_and_a_missing_plugin(project: Path):
    run("init", "--client", "opencode")
    code, output = run("doctor")
    assert "OpenCode ok: memdir MCP server registered in .opencode/opencode.json" in output, output
    assert "OpenCode ok: memdir's plugin in .opencode/plugins/memdir.js" in output
    (project / ".opencode" / "plugins" / "memdir.js").unlink()
    code, output = run("doctor")
    assert "OpenCode MISSING: no .opencode/plugins/memdir.js (no context, no capture)" in output


def test_doctor_says_a_plugin_from_before_memdir_hook_starts_hooks_slowly_until_init_runs_again(project: Path):
    run("init", "--client", "opencode")
    plugin = project / ".opencode" / "plugins" / "memdir.js"
    text = plugin.read_text()
    hook_line = next(line for line in text.splitlines() if line.startswith("const HOOK = "))
    # what the plugin held before memdir-hook: the console script, called with "hook"
    plugin.write_text(text.replace(hook_line, f"const MEMDIR = {json.dumps(integrations.memdir_command())};"))
    code, output = run("doctor")
    assert "OpenCode MISSING: memdir's hooks start through" in output and "--client opencode again" in output
    run("init", "--client", "opencode")
    code, output = run("doctor")
    assert "memdir's hooks start through" not in output


def test_doctor_names_the_plugins_hook_command_and_the_server_command_of_a_memdir_moved_away(project: Path):
    run("init", "--client", "opencode")
    plugin, config = project / ".opencode" / "plugins" / "memdir.js", project / ".opencode" / "opencode.json"
    plugin.write_text(plugin.read_text().replace(hook_script_path(), "/gone/bin/memdir-hook"))  # the venv moved
    config.write_text(config.read_text().replace(integrations.memdir_command(), "/gone/bin/memdir"))
    code, output = run("doctor")
    assert ("OpenCode MISSING: hook command /gone/bin/memdir-hook not found: OpenCode's hooks would fail to start; "
            "run memdir init --client opencode again") in output, output
    assert ("OpenCode MISSING: MCP server command /gone/bin/memdir not found: OpenCode's memdir tools would fail to "
            "start; run memdir init --client opencode again") in output
    assert "Claude Code" not in output  # the advice is OpenCode's, not another client's
    run("init", "--client", "opencode")  # the advice works
    code, output = run("doctor")
    assert "OpenCode MISSING: hook command" not in output and "OpenCode MISSING: MCP server command" not in output
