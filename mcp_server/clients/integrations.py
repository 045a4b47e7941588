"""Registering memdir with assistants: Claude Code's hooks, MCP server and permissions; snippets for others.

`memdir init --claude-code` merges memdir's entries into the JSON files Claude Code reads and
touches nothing else in them: the user's other hooks, servers and permissions stay as they
are, a second run changes nothing, and a file that is not valid JSON is reported, never
overwritten.

What names this machine's memdir (the hook commands and the MCP server, with the full path of the
`memdir` script) goes where Claude Code keeps one machine's settings: `.claude/settings.local.json`
(which Claude Code keeps out of git) and the project's entry in `~/.claude.json`. The committed
`.claude/settings.json` carries only memdir's tool permissions, which hold in every clone. A committed
file that held nothing but what an earlier release put there (`.mcp.json` with only memdir's
server) is removed rather than left behind as `{}`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from vault import ConfigError, ConflictError, VaultError
from vault.atomic import create_file, real_target, remove_file, replace_file
from vault.write import after_saves

from .hook_script import command_words, hook_event, hook_invocation, sh_quoted

SERVER_NAME = "memdir"
HOOKS = (  # (Claude Code event, memdir hook, timeout in seconds, runs in the background)
    ("SessionStart", "session-start", 10, False),
    ("UserPromptSubmit", "prompt", 10, False),
    # Not in the background: `claude -p` kills background hooks when it exits (about 150 ms after the
    # answer), before a hook process has even started Python. In the foreground the hook spools the
    # event (milliseconds) and waits at most 0.9 s for the server; the exchange survives either way.
    ("Stop", "stop", 60, False),
)
# Tools that only read, score or add: the model may call them without asking. Changing, merging
# and deleting memories keep Claude Code's confirmation prompt.
ALLOWED_TOOLS = (
    "get_context_insights", "search_memory", "read_memory", "get_memory_relationships", "search_linked_memories",
    "suggest_memory_merges", "get_memory_stats", "score_memories", "record_response", "add_to_memory_bank",
    "append_memory", "ingest_document", "verify_memory", "get_review_queue",
)
CLIENTS = ("cursor", "codex", "gemini", "opencode")
WIRED = ("claude-code", "gemini", "codex", "opencode")  # clients `memdir init --client` registers fully (tools, hooks, trust advice)
GEMINI_TRUST_NOTE = (  # Gemini CLI's folder trust, on by default: an untrusted folder loads no project settings
    "Next, in Gemini CLI: start `gemini` in {project} once and choose \"Trust folder\" (or run /permissions).\n"
    "Until the folder is trusted, Gemini CLI ignores .gemini/settings.json: no MCP servers, no hooks.\n"
    "Gemini CLI reads .gemini/settings.json only in the folder it starts in: start it in {project}, not a subfolder.\n"
    "For headless runs (gemini -p, CI), pass --skip-trust or set GEMINI_CLI_TRUST_WORKSPACE=true.\n"
    "Gemini CLI has no machine-local project settings file: .gemini/settings.json names this machine's\n"
    "memdir, so memdir keeps it out of git when git does not track it already.")
TRUST_NOTE = (  # Claude Code's rule, which otherwise makes a fresh setup look like memdir does nothing
    "Next, in Claude Code: start `claude` in {project} once and accept the workspace trust prompt. Until a\n"
    "workspace is trusted, Claude Code ignores its hooks, permissions and MCP servers. For headless runs\n"
    "(claude -p, CI), set projects[\"{project}\"].hasTrustDialogAccepted to true in ~/.claude.json.\n"
    "{scope}\n"
    "`memdir doctor` checks all of this.")
SCOPE_NOTES = {  # what the registration covers: one clone (project scope) or every project of this user
    "project": ("Each developer runs memdir init --claude-code once in their own clone (the hooks and the server name\n"
                "this machine's memdir; the committed .claude/settings.json holds only memdir's permissions)."),
    "user": ("The hooks and the server are registered for this user, in every project: each is served its own\n"
             ".memories vault (memdir init there makes one); nothing was written into this project's .claude/."),
}


@dataclass(frozen=True)
class Registration:
    """Where Claude Code will find memdir, and which files this run changed."""

    settings: Path  # the hooks
    servers: Path  # the MCP server
    changed: tuple[Path, ...]
    permissions: Path | None = None  # the tool permissions, when they live apart from the hooks (project scope)
    removed: tuple[Path, ...] = ()  # files emptied by moving memdir's entries out, so deleted
    removed_from_git: tuple[Path, ...] = ()  # those of them git tracks: the user commits the deletion

    def files(self) -> list[Path]:
        """The files that hold memdir's entries, then any other this run changed."""
        return list(dict.fromkeys(p for p in (self.permissions, self.settings, self.servers, *self.changed)
                                  if p is not None))


def memdir_command() -> str:
    """The full path of this installation's `memdir` script: Claude Code may run hooks without the
    PATH of the shell that ran init (a hook that cannot find `memdir` fails every prompt with exit 127,
    visible only in debug output)."""
    script = Path(sys.executable).with_name("memdir")
    if script.exists():
        return str(script.absolute())
    on_path = shutil.which("memdir")
    return str(Path(on_path).absolute()) if on_path else "memdir"


def vault_argument(vault_root: Path, project: Path | None) -> str:
    """How hooks and the MCP server name the vault. Inside the project it is a relative path, looked up
    from the folder the assistant runs in, upward, as git finds .git (locate.py): a session started in a
    subfolder finds the project's vault, and a user-scope registration serves each project its own. (It
    was `${CLAUDE_PROJECT_DIR}/.memories`, which Claude Code sets to the subfolder: no vault there.)
    A vault outside the project is named by its absolute path."""
    if project is not None:
        try:
            return vault_root.relative_to(project).as_posix()
        except ValueError:
            return str(vault_root)
    return str(vault_root)


def register_claude_code(vault_root: Path, scope: str, project: Path, home: Path | None = None) -> Registration:
    """Write memdir's hooks, MCP server and tool permissions into Claude Code's project or user files."""
    home = home or Path.home()
    if scope == "user":
        return _register_for_user(vault_root, project, home)
    if scope != "project":
        raise ConfigError(f"unknown scope {scope!r}: use project or user")
    shared_path = project / ".claude" / "settings.json"
    local_path = project / ".claude" / "settings.local.json"
    team_servers_path, user_config_path = project / ".mcp.json", home / ".claude.json"
    # Every file is read (and refused if broken) before any is written.
    raw = {path: _read_bytes(path) for path in (shared_path, local_path, team_servers_path, user_config_path)}
    for path, data in raw.items():
        _parse_json(path, data)
    command = memdir_command()
    edits = [  # memdir's new entries first: a run stopped by a conflict never leaves memdir unregistered
        # The permissions go here too: Claude Code started in a subfolder reads this file at the git root,
        # but the committed settings.json only in the folder it started in (2.1.332).
        (local_path, lambda c: _merge_hooks(c, hook_invocation(command), vault_argument(vault_root, project))
         | _merge_permissions(c)),
        (user_config_path,
         lambda c: _merge_server(_table(_table(_table(c, "projects"), str(project.absolute())), "mcpServers"),
                                 command, str(vault_root.absolute()))),
        # Earlier releases wrote this machine's paths into the committed files: moved out here.
        (shared_path, lambda c: _remove_hooks(c) | _drop_memdir(c, "enabledMcpjsonServers") | _merge_permissions(c)),
        (team_servers_path, lambda c: _drop_memdir(c, "mcpServers")),
    ]
    changed, removed, removed_from_git = [], [], []
    for path, edit in edits:
        try:
            done = _save_edit(path, raw[path], edit, empty_removes=True)
        except VaultError as exc:
            raise _partly_done(exc, changed + removed) from None
        if done == "written":
            changed.append(path)
        elif done == "removed":
            if _tracked_by_git(project, path):
                removed_from_git.append(path)
            removed.append(path)
    _keep_out_of_git(project, local_path)
    return Registration(local_path, user_config_path, tuple(changed), permissions=shared_path,
                        removed=tuple(removed), removed_from_git=tuple(removed_from_git))


def register_gemini(vault_root: Path, project: Path) -> Registration:
    """Write memdir's MCP server, hooks and tool approvals into the project's .gemini/settings.json.

    The vault is named relative to the project and found upward from the folder Gemini CLI runs in
    (locate.py), so a session started in a subfolder is served too."""
    path = project / ".gemini" / "settings.json"
    raw = _read_bytes(path)
    _parse_json(path, raw)  # refused, naming the line, before anything is written
    command = memdir_command()
    vault = vault_argument(vault_root, project)

    def edit(settings: dict[str, Any]) -> bool:
        return (_merge_server(_table(settings, "mcpServers"), command, vault, gemini=True)
                | _merge_gemini_hooks(settings, hook_invocation(command), vault) | _merge_gemini_allowed(settings))

    changed = (path,) if _save_edit(path, raw, edit) == "written" else ()
    _keep_out_of_git(project, path, "Gemini CLI settings")
    return Registration(path, path, changed)


CODEX_TRUST_NOTE = (  # Codex's two gates: project trust, then a review of new or changed hooks
    "Next, in Codex: start `codex` in {project} once, trust the folder, and when it says \"Hooks need review\"\n"
    "choose \"Trust all and continue\". Codex ignores .codex/ of an untrusted folder (projects.\"{project}\".\n"
    "trust_level = \"trusted\" in ~/.codex/config.toml) and runs no hook it has not trusted; headless runs\n"
    "(codex exec) that already vet the hooks pass --dangerously-bypass-hook-trust.\n"
    "Codex has no machine-local project config: .codex/config.toml and .codex/hooks.json name this machine's\n"
    "memdir, so memdir keeps them out of git when git does not track them already.")


def register_codex(vault_root: Path, project: Path) -> Registration:
    """Write memdir's MCP server into .codex/config.toml and its hooks into .codex/hooks.json. Codex's hooks
    take Claude Code's events, input and output, so they are Claude Code's handlers; the vault is named
    relative to the project and found upward from the folder Codex runs in."""
    config_path, hooks_path = project / ".codex" / "config.toml", project / ".codex" / "hooks.json"
    raw = {config_path: _read_bytes(config_path), hooks_path: _read_bytes(hooks_path)}
    _parse_toml(config_path, raw[config_path])  # both refused, naming the line, before either is written
    _parse_json(hooks_path, raw[hooks_path])
    command, vault = memdir_command(), vault_argument(vault_root, project)
    changed = save_kept_out_of_git(project, raw, "Codex settings", [
        (hooks_path, lambda c: _merge_hooks(c, hook_invocation(command), vault, client="codex"), {}),
        (config_path, lambda c: _merge_toml_server(c, command, vault),
         {"parse": _parse_toml, "render": lambda c: c["text"].encode()})])
    return Registration(hooks_path, config_path, changed)


def save_kept_out_of_git(project: Path, raw: dict[Path, bytes | None], what: str,
                         edits: list[tuple[Path, Callable[[dict[str, Any]], bool], dict[str, Any]]]) -> tuple[Path, ...]:
    """Apply each (file, edit, codec) to the file read as raw[file], in order, and keep each file out of git
    (a client with no machine-local project config); the files changed. A failure names those already saved."""
    changed: list[Path] = []
    for path, edit, codec in edits:
        try:
            if _save_edit(path, raw[path], edit, **codec) == "written":
                changed.append(path)
        except VaultError as exc:
            raise _partly_done(exc, changed) from None
        _keep_out_of_git(project, path, what)
    return tuple(changed)


def _parse_toml(path: Path, data: bytes | None) -> dict[str, Any]:
    """The file's text, for a textual edit, once it is known to be valid TOML (tomllib only reads)."""
    import tomllib

    try:
        text = (data or b"").decode("utf-8")
        tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc}); nothing was changed") from None
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _toml_error_line(str(exc))
        raise ConfigError(f"{path}:{line}: not valid TOML ({str(exc).split(' (at line')[0]}); nothing was changed") \
            from None
    return {"text": text}


def _toml_error_line(message: str) -> str:
    import re

    found = re.search(r"at line (\d+)", message)
    return found.group(1) if found else "1"


# Codex starts an MCP server with a short list of the environment (HOME, PATH, LANG, ...), its hooks with all
# of it. Where XDG_RUNTIME_DIR is set (a desktop login) the hooks found the server registered under it and
# `memdir mcp` looked under ~/.cache, started a second server that was refused the vault, and every tool call
# failed (found by the e2e test sharing a server through XDG_RUNTIME_DIR).
CODEX_FORWARDED = ("XDG_RUNTIME_DIR",)


def _merge_toml_server(config: dict[str, Any], command: str, vault: str) -> bool:
    """memdir's [mcp_servers.memdir] table, appended or brought up to date in place; the rest of the text
    (the user's comments and order) is kept as written."""
    import re
    import tomllib

    wanted = {"command": command, "args": ["mcp", "--vault", vault], "startup_timeout_sec": 30, "tool_timeout_sec": 60,
              "env_vars": list(CODEX_FORWARDED)}
    text = config["text"]
    if tomllib.loads(text).get("mcp_servers", {}).get(SERVER_NAME) == wanted:
        return False
    block = (f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(command)}\n"
             f"args = [{', '.join(json.dumps(a) for a in wanted['args'])}]\n"
             f"startup_timeout_sec = 30\ntool_timeout_sec = 60\nenv_vars = {json.dumps(list(CODEX_FORWARDED))}\n")
    header = re.compile(rf"^\[mcp_servers\.{SERVER_NAME}\]\s*$", re.MULTILINE)
    found = header.search(text)
    if found is None:
        config["text"] = text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text.strip() else "") + block
    else:
        following = re.compile(r"^\[", re.MULTILINE).search(text, found.end())
        end = following.start() if following else len(text)
        config["text"] = text[:found.start()] + block + ("\n" if following else "") + text[end:]
    if tomllib.loads(config["text"]).get("mcp_servers", {}).get(SERVER_NAME) != wanted:
        raise ConfigError(f"Codex config: memdir's [mcp_servers.{SERVER_NAME}] is written in a form memdir cannot "
                          "update (an inline table?); remove it and run again")
    return True


def _merge_gemini_hooks(settings: dict[str, Any], invocation: list[str], vault: str) -> bool:
    from .gemini import EVENTS

    before = json.dumps(settings, sort_keys=True)
    hooks = _table(settings, "hooks")
    for name, event in EVENTS.items():
        _, _, timeout, _ = next(h for h in HOOKS if h[1] == name)
        wanted = {"type": "command", "name": f"memdir-{name}", "timeout": timeout * 1000,
                  "command": hook_command(invocation, name, vault) + " --client gemini"}
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"Gemini CLI settings: hooks.{event} is not a list; fix it by hand and run again")
        _replace_or_add_hook(groups, name, wanted)
    return json.dumps(settings, sort_keys=True) != before


def _merge_gemini_allowed(settings: dict[str, Any]) -> bool:
    """The read, score and add tools run without a confirmation (Gemini names MCP tools mcp_<server>_<tool>)."""
    allowed = _table(settings, "tools").setdefault("allowed", [])
    if not isinstance(allowed, list):
        raise ConfigError("Gemini CLI settings: tools.allowed is not a list; fix it by hand and run again")
    missing = [rule for rule in (f"mcp_{SERVER_NAME}_{tool}" for tool in ALLOWED_TOOLS) if rule not in allowed]
    allowed += missing
    return bool(missing)


def _git(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, timeout=10)


def _tracked_by_git(project: Path, path: Path) -> bool:
    try:
        return _git(project, "ls-files", "--error-unmatch", "--", str(path)).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False  # no git here


def _keep_out_of_git(project: Path, path: Path, what: str = "Claude Code hooks") -> None:
    """Claude Code keeps settings.local.json out of git when it creates the file; when memdir creates it,
    memdir does, in the clone's own .git/info/exclude (nothing committed changes)."""
    try:
        if _git(project, "rev-parse", "--is-inside-work-tree").stdout.strip() != "true":
            return
        if _git(project, "check-ignore", "-q", str(path)).returncode == 0:
            return
        exclude = Path(project, _git(project, "rev-parse", "--git-path", "info/exclude").stdout.strip())
        toplevel = _git(project, "rev-parse", "--show-toplevel").stdout.strip()
        relative = path.resolve().relative_to(Path(toplevel).resolve())
    except (OSError, ValueError, subprocess.SubprocessError):
        return  # no git, or the file is outside the work tree: nothing to keep out
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as handle:
        handle.write(f"# memdir init: this machine's {what}\n/{relative.as_posix()}\n")


def _register_for_user(vault_root: Path, project: Path, home: Path) -> Registration:
    """User scope: every project of this user, each served its own vault (found from Claude Code's folder)."""
    settings_path, servers_path = home / ".claude" / "settings.json", home / ".claude.json"
    vault = vault_argument(vault_root, project)  # never one project's absolute vault for all
    raw = {path: _read_bytes(path) for path in (settings_path, servers_path)}
    for path, data in raw.items():
        _parse_json(path, data)  # both are refused if broken before either is written
    command = memdir_command()
    edits = [(settings_path, lambda c: _merge_hooks(c, hook_invocation(command), vault) | _merge_permissions(c)),
             (servers_path, lambda c: _merge_server(_table(c, "mcpServers"), command, vault))]
    changed: list[Path] = []
    for path, edit in edits:
        try:
            if _save_edit(path, raw[path], edit) == "written":
                changed.append(path)
        except VaultError as exc:
            raise _partly_done(exc, changed) from None
    return Registration(settings_path, servers_path, tuple(changed))


def hook_command(invocation: list[str], event: str, vault: str) -> str:
    """A hook's command line: `invocation` (hook_script.hook_invocation) for `event`, about `vault`."""
    return " ".join(_shell_word(word) for word in invocation) + f" {event} --vault {_vault_word(vault)}"


def _vault_word(vault: str) -> str:
    """The vault in double quotes, as init has always written it, unless its name holds what a shell still expands
    there: then in single quotes. A vault named `.memories $(touch x)` ran its command substitution on every hook
    (bench/results/s20-attack20.md)."""
    return f'"{vault}"' if not any(c in vault for c in '$`"\\!\n') else sh_quoted(vault)


def _shell_word(word: str) -> str:
    return word if all(c.isalnum() or c in "/._-+" for c in word) else sh_quoted(word)


def _merge_hooks(settings: dict[str, Any], invocation: list[str], vault: str, client: str = "") -> bool:
    """memdir's handlers in Claude Code's hook format (Codex reads it too: `client` "codex" says whose)."""
    before = json.dumps(settings, sort_keys=True)
    hooks = _table(settings, "hooks")
    suffix = f" --client {client}" if client else ""
    for event, name, timeout, background in HOOKS:
        wanted: dict[str, Any] = {"type": "command", "command": hook_command(invocation, name, vault) + suffix,
                                  "timeout": timeout}
        if background:
            wanted["async"] = True
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"Claude Code settings: hooks.{event} is not a list; fix it by hand and run again")
        _replace_or_add_hook(groups, name, wanted)
    return json.dumps(settings, sort_keys=True) != before


def _merge_permissions(settings: dict[str, Any]) -> bool:
    permissions = _table(settings, "permissions")
    allow = permissions.setdefault("allow", [])
    if not isinstance(allow, list):
        raise ConfigError("Claude Code settings: permissions.allow is not a list; fix it by hand and run again")
    missing = [rule for rule in (f"mcp__{SERVER_NAME}__{tool}" for tool in ALLOWED_TOOLS) if rule not in allow]
    allow += missing
    return bool(missing)


def _remove_hooks(settings: dict[str, Any]) -> bool:
    """Take memdir's own hook handlers out of a settings file (the user's other hooks stay)."""
    table = settings.get("hooks")
    removed = False
    for event, name, *_ in HOOKS if isinstance(table, dict) else ():
        for group in table.get(event) if isinstance(table.get(event), list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list):
                kept = [h for h in handlers if not _is_memdir_hook(h, name)]
                removed |= len(kept) != len(handlers)
                group["hooks"] = kept
        if isinstance(table.get(event), list):
            table[event] = [g for g in table[event] if not (isinstance(g, dict) and g.get("hooks") == [])]
            if not table[event]:
                del table[event]
    if isinstance(table, dict) and not table and removed:
        del settings["hooks"]
    return removed


def _drop_memdir(config: dict[str, Any], key: str) -> bool:
    """Take memdir out of `config[key]`, a list of server names or a table of servers (dropping the key
    when nothing else is left in it); True when it was there."""
    value = config.get(key)
    if not (isinstance(value, (list, dict)) and SERVER_NAME in value):
        return False
    if isinstance(value, list):
        value.remove(SERVER_NAME)
    else:
        del value[SERVER_NAME]
    if not value:
        del config[key]
    return True


def _is_memdir_hook(handler: Any, name: str) -> bool:
    return isinstance(handler, dict) and hook_event(command_words(handler.get("command"))) == name


def _replace_or_add_hook(groups: list[Any], name: str, wanted: dict[str, Any]) -> None:
    """Update memdir's handler for this event where it is (a moved vault, a new path), or add it."""
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for position, handler in enumerate(handlers if isinstance(handlers, list) else []):
            if _is_memdir_hook(handler, name):
                handlers[position] = wanted
                return
    groups.append({"hooks": [wanted]})


def _merge_server(servers: dict[str, Any], command: str, vault: str, gemini: bool = False) -> bool:
    """memdir's entry in an `mcpServers` table, written or brought up to date."""
    wanted: dict[str, Any] = {"type": "stdio", "command": command, "args": ["mcp", "--vault", vault], "env": {}}
    if gemini:  # Gemini CLI infers stdio from `command`, and waits `timeout` ms for a tool call
        wanted = {"command": command, "args": ["mcp", "--vault", vault], "timeout": 30000}
    if servers.get(SERVER_NAME) == wanted:
        return False
    servers[SERVER_NAME] = wanted
    return True


def _table(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"Claude Code settings: {key} is not an object; fix it by hand and run again")
    return value


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc}); nothing was changed") from None


def _parse_json(path: Path, data: bytes | None) -> dict[str, Any]:
    try:
        text = (data or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc}); nothing was changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); nothing was changed") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: expected a JSON object; nothing was changed")
    return data


def _save_edit(path: Path, raw: bytes | None, edit: Callable[[dict[str, Any]], bool],
               empty_removes: bool = False, parse: Callable[[Path, bytes | None], dict[str, Any]] | None = None,
               render: Callable[[dict[str, Any]], bytes] | None = None) -> str | None:
    """Apply `edit` to the JSON object `path` held when it was read as `raw`, and save the result only
    if the file still holds `raw`; if someone saved it meanwhile (Claude Code, an editor), read it again
    and apply the edit to their version, so neither change is lost. With `empty_removes`, a file the
    edit left empty is removed rather than saved as `{}`. Returns "written", "removed" or None (nothing
    to change). The first read must parse (callers check every file before writing any); a later
    read that does not may be the other program's save half written, and is read again, as the
    vault's writer waits out an editor's save (`after_saves`)."""
    data, first = raw, True

    def attempt() -> str | None:
        nonlocal data, first
        if not first:
            data = _read_bytes(path)
        try:
            config = (parse or _parse_json)(path, data)
        except ConfigError:
            if first:
                raise
            return None
        finally:
            first = False
        if not edit(config):
            return NOTHING
        try:
            if config or not empty_removes or path.is_symlink():
                _write_json(path, config, data, render)
                return "written"
            remove_file(path, data or b"")  # an empty `{}` would be litter in a committed file
            return "removed"
        except ConflictError:
            return None

    done = after_saves(attempt)
    if done is None:
        raise ConfigError(f"{path}: it changed every time memdir was about to save it, for half a second; "
                          "memdir left it as it is; run the command again")
    return None if done == NOTHING else done


NOTHING = "nothing to change"


def _partly_done(exc: VaultError, saved: list[Path]) -> VaultError:
    """`exc` (a conflict, a file that cannot be read or written), saying which files were already saved
    when it stopped the run."""
    return ConfigError(f"{exc} (already saved: {', '.join(map(str, saved))})") if saved else exc


def _write_json(path: Path, data: dict[str, Any], expected: bytes | None,
                render: Callable[[dict[str, Any]], bytes] | None = None) -> None:
    """Save `data` to `path` if it still holds `expected` (None: if it still does not exist); ConflictError if not."""
    text = render(data) if render else (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
    if expected is not None:
        replace_file(path, text, expected)  # keeps its mode; a dotfile manager's symlink stays a symlink
        return
    # Through a dangling symlink too (a dotfile manager's link made before the file); the mode goes by
    # the name the user sees: ~/.claude.json holds credentials.
    create_file(real_target(path), text, mode=0o600 if path.name == ".claude.json" else 0o644)


def client_config(client: str, vault_root: Path) -> str:
    """The snippet that registers memdir's MCP server with another assistant (they have no per-prompt hooks)."""
    command, vault = memdir_command(), str(vault_root)
    args = ["mcp", "--vault", vault]
    if client == "cursor":
        return ("# .cursor/mcp.json (project) or ~/.cursor/mcp.json\n"
                + json.dumps({"mcpServers": {SERVER_NAME: {"command": command, "args": args}}}, indent=2))
    if client == "gemini":
        return ("# .gemini/settings.json (project) or ~/.gemini/settings.json\n"
                + json.dumps({"mcpServers": {SERVER_NAME: {"command": command, "args": args, "timeout": 30000}}},
                             indent=2))
    if client == "opencode":
        return ("# opencode.json (project) or ~/.config/opencode/opencode.json\n"
                + json.dumps({"$schema": "https://opencode.ai/config.json",
                              "mcp": {SERVER_NAME: {"type": "local", "command": [command, *args], "enabled": True}}},
                             indent=2))
    if client == "codex":
        quoted = ", ".join(json.dumps(a) for a in args)
        return ("# ~/.codex/config.toml (or .codex/config.toml in a trusted project)\n"
                f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(command)}\nargs = [{quoted}]\n"
                f"startup_timeout_sec = 30\ntool_timeout_sec = 60\nenv_vars = {json.dumps(list(CODEX_FORWARDED))}")
    raise ConfigError(f"unknown client {client!r}: choose one of {', '.join(CLIENTS)}")
