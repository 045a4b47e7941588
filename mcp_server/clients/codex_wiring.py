"""`memdir doctor`'s look at the Codex CLI wiring: the hooks, the MCP server, and project trust.

Codex (0.171) reads a project's .codex/ (config.toml, hooks.json) only when the project is trusted
(projects."<dir>".trust_level = "trusted" in ~/.codex/config.toml), keyed by the git root. It also
reviews new or changed hooks before running them; that review is kept by Codex itself, so doctor only
names it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from .claude_wiring import Finding, _memdir_hooks, _read, command_findings, hook_start_findings
from .integrations import HOOKS, SERVER_NAME

TRUST_ADVICE = ("start `codex` in {project} once and trust the folder, then choose \"Trust all and continue\" when it "
                "says \"Hooks need review\"; headless runs that vet the hooks pass --dangerously-bypass-hook-trust")


def check_codex(project: Path, home: Path) -> list[Finding]:
    """What is and is not wired for Codex in `project`; [] when its .codex/ names memdir nowhere."""
    hooks = _memdir_hooks(_read(project / ".codex" / "hooks.json"))
    server = SERVER_NAME in _table(_toml(project / ".codex" / "config.toml"), "mcp_servers")
    if not hooks and not server:
        return []
    missing = [event for event, *_ in HOOKS if event not in hooks]
    return [
        Finding("codex hooks", not missing, f"no memdir hook for {', '.join(missing)}: run memdir init --client codex"
                if missing else "SessionStart, UserPromptSubmit and Stop hooks registered in .codex/hooks.json"),
        Finding("codex mcp server", server, "memdir MCP server registered in .codex/config.toml" if server else
                "no memdir MCP server in .codex/config.toml: run memdir init --client codex"),
        *command_findings(hooks.values(), "Codex", "--client codex"),
        *hook_start_findings(hooks.values(), "--client codex"),
        _trust_finding(project, home),
    ]


def _trust_finding(project: Path, home: Path) -> Finding:
    projects = _table(_toml(home / ".codex" / "config.toml"), "projects")
    advice = TRUST_ADVICE.format(project=project)
    for folder in (project, *project.parents):
        level = _table(projects, str(folder)).get("trust_level")
        if level == "trusted":
            return Finding("codex project trust", True, f"{folder} is trusted in ~/.codex/config.toml "
                                                        "(Codex still asks once to review new hooks)")
        if level == "untrusted":
            break
    return Finding("codex project trust", False, f"{project} is not trusted: Codex ignores its .codex/ (no memdir "
                                                 f"server, no hooks) until it is; {advice}")


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _table(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}
