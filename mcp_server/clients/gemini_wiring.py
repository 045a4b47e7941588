"""`memdir doctor`'s look at the Gemini CLI wiring: the MCP server, the hooks, and folder trust.

Gemini CLI (0.61) has folder trust on by default: in a folder not trusted in ~/.gemini/trustedFolders.json
it ignores the project's .gemini/settings.json, so memdir's server does not connect ("Disabled" in
`gemini mcp list`) and its hooks never run, without a word. `gemini -p` in an untrusted folder exits
with an error instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .claude_wiring import Finding, _memdir_hooks_in, _read, _servers, command_findings, hook_start_findings
from .gemini import EVENTS
from .integrations import SERVER_NAME

TRUST_ADVICE = ("start `gemini` in {project} once and choose \"Trust folder\" (or run /permissions there); "
                "for headless runs pass --skip-trust or set GEMINI_CLI_TRUST_WORKSPACE=true")


def check_gemini(project: Path, home: Path) -> list[Finding]:
    """What is and is not wired for Gemini CLI in `project`; [] when neither the project nor the user has
    Gemini CLI settings that name memdir."""
    project_settings, user_settings = _read(project / ".gemini" / "settings.json"), _read(home / ".gemini" / "settings.json")
    hooks = {**_memdir_hooks_in(user_settings, EVENTS.values()), **_memdir_hooks_in(project_settings, EVENTS.values())}
    server = SERVER_NAME in _servers(project_settings) or SERVER_NAME in _servers(user_settings)
    if not hooks and not server:
        return []
    missing = [event for event in EVENTS.values() if event not in hooks]
    findings = [
        Finding("gemini hooks", not missing, f"no memdir hook for {', '.join(missing)}: run memdir init --client gemini"
                if missing else "SessionStart, BeforeAgent and AfterAgent hooks registered"),
        Finding("gemini mcp server", server, "memdir MCP server registered" if server else
                "no memdir MCP server in .gemini/settings.json: run memdir init --client gemini"),
    ]
    findings += command_findings(hooks.values(), "Gemini CLI", "--client gemini")
    return findings + hook_start_findings(hooks.values(), "--client gemini") + [_trust_finding(project, home, user_settings)]


def _trust_finding(project: Path, home: Path, user_settings: dict[str, Any]) -> Finding:
    security = user_settings.get("security") if isinstance(user_settings.get("security"), dict) else {}
    folder_trust = security.get("folderTrust") if isinstance(security.get("folderTrust"), dict) else {}
    if folder_trust.get("enabled") is False:
        return Finding("gemini folder trust", True, "folder trust is turned off in ~/.gemini/settings.json")
    path = home / ".gemini" / "trustedFolders.json"
    level = trust_level(project, _read(path))
    if level in ("TRUST_FOLDER", "TRUST_PARENT"):
        return Finding("gemini folder trust", True, f"{project} is trusted in {path}")
    state = "marked \"Don't trust\"" if level == "DO_NOT_TRUST" else "not trusted yet"
    return Finding("gemini folder trust", False,
                   f"{project} is {state}: Gemini CLI ignores its .gemini/settings.json (no memdir server, no hooks) "
                   f"until it is; {TRUST_ADVICE.format(project=project)}")


def trust_level(project: Path, rules: dict[str, Any]) -> str | None:
    """The rule of ~/.gemini/trustedFolders.json that decides for `project`, as Gemini CLI reads it: the
    longest matching folder wins; TRUST_PARENT trusts the parent of the folder it names."""
    best: tuple[int, str] | None = None
    for folder, level in rules.items():
        if not isinstance(level, str):
            continue
        effective = Path(folder).parent if level == "TRUST_PARENT" else Path(folder)
        if project == effective or effective in project.parents:
            if best is None or len(str(effective)) > best[0]:
                best = (len(str(effective)), level)
    return best[1] if best else None
