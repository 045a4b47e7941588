"""`memdir init --claude-code` and `--print-config`: memdir's entries merged in, the user's own kept."""

from __future__ import annotations

import itertools
import json
import os
import shlex
import subprocess
import tomllib
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from mcp import Client
from mcp_server.clients import hook_script, integrations
from mcp_server.clients.hook_script import command_words, hook_event
from mcp_server.tools import mcp_tools as tools
from vault import write as vault_write
from mcp_server.cli.commands import cli


def hook_script_path() -> str:
    """What init registers as the hooks' command: the script it writes beside this Python (hook_script.py), which in
    a test is the test's own folder (tests/conftest.py)."""
    return str(hook_script.script_path(integrations.memdir_command()))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def init(*args: str) -> str:
    result = CliRunner().invoke(cli, ["init", *args])
    assert result.exit_code == 0, result.output
    return result.output


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def memdir_handlers(settings: dict, event: str) -> list[dict]:
    return [h for group in settings["hooks"][event] for h in group["hooks"] if hook_event(command_words(h["command"]))]


def local_server(project: Path) -> dict:
    """memdir's MCP server in the project's own entry of ~/.claude.json (Claude Code's local scope)."""
    return read(Path(os.environ["HOME"]) / ".claude.json")["projects"][str(project)]["mcpServers"]["memdir"]


def test_init_registers_hooks_and_server_for_this_machine_and_commits_only_the_permissions(project: Path):
    output = init("--claude-code")
    local = read(project / ".claude" / "settings.local.json")
    for event, name in (("SessionStart", "session-start"), ("UserPromptSubmit", "prompt"), ("Stop", "stop")):
        [handler] = memdir_handlers(local, event)
        assert handler["command"] == f'{hook_script_path()} {name} --vault ".memories"'  # found upward from a subfolder
    assert "async" not in memdir_handlers(local, "Stop")[0]  # `claude -p` kills background hooks at exit
    assert "mcp__memdir__search_memory" in local["permissions"]["allow"]  # read at the git root from a subfolder
    assert local_server(project)["args"] == ["mcp", "--vault", str(project / ".memories")]
    committed = read(project / ".claude" / "settings.json")
    assert "mcp__memdir__search_memory" in committed["permissions"]["allow"]
    assert set(committed) == {"permissions"} and not (project / ".mcp.json").exists()
    assert (project / ".memories" / "memdir.toml").is_file() and "settings.local.json updated" in output


def test_the_committed_settings_name_no_path_of_this_machine(project: Path):
    init("--claude-code")
    committed = (project / ".claude" / "settings.json").read_text()
    assert "memdir hook" not in committed and str(Path.home()) not in committed and "/bin/" not in committed


def test_init_moves_an_earlier_releases_machine_paths_out_of_the_committed_files(project: Path):
    (project / ".claude").mkdir()
    old_hook = {"type": "command", "command": '/old/venv/bin/memdir hook prompt --vault "${CLAUDE_PROJECT_DIR:-.}/.memories"'}
    own_hook = {"type": "command", "command": "./scripts/lint-prompt.sh"}
    (project / ".claude" / "settings.json").write_text(json.dumps({
        "hooks": {"UserPromptSubmit": [{"hooks": [own_hook, old_hook]}]}, "enabledMcpjsonServers": ["memdir"]}))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {"command": "gh-mcp"},
                                                                  "memdir": {"command": "/old/venv/bin/memdir"}}}))
    init("--claude-code")
    committed = read(project / ".claude" / "settings.json")
    assert committed["hooks"]["UserPromptSubmit"] == [{"hooks": [own_hook]}] and "enabledMcpjsonServers" not in committed
    assert read(project / ".mcp.json")["mcpServers"] == {"github": {"command": "gh-mcp"}}
    assert memdir_handlers(read(project / ".claude" / "settings.local.json"), "UserPromptSubmit")


def test_a_second_init_changes_no_byte(project: Path):
    init("--claude-code")
    files = (project / ".claude" / "settings.json", project / ".claude" / "settings.local.json",
             Path(os.environ["HOME"]) / ".claude.json")
    before = {p: p.read_bytes() for p in files}
    output = init("--claude-code")
    assert {p: p.read_bytes() for p in before} == before
    assert output.count("already up to date") == 3


def test_the_users_own_hooks_servers_and_permissions_are_kept(project: Path):
    (project / ".claude").mkdir()
    own_hook = {"type": "command", "command": "./scripts/lint-prompt.sh"}
    (project / ".claude" / "settings.json").write_text(json.dumps({
        "model": "opus",
        "hooks": {"UserPromptSubmit": [{"hooks": [own_hook]}],
                  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]},
        "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(.env)"]},
    }))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}))
    init("--claude-code")
    init("--claude-code")
    settings = read(project / ".claude" / "settings.json")
    assert settings["model"] == "opus" and settings["permissions"]["deny"] == ["Read(.env)"]
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "guard.sh"
    prompt_commands = [h["command"] for g in settings["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert prompt_commands == ["./scripts/lint-prompt.sh"]  # memdir's own hook is in settings.local.json
    assert settings["permissions"]["allow"][0] == "Bash(npm test)"
    assert len(settings["permissions"]["allow"]) == len(set(settings["permissions"]["allow"]))
    assert set(read(project / ".mcp.json")["mcpServers"]) == {"github"}


def test_moving_the_vault_updates_memdirs_entries_in_place(project: Path):
    init("--claude-code")
    init("--claude-code", "--vault", "team-memory")
    settings = read(project / ".claude" / "settings.local.json")
    [handler] = memdir_handlers(settings, "UserPromptSubmit")
    assert handler["command"].endswith('--vault "team-memory"')
    assert local_server(project)["args"][-1] == str(project / "team-memory")


def test_a_settings_file_that_is_not_json_is_reported_and_left_alone(project: Path):
    (project / ".claude").mkdir()
    broken = project / ".claude" / "settings.json"
    broken.write_text('{\n  "hooks": {,\n}\n')
    result = CliRunner().invoke(cli, ["init", "--claude-code"])
    assert result.exit_code == 1
    assert f"{broken}:2: not valid JSON" in result.output and "nothing was changed" in result.output
    assert broken.read_text() == '{\n  "hooks": {,\n}\n' and not (project / ".mcp.json").exists()


def test_user_scope_writes_the_users_files_and_keeps_their_other_keys(project: Path):
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text(json.dumps({"numStartups": 41, "projects": {"/x": {"allowedTools": []}}}))
    output = init("--claude-code", "--scope", "user")
    assert "committed .claude/settings.json" not in output  # no project file is written: the next step says so
    assert "registered for this user, in every project" in output
    user_config = read(home / ".claude.json")
    assert user_config["numStartups"] == 41 and "/x" in user_config["projects"]
    assert user_config["mcpServers"]["memdir"]["args"] == ["mcp", "--vault", ".memories"]  # each project's own
    settings = read(home / ".claude" / "settings.json")
    assert memdir_handlers(settings, "UserPromptSubmit") and "enabledMcpjsonServers" not in settings
    assert not (project / ".claude").exists()
    assert "committed .claude/settings.json" in init("--claude-code")  # the project scope's next step


def test_the_written_hook_command_runs_in_a_shell_and_exits_0(project: Path):
    init("--claude-code")
    [handler] = memdir_handlers(read(project / ".claude" / "settings.local.json"), "UserPromptSubmit")
    result = subprocess.run(["sh", "-c", handler["command"]], input=b"{}", capture_output=True, timeout=60,
                            env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)})
    assert result.returncode == 0 and result.stdout == b"" and b"no session_id" in result.stderr


@pytest.mark.parametrize("name", [".memories $(touch PWNED)", ".memories `touch PWNED`", 'mem "quoted" $HOME',
                                  "it's \\ ${HOME} !x"])
def test_a_vault_whose_name_a_shell_would_expand_is_named_verbatim_in_the_hook_command(project: Path, name: str):
    init(name, "--claude-code")
    [handler] = memdir_handlers(read(project / ".claude" / "settings.local.json"), "UserPromptSubmit")
    hook, arguments = handler["command"].split(" ", 1)
    assert hook == hook_script_path()
    shell_read = subprocess.run(["sh", "-c", "printf '%s\\n' " + arguments], capture_output=True, text=True, timeout=60,
                                cwd=project)
    assert shell_read.stdout.splitlines() == ["prompt", "--vault", name] and not (project / "PWNED").exists()


@pytest.mark.parametrize("client", integrations.CLIENTS)
def test_print_config_gives_a_snippet_that_parses_and_changes_nothing(project: Path, client: str):
    output = init("--print-config", client, "--vault", str(project / "vault"))
    body = output.split("\n", 1)[1]
    config = tomllib.loads(body) if client == "codex" else json.loads(body)
    server = {"codex": lambda c: c["mcp_servers"]["memdir"], "opencode": lambda c: c["mcp"]["memdir"],
              "cursor": lambda c: c["mcpServers"]["memdir"], "gemini": lambda c: c["mcpServers"]["memdir"]}[client](config)
    words = server["command"] if client == "opencode" else [server["command"], *server["args"]]
    assert words[1:] == ["mcp", "--vault", str(project / "vault")]
    assert list(project.iterdir()) == []


@pytest.mark.anyio
async def test_the_allow_list_names_real_tools_and_leaves_out_the_destructive_ones(service):
    async with Client(tools.build(service)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(integrations.ALLOWED_TOOLS) <= set(listed)
    assert all(not listed[name].annotations.destructive_hint for name in integrations.ALLOWED_TOOLS)
    left_out = set(listed) - set(integrations.ALLOWED_TOOLS)
    assert left_out and all(listed[name].annotations.destructive_hint for name in left_out)


def test_user_scope_serves_each_project_its_own_vault_from_any_subfolder(project: Path, tmp_path: Path):
    from mcp_server.cli.commands import vault_root
    from mcp_server.clients.hooks import find_vault

    init("--claude-code", "--scope", "user")
    other = tmp_path / "other-project"
    (other / "src" / "billing").mkdir(parents=True)
    os.chdir(other)
    init()  # a second project with its own vault, registered nowhere
    home = Path(os.environ["HOME"])
    [handler] = memdir_handlers(read(home / ".claude" / "settings.json"), "UserPromptSubmit")
    hook_args = shlex.split(handler["command"])[2:]  # memdir-hook prompt --vault X
    server_args = read(home / ".claude.json")["mcpServers"]["memdir"]["args"]
    for where, vault in ((project, project / ".memories"), (other / "src" / "billing", other / ".memories")):
        assert find_vault(hook_args[1], str(where)) == str(vault)
        os.chdir(where)
        assert vault_root(Path(server_args[2])) == vault


def test_the_project_mcp_server_finds_its_vault_when_claude_code_starts_in_a_subfolder(project: Path):
    from mcp_server.cli.commands import vault_root

    init("--claude-code")
    args = local_server(project)["args"]
    (project / "src" / "billing").mkdir(parents=True)
    os.chdir(project / "src" / "billing")
    assert vault_root(Path(args[2])) == project / ".memories"  # this machine's entry names the vault in full


def test_init_writes_the_full_path_of_the_memdir_script_so_hooks_run_without_path(project: Path):
    init("--claude-code")
    [handler] = memdir_handlers(read(project / ".claude" / "settings.local.json"), "UserPromptSubmit")
    command = shlex.split(handler["command"])[0]
    assert Path(command).is_absolute() and os.access(command, os.X_OK)
    result = subprocess.run(["/bin/sh", "-c", handler["command"]], input=b"{}", capture_output=True, timeout=60,
                            env={"HOME": os.environ["HOME"], "PATH": "/nonexistent", "CLAUDE_PROJECT_DIR": str(project)})
    assert result.returncode == 0 and b"no session_id" in result.stderr


def doctor_findings(project: Path) -> dict[str, dict]:
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    return {finding["check"]: finding for finding in json.loads(result.output)["claude_code"]}


def test_init_ends_by_saying_claude_code_must_trust_the_workspace(project: Path):
    output = init("--claude-code")
    assert "accept the workspace trust prompt" in output and "hasTrustDialogAccepted" in output
    assert "memdir doctor" in output.splitlines()[-1]


def test_doctor_says_the_workspace_is_not_trusted_until_claude_json_trusts_it(project: Path):
    init("--claude-code")
    user_config = Path(os.environ["HOME"]) / ".claude.json"

    def trusted(answer: bool) -> None:  # what Claude Code's trust prompt records, beside memdir's server entry
        config = read(user_config)
        config["projects"][str(project)]["hasTrustDialogAccepted"] = answer
        user_config.write_text(json.dumps(config))

    trusted(False)
    findings = doctor_findings(project)
    assert findings["hooks"]["ok"] and findings["hook command"]["ok"] and findings["mcp server"]["ok"]
    assert not findings["workspace trust"]["ok"] and "not trusted yet" in findings["workspace trust"]["detail"]
    trusted(True)
    assert doctor_findings(project)["workspace trust"]["ok"]


def test_doctor_names_a_missing_hook_and_a_hook_command_that_cannot_run(project: Path):
    init("--claude-code")
    path = project / ".claude" / "settings.local.json"
    settings = read(path)
    del settings["hooks"]["Stop"]
    for group in settings["hooks"]["UserPromptSubmit"]:
        for handler in group["hooks"]:
            handler["command"] = handler["command"].replace(shlex.split(handler["command"])[0], "/gone/bin/memdir-hook")
    path.write_text(json.dumps(settings))
    findings = CliRunner().invoke(cli, ["doctor"]).output
    assert "Claude Code MISSING: no memdir hook for Stop" in findings
    assert "Claude Code MISSING: hook command /gone/bin/memdir-hook not found" in findings


def test_doctor_says_hooks_of_an_earlier_init_find_no_vault_from_a_subfolder_until_init_runs_again(project: Path):
    init("--claude-code")
    path = project / ".claude" / "settings.local.json"
    settings = read(path)
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):  # what init wrote before the upward lookup
        for handler in memdir_handlers(settings, event):
            handler["command"] = handler["command"].replace('--vault ".memories"',
                                                            '--vault "${CLAUDE_PROJECT_DIR:-.}/.memories"')
    path.write_text(json.dumps(settings))
    findings = doctor_findings(project)
    assert findings["hooks"]["ok"] and findings["hook command"]["ok"]  # registered and runnable, yet stale
    assert not findings["hook form"]["ok"]
    assert str(path) in findings["hook form"]["detail"] and "subfolder" in findings["hook form"]["detail"]
    assert "Claude Code MISSING: memdir's hooks in" in CliRunner().invoke(cli, ["doctor"]).output
    assert "run memdir init --claude-code again" in findings["hook form"]["detail"]
    init("--claude-code")  # the advice works: the hooks are rewritten and doctor is content
    assert "hook form" not in doctor_findings(project)


def test_doctor_says_hooks_an_earlier_release_registered_start_slowly_until_init_runs_again(
        project: Path, monkeypatch: pytest.MonkeyPatch):
    from mcp_server.clients import hook_script

    init("--claude-code")
    path = project / ".claude" / "settings.local.json"
    settings = read(path)
    for event in ("SessionStart", "UserPromptSubmit", "Stop"):  # the console script, as before memdir-hook
        for handler in memdir_handlers(settings, event):
            script = shlex.split(handler["command"])[0]
            handler["command"] = handler["command"].replace(script, f"{integrations.memdir_command()} hook")
    path.write_text(json.dumps(settings))
    findings = doctor_findings(project)
    assert findings["hooks"]["ok"] and findings["hook command"]["ok"]  # registered and runnable, yet slow
    assert not findings["hook start"]["ok"]
    assert "twice the CPU" in findings["hook start"]["detail"]
    assert "run memdir init --claude-code again" in findings["hook start"]["detail"]
    with monkeypatch.context() as read_only:  # an installation that cannot hold memdir-hook keeps the console script
        read_only.setattr(hook_script, "writable", lambda folder: False)
        assert "hook start" not in doctor_findings(project)
    init("--claude-code")  # the advice works
    assert "hook start" not in doctor_findings(project)


def test_doctor_says_nothing_about_claude_code_for_a_user_without_it(project: Path):
    home = Path(os.environ["HOME"])
    assert not (home / ".claude.json").exists() and not (home / ".claude").exists()
    init()
    assert doctor_findings(project) == {}


def test_doctor_says_nothing_about_claude_code_in_a_project_that_does_not_use_memdir_there(project: Path):
    """The README's first command runs doctor on the example vault in the memdir checkout, for a user who
    has Claude Code: no "MISSING ... run memdir init" lines about a project nobody wired."""
    home = Path(os.environ["HOME"])
    (home / ".claude").mkdir()
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project): {"hasTrustDialogAccepted": True}}}))
    init()
    output = CliRunner().invoke(cli, ["doctor"]).output
    assert "Claude Code" not in output and "MISSING" not in output, output
    assert doctor_findings(project) == {}


def test_in_a_git_project_the_machines_settings_file_is_kept_out_of_git(project: Path):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    init("--claude-code")
    init("--claude-code")  # a second run adds nothing
    ignored = subprocess.run(["git", "-C", str(project), "check-ignore", "-q", ".claude/settings.local.json"])
    status = subprocess.run(["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True).stdout
    assert ignored.returncode == 0 and "settings.local.json" not in status and ".claude/settings.json" in status
    assert (project / ".git" / "info" / "exclude").read_text().count("settings.local.json") == 1


def test_a_symlinked_claude_json_stays_a_symlink(project: Path):
    home = Path(os.environ["HOME"])
    target = home / "dotfiles" / "claude.json"
    target.parent.mkdir()
    target.write_text("{}")
    (home / ".claude.json").symlink_to(target)
    init("--claude-code")
    assert (home / ".claude.json").is_symlink() and "memdir" in target.read_text()


def earlier_release_files(project: Path) -> None:
    """What an earlier memdir release committed: its server alone in .mcp.json, its hooks in settings.json."""
    (project / ".claude").mkdir()
    old_command = '/old/venv/bin/memdir hook prompt --vault "${CLAUDE_PROJECT_DIR:-.}/.memories"'
    (project / ".claude" / "settings.json").write_text(json.dumps({
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": old_command}]}]},
        "enabledMcpjsonServers": ["memdir"]}, indent=2) + "\n")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"memdir": {
        "type": "stdio", "command": "/old/venv/bin/memdir", "args": ["mcp", "--vault", ".memories"], "env": {}}}},
        indent=2) + "\n")


def git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, check=True).stdout


def test_a_committed_mcp_json_that_held_only_memdirs_server_is_removed_and_init_says_to_commit_it(project: Path):
    git(project, "init", "-q")
    earlier_release_files(project)
    git(project, "add", ".mcp.json", ".claude/settings.json")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "memdir, earlier release")
    output = init("--claude-code")
    assert not (project / ".mcp.json").exists()
    assert " D .mcp.json" in git(project, "status", "--porcelain").splitlines()
    assert f"Claude Code: {project / '.mcp.json'} removed" in output and "commit the deletion" in output
    assert local_server(project)["args"] == ["mcp", "--vault", str(project / ".memories")]
    assert set(read(project / ".claude" / "settings.json")) == {"permissions"}  # never empty: kept


def test_an_untracked_mcp_json_that_held_only_memdirs_server_is_removed_without_a_word_about_git(project: Path):
    earlier_release_files(project)
    output = init("--claude-code")
    assert not (project / ".mcp.json").exists()
    [line] = [line for line in output.splitlines() if ".mcp.json" in line]
    assert line.startswith(f"Claude Code: {project / '.mcp.json'} removed") and "git" not in line


@pytest.mark.parametrize("left", [{"$schema": "https://example.org/mcp.schema.json"},
                                  {"mcpServers": {"github": {"command": "gh-mcp"}}}])
def test_an_mcp_json_that_holds_anything_besides_memdir_is_kept(project: Path, left: dict):
    (project / ".mcp.json").write_text(json.dumps({**left, "mcpServers": {**left.get("mcpServers", {}),
                                                                         "memdir": {"command": "/old/memdir"}}}))
    output = init("--claude-code")
    assert read(project / ".mcp.json") == left and "removed" not in output


def saved_by_someone_else_once(monkeypatch: pytest.MonkeyPatch, name: str, change: Callable[[dict], None]) -> None:
    """Between init's read of `name` and its save, another program (Claude Code, an editor) saves it once."""
    original_parse = integrations._parse_json
    saved: list[Path] = []

    def parse_then_someone_saves(path: Path, data: bytes | None) -> dict:
        parsed = original_parse(path, data)
        if path.name == name and not saved:
            current = json.loads(path.read_text()) if path.exists() else {}
            change(current)
            path.write_text(json.dumps(current, indent=2) + "\n")
            saved.append(path)
        return parsed

    monkeypatch.setattr(integrations, "_parse_json", parse_then_someone_saves)


def test_an_mcp_json_edited_while_init_runs_is_kept_with_the_edit(project: Path, monkeypatch: pytest.MonkeyPatch):
    earlier_release_files(project)
    saved_by_someone_else_once(monkeypatch, ".mcp.json",
                               lambda config: config["mcpServers"].update({"github": {"command": "gh-mcp"}}))
    init("--claude-code")
    assert read(project / ".mcp.json") == {"mcpServers": {"github": {"command": "gh-mcp"}}}  # theirs, less memdir
    assert local_server(project) and memdir_handlers(read(project / ".claude" / "settings.local.json"), "Stop")


def test_claude_json_saved_by_claude_code_while_init_runs_keeps_both_changes(project: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text(json.dumps({"numStartups": 4}))
    saved_by_someone_else_once(monkeypatch, ".claude.json", lambda config: config.update(numStartups=5))
    init("--claude-code")
    assert read(home / ".claude.json")["numStartups"] == 5
    assert local_server(project)["args"] == ["mcp", "--vault", str(project / ".memories")]


def test_user_scope_keeps_a_save_claude_code_made_while_init_ran(project: Path, monkeypatch: pytest.MonkeyPatch):
    home = Path(os.environ["HOME"])
    saved_by_someone_else_once(monkeypatch, ".claude.json",
                               lambda config: config.setdefault("projects", {}).update({"/elsewhere": {}}))
    init("--claude-code", "--scope", "user")
    saved = read(home / ".claude.json")
    assert "/elsewhere" in saved["projects"] and "memdir" in saved["mcpServers"]


def claude_code_saves_at_every_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code saves ~/.claude.json again each time init has read it: init can never save it."""
    monkeypatch.setattr(vault_write, "pause", lambda seconds: None)
    original_parse = integrations._parse_json
    startups = itertools.count()

    def saves_after_each_read(path: Path, data: bytes | None) -> dict:
        parsed = original_parse(path, data)
        if path.name == ".claude.json":
            path.write_text(json.dumps({"numStartups": next(startups)}))
        return parsed

    monkeypatch.setattr(integrations, "_parse_json", saves_after_each_read)


def test_a_claude_json_that_changes_at_every_save_is_left_as_saved_and_named(project: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text("{}")
    claude_code_saves_at_every_read(monkeypatch)
    result = CliRunner().invoke(cli, ["init", "--claude-code"])
    assert result.exit_code != 0 and f"{home / '.claude.json'}: it changed every time" in result.output
    assert set(read(home / ".claude.json")) == {"numStartups"}  # their last save, untouched


def test_a_claude_json_half_saved_by_claude_code_is_read_again_once_the_save_is_done(project: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text(json.dumps({"numStartups": 4}))
    original_parse = integrations._parse_json
    torn, whole = b'{"numStartups": 5, "tip', json.dumps({"numStartups": 5, "tipsHistory": {}}).encode()
    saves = []

    def claude_code_saves_slowly(path: Path, data: bytes | None) -> dict:
        if path.name == ".claude.json":
            if not saves:
                saves.append("torn")
                parsed = original_parse(path, data)
                path.write_bytes(torn)  # it started saving after init read the file ...
                return parsed
            if data == torn:
                path.write_bytes(whole)  # ... and finished while init was reading its half-written save
        return original_parse(path, data)

    monkeypatch.setattr(integrations, "_parse_json", claude_code_saves_slowly)
    init("--claude-code")
    saved = read(home / ".claude.json")
    assert saved["numStartups"] == 5 and "tipsHistory" in saved
    assert local_server(project)["args"] == ["mcp", "--vault", str(project / ".memories")]


def test_a_dangling_claude_json_symlink_is_written_through_and_stays_a_symlink(project: Path):
    home = Path(os.environ["HOME"])
    target = home / "dotfiles" / "claude.json"  # the dotfile manager linked it before Claude Code made it
    target.parent.mkdir()
    (home / ".claude.json").symlink_to(target)
    init("--claude-code")
    assert (home / ".claude.json").is_symlink() and "memdir" in target.read_text()
    assert target.stat().st_mode & 0o777 == 0o600


def test_a_run_stopped_by_a_file_that_keeps_changing_names_the_files_it_already_saved(project: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch):
    claude_code_saves_at_every_read(monkeypatch)
    result = CliRunner().invoke(cli, ["init", "--claude-code"])
    assert result.exit_code != 0 and f"already saved: {project / '.claude' / 'settings.local.json'}" in result.output
    assert str(Path(os.environ["HOME"]) / ".claude.json") in result.output


def test_a_read_only_claude_json_is_left_alone_and_named_with_what_was_already_saved(project: Path):
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text("{}")
    (home / ".claude.json").chmod(0o400)
    result = CliRunner().invoke(cli, ["init", "--claude-code"])
    assert result.exit_code != 0 and "read-only" in result.output
    assert f"already saved: {project / '.claude' / 'settings.local.json'}" in result.output
    assert (home / ".claude.json").read_text() == "{}"


def test_a_new_claude_json_is_readable_by_its_owner_only(project: Path):
    init("--claude-code")
    assert (Path(os.environ["HOME"]) / ".claude.json").stat().st_mode & 0o777 == 0o600
