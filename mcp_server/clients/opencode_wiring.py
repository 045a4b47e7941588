"""memdir in OpenCode: the MCP server and a plugin, both in the project's .opencode/ folder.

OpenCode has no command hooks; its convention is a plugin, a JavaScript module it discovers in a
project's `.opencode/plugins/`. memdir's plugin (opencode_plugin.js) calls `memdir hook session-start`
and `memdir hook prompt` from OpenCode's `chat.message` hook, adds what they return to the system
prompt (`experimental.chat.system.transform`), and calls `memdir hook stop` with the last answer when
the session goes idle. The server goes in `.opencode/opencode.json`, which OpenCode merges over the
user's and the project's opencode.json, so a team's own opencode.json is never touched.

Both files name this machine's `memdir`, and OpenCode has no machine-local project file: memdir keeps
them out of git when git does not track them already (as for Gemini CLI and Codex). The vault is named
relative, found upward from the folder OpenCode runs in. OpenCode 1.18 asks for no folder or plugin
trust: a project's config and plugins load as they are (the e2e test runs in a folder nobody approved).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from .claude_wiring import Finding, _read, command_findings, hook_start_findings
from .hook_script import hook_invocation
from .integrations import (SERVER_NAME, Registration, _parse_json, _read_bytes, _table, memdir_command,
                           save_kept_out_of_git, vault_argument)

PLUGIN_SOURCE = Path(__file__).with_name("opencode_plugin.js")
NOTE = ("Next, in OpenCode: nothing to approve (OpenCode asks for no folder or plugin trust); the plugin and\n"
        "the MCP server load when `opencode` next starts in {project}; `opencode mcp list` shows memdir.\n"
        "OpenCode has no machine-local project config: .opencode/opencode.json and .opencode/plugins/memdir.js\n"
        "name this machine's memdir, so memdir keeps them out of git when git does not track them already.")


def files(project: Path) -> tuple[Path, Path]:
    """(the config holding memdir's MCP server, memdir's plugin)."""
    folder = project / ".opencode"
    return folder / "opencode.json", folder / "plugins" / "memdir.js"


def register_opencode(vault_root: Path, project: Path) -> Registration:
    """Write memdir's MCP server into .opencode/opencode.json and its plugin into .opencode/plugins/memdir.js."""
    config_path, plugin_path = files(project)
    raw = {path: _read_bytes(path) for path in (config_path, plugin_path)}
    _parse_json(config_path, raw[config_path])  # refused, naming the line, before anything is written
    command, vault = memdir_command(), vault_argument(vault_root, project)
    plugin = plugin_text(hook_invocation(command), vault)
    changed = save_kept_out_of_git(project, raw, "OpenCode settings", [
        (config_path, lambda c: _merge_server(c, command, vault), {}),
        (plugin_path, lambda c: _replace_text(c, plugin),
         {"parse": lambda _path, data: {"text": data or b""}, "render": lambda c: c["text"]})])
    return Registration(plugin_path, config_path, changed)


def plugin_text(invocation: list[str], vault: str) -> bytes:
    """The plugin, running `invocation` (hook_script.hook_invocation) for memdir's hooks, about `vault`."""
    source = PLUGIN_SOURCE.read_text()
    return source.replace("__HOOK__", json.dumps(invocation)).replace("__VAULT__", json.dumps(vault)).encode()


def _replace_text(holder: dict[str, Any], wanted: bytes) -> bool:
    if holder["text"] == wanted:
        return False
    holder["text"] = wanted
    return True


def _merge_server(config: dict[str, Any], command: str, vault: str) -> bool:
    wanted = {"type": "local", "command": [command, "mcp", "--vault", vault], "enabled": True}
    servers = _table(config, "mcp")
    if servers.get(SERVER_NAME) == wanted:
        return False
    config.setdefault("$schema", "https://opencode.ai/config.json")
    servers[SERVER_NAME] = wanted
    return True


def check_opencode(project: Path) -> list[Finding]:
    """What is and is not wired for OpenCode in `project`; [] when its .opencode/ names memdir nowhere."""
    config_path, plugin_path = files(project)
    mcp = _read(config_path).get("mcp")
    server = mcp.get(SERVER_NAME) if isinstance(mcp, dict) else None
    if server is None and not plugin_path.is_file():
        return []
    findings = [Finding("opencode mcp server", isinstance(server, dict),
                        "memdir MCP server registered in .opencode/opencode.json" if server else
                        "no memdir in mcp of .opencode/opencode.json: run memdir init --client opencode"),
                Finding("opencode plugin", plugin_path.is_file(),
                        "memdir's plugin in .opencode/plugins/memdir.js (OpenCode asks for no trust)"
                        if plugin_path.is_file() else
                        "no .opencode/plugins/memdir.js (no context, no capture): run memdir init --client opencode")]
    if isinstance(server, dict) and isinstance(server.get("command"), list) and server["command"]:
        findings += command_findings([str(server["command"][0])], "OpenCode", "--client opencode",
                                     what="MCP server command", fails="memdir tools")
    hooks = _plugin_hook_executables(plugin_path)
    findings += command_findings(hooks, "OpenCode", "--client opencode")
    findings += hook_start_findings(hooks, "--client opencode")
    if shutil.which("opencode") is None:
        findings.append(Finding("opencode binary", False, "opencode is not on PATH (npm install -g opencode-ai); "
                                                          "the configuration is ready for it"))
    return findings


def _plugin_hook_executables(plugin_path: Path) -> list[str]:
    """What memdir's plugin starts for a hook: its `HOOK` words' first (`memdir-hook`, or the console script), or
    the `MEMDIR` console script a plugin from before `memdir-hook` names; [] for no plugin or one not memdir's."""
    try:
        text = plugin_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found = re.search(r"^const HOOK = (\[.*?\]);", text, re.M) or re.search(r'^const MEMDIR = (".*?");', text, re.M)
    try:
        named = json.loads(found.group(1)) if found else None
    except ValueError:
        return []
    first = named[0] if isinstance(named, list) and named else named
    return [first] if isinstance(first, str) else []
