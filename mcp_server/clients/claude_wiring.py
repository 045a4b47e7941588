"""`memdir doctor`'s look at the Claude Code wiring: hooks, their command, the MCP server, workspace trust.

Claude Code ignores a project's hooks, permissions and MCP servers until the user has
trusted the workspace (`projects[<dir>].hasTrustDialogAccepted` in `~/.claude.json`), and a hook
whose command it cannot find fails silently (exit 127 in the debug log). memdir then seems to
do nothing; these checks say which piece is missing and how to add it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .hook_script import (SCRIPT_NAME, command_words, hook_event, runs_this_installation,
                          starts_through_console_script)
from .integrations import HOOKS, SERVER_NAME, memdir_command

OLD_VAULT_ARGUMENT = '--vault "${CLAUDE_PROJECT_DIR:-.}/.memories"'  # what init wrote before the upward lookup
TRUST_ADVICE = ("open Claude Code in {project} once (`claude`) and accept the trust prompt, or set "
                "projects[\"{project}\"].hasTrustDialogAccepted to true in {config} (headless runs)")


@dataclass(frozen=True)
class Finding:
    check: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_claude_code(project: Path, home: Path) -> list[Finding]:
    """What is and is not wired for Claude Code in `project`; [] when none of Claude Code's files names memdir
    for it (a user with Claude Code who does not use memdir there, such as the example vault in memdir's own
    checkout, is told nothing: as for the other clients)."""
    user_config_path = home / ".claude.json"
    user_config = _read(user_config_path)
    settings_files = [project / ".claude" / "settings.json", project / ".claude" / "settings.local.json",
                      home / ".claude" / "settings.json"]
    settings = {path: _read(path) for path in settings_files}
    hooks = {path: _memdir_hooks(found) for path, found in settings.items()}
    server = _server_entry(project, user_config)
    if not any(hooks.values()) and server is None:
        return []
    findings = [_hooks_finding(hooks)]
    commands = sorted({command for found in hooks.values() for command in found.values()})
    findings += command_findings(commands, "Claude Code", "--claude-code")
    findings += hook_start_findings(commands, "--claude-code")
    old = [path for path, found in settings.items() if _names_the_vault_the_old_way(found)]
    if old:
        findings.append(Finding("hook form", False, f"memdir's hooks in {', '.join(map(str, old))} name the vault the old "
                                                    f"way ({OLD_VAULT_ARGUMENT}), which finds no vault when Claude Code "
                                                    "starts in a subfolder (no context, no capture, tool calls denied): "
                                                    "run memdir init --claude-code again to rewrite them"))
    findings.append(Finding("mcp server", server is not None,
                            f"memdir MCP server registered in {server}" if server else
                            "no memdir MCP server in .mcp.json or ~/.claude.json: run memdir init --claude-code"))
    findings.append(_trust_finding(project, user_config, user_config_path))
    return findings


def _hooks_finding(hooks: dict[Path, dict[str, str]]) -> Finding:
    registered = {event for found in hooks.values() for event in found}
    missing = [event for event, *_ in HOOKS if event not in registered]
    where = ", ".join(str(path) for path, found in hooks.items() if found)
    if missing:
        return Finding("hooks", False, f"no memdir hook for {', '.join(missing)}: run memdir init --claude-code")
    return Finding("hooks", True, f"SessionStart, UserPromptSubmit and Stop hooks registered in {where}")


def command_findings(commands: Iterable[str], client: str, init_option: str, what: str = "hook command",
                     fails: str = "hooks") -> list[Finding]:
    """Whether each command a client starts memdir with is there and runs this installation: a virtual
    environment moved, deleted or made again elsewhere leaves every client's files naming the old one, and
    the client then fails to start it without a word on screen (Claude Code: exit 127 in its debug log)."""
    return [_command_finding(command, client, init_option, what, fails) for command in sorted(set(commands))]


def _command_finding(command: str, client: str, init_option: str, what: str, fails: str) -> Finding:
    path = Path(command)
    found = path.is_file() if path.is_absolute() else shutil.which(command) is not None
    if found and path.name == SCRIPT_NAME and not runs_this_installation(path):
        return Finding(what, False, f"{what} {command} runs another memdir than this one (moved, or installed "
                                    f"again elsewhere): run memdir init {init_option} again from this installation "
                                    "to rewrite it")
    if found:
        return Finding(what, True, f"{what} {command} found")
    return Finding(what, False, f"{what} {command} not found: {client}'s {fails} would fail to start; run memdir "
                                f"init {init_option} again from this installation")


def hook_start_findings(executables: Iterable[str], init_option: str) -> list[Finding]:
    """A finding when memdir's hooks start through the `memdir` console script where this installation would
    register `memdir-hook` (hooks registered by an earlier release keep their command until init runs again)."""
    console = memdir_command()
    slow = sorted({exe for exe in executables if starts_through_console_script(exe, console)})
    if not slow:
        return []
    return [Finding("hook start", False, f"memdir's hooks start through {', '.join(slow)} hook, as releases before "
                                         "memdir-hook registered them: each prompt's hook process then costs about "
                                         f"twice the CPU; run memdir init {init_option} again to register memdir-hook")]


def _server_entry(project: Path, user_config: dict[str, Any]) -> str | None:
    if SERVER_NAME in _servers(_read(project / ".mcp.json")):
        return str(project / ".mcp.json")
    project_entry = _project_entry(project, user_config)
    if SERVER_NAME in _servers(user_config) or SERVER_NAME in _servers(project_entry):
        return "~/.claude.json"
    return None


def _trust_finding(project: Path, user_config: dict[str, Any], path: Path) -> Finding:
    advice = TRUST_ADVICE.format(project=project, config=path)
    if not path.is_file():
        return Finding("workspace trust", False, f"{path} not found, so Claude Code has trusted no workspace yet: {advice}")
    trusted = next((folder for folder in (project, *project.parents)
                    if _project_entry(folder, user_config).get("hasTrustDialogAccepted") is True), None)
    if trusted is None:
        return Finding("workspace trust", False, f"{project} is not trusted yet: Claude Code ignores its hooks and "
                                                 f"MCP servers until it is; {advice}")
    return Finding("workspace trust", True, f"{trusted} is trusted in {path}")


def _names_the_vault_the_old_way(settings: dict[str, Any]) -> bool:
    """Whether a memdir hook in this settings file still has `--vault "${CLAUDE_PROJECT_DIR:-.}/..."`: installs
    keep the command init wrote until init runs again, and Claude Code sets CLAUDE_PROJECT_DIR to the folder
    it started in, so from a subfolder that path names no vault (the hooks now look upward from a relative one)."""
    for _, handler in _memdir_handlers_by_event(settings, (event for event, *_ in HOOKS)):
        words = command_words(handler.get("command"))
        vault = words[words.index("--vault") + 1] if "--vault" in words[:-1] else ""
        if "CLAUDE_PROJECT_DIR" in vault:
            return True
    return False


def _memdir_hooks(settings: dict[str, Any]) -> dict[str, str]:
    """Claude Code event -> the executable of memdir's hook handler for it."""
    return _memdir_hooks_in(settings, (event for event, *_ in HOOKS))


def _memdir_hooks_in(settings: dict[str, Any], events: Any) -> dict[str, str]:
    """Event -> the executable of memdir's hook handler for it, in a settings file of Claude Code's shape
    (Gemini CLI's too)."""
    return {event: command_words(handler.get("command"))[0] for event, handler in _memdir_handlers_by_event(settings, events)}


def _memdir_handlers_by_event(settings: dict[str, Any], events: Any) -> list[tuple[str, dict[str, Any]]]:
    """(event, handler) for each of memdir's hook handlers in a settings file of Claude Code's shape."""
    found = []
    table = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
    for event in events:
        groups = table.get(event) if isinstance(table.get(event), list) else []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) and isinstance(group.get("hooks"), list) else []
            for handler in handlers:
                if hook_event(command_words(handler.get("command") if isinstance(handler, dict) else None)):
                    found.append((event, handler))
    return found




def _project_entry(folder: Path, user_config: dict[str, Any]) -> dict[str, Any]:
    projects = user_config.get("projects") if isinstance(user_config.get("projects"), dict) else {}
    entry = projects.get(str(folder))
    return entry if isinstance(entry, dict) else {}


def _servers(config: dict[str, Any]) -> dict[str, Any]:
    servers = config.get("mcpServers")
    return servers if isinstance(servers, dict) else {}


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
