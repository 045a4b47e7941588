"""`memdir hook prompt|stop|session-start`: Claude Code's hooks, as tiny clients of this user's memdir server.

Standard library only (plus the stdlib client): a hook runs on every prompt. A hook always
exits 0 within its budget: it never blocks the user. When the server is down it starts it
in the background, and when the server has not opened this vault yet it opens it; either way this prompt
goes through without context. Prompt and Stop events are
written to .memdir/spool/ before anything else, so an exchange survives a hook process killed
mid-request (`claude -p` exits right after its answer) and a server that is down or hung.
"""

from __future__ import annotations

import os
import sys
import time

from .. import client, plain_json as json
from ..locate import nearest, uninitialized
from ..waiting import attempts
from . import config_notice
from .spool_names import session_tag

TYPE_CHECKING = False  # typing is not imported by a hook process (client.py)
if TYPE_CHECKING:
    from typing import Any, NoReturn

EVENTS = {"prompt": "UserPromptSubmit", "stop": "Stop", "session-start": "SessionStart"}
# How long a hook waits for the server. No hook may stall a turn on a hung server: within 1 s (process
# start included) it goes on. The events themselves are already safe in the spool, and a server that is
# merely slow goes on storing an exchange after the Stop hook has left.
TIMEOUTS = {"prompt": 0.9, "stop": 0.9, "session-start": 0.9}
# An event that could not be spooled (a full disk) while no server runs: how long its hook may hold the prompt, from
# its process's start, waiting for the server it starts to take the event (a cold server listens ~0.5 s after its
# start on an idle machine). Past it, the event is lost.
UNSPOOLED_START_SECONDS = 3.0
SPOOL = ".memdir/spool"
MAX_STDIN = 4 * 1024 * 1024
# The most of a prompt the server searches with (hooks_server.py) and so the most a hook sends. The search reads a
# long paste by its error lines and its user's sentences, which come last (indexer/salient.py): it is handed all
# of a prompt that size, not its beginning.
MAX_PROMPT_CHARS = 64_000
CLIENTS = ("claude-code", "gemini", "codex", "opencode")  # whose hook input and tool names (Claude Code's by default)
USAGE = ("usage: memdir hook prompt|stop|session-start [--vault PATH] [--client gemini|codex|opencode]  "
         "(reads the client's hook JSON on stdin; Claude Code's by default)")


def main(argv: list[str]) -> int:
    try:
        return _run(argv)
    except Exception as exc:  # a failing hook must never block the user: report and let the prompt through
        print(f"memdir hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 0


def _run(argv: list[str]) -> int:
    event, vault_arg, client_name = _arguments(argv)
    if event is None or client_name not in (None, *CLIENTS):
        print(USAGE, file=sys.stderr)
        return 0
    data = json.without_lone_surrogates(read_input(sys.stdin.buffer.read(MAX_STDIN + 1)))  # as the spool keeps it
    if not isinstance(data, dict) or not data.get("session_id"):
        print("memdir hook: no session_id in the hook input; nothing to do", file=sys.stderr)
        return 0
    adapter = None
    if client_name == "gemini":  # another client's words for the same events
        from . import gemini as adapter
        data = adapter.hook_input(event, data)
    root = find_vault(vault_arg, project_folder(client_name) or data.get("cwd"))
    if root is None:
        return 0
    payload = {**data, "client_pids": ancestors(), "client": client_name or "claude-code"}
    # First make the event durable (a millisecond), then hand it over: `claude -p` may kill this
    # process at any moment after it starts, and whatever the server did not take stays spooled.
    made = time.time_ns()  # when the event was made: its place in its session's order, spooled or not
    try:
        name = spool(root, event, payload)
    except OSError as exc:  # a full disk: the server still gets the event, and keeps it in its session's order
        print(f"memdir hook: the event could not be spooled ({exc}); handing it over unspooled", file=sys.stderr)
        name = None
    refused = config_notice.pending_refusal(root)
    if refused is not None:  # the server would refuse this vault again: say why instead, the event stays spooled
        _tell_refused(root, event, data["session_id"], refused[0], adapter, carried=refused[1])
        return 0
    request = {**payload, "spool": name} if name else payload
    if event == "prompt" and isinstance(request.get("prompt"), str) and len(request["prompt"]) > MAX_PROMPT_CHARS:
        # A pasted log would pass the server's request limit (1 MB) and the turn get no context; the server
        # reads no more than this of a prompt anyway, and a replay of the spool still has all of it.
        request = {**request, "prompt": request["prompt"][:MAX_PROMPT_CHARS]}
    info = client.running()
    timeout = TIMEOUTS[event]
    if info is None:
        client.start_detached(root)
        if name is not None or event == "session-start":
            return 0  # the server applies the spooled event once the vault is open
        # The event has no other copy: the server that is starting keeps it until the vault is open.
        info, timeout = started_server(UNSPOOLED_START_SECONDS - client.process_age(), start=root,
                                       inbox=_for_inbox(root, event, request, made))
        if info is None:
            _handed(event) if timeout > 0 else _lost(event)
            return 0
    try:
        result = client.request(info, "POST", f"/api/hook/{event}", request, timeout=timeout, vault=root)
    except (client.Unavailable, client.RemoteError) as exc:
        print(f"memdir hook: {exc}", file=sys.stderr)
        if name is None and event != "session-start" and _not_taken(exc):
            # The server is exiting (or has just gone) and the event has no other copy: the next server takes it.
            _to_next_server(root, event, request, made)
            return 0
        refused = config_notice.pending_refusal(root)  # the server has just refused the vault (its memdir.toml, ...)
        if refused is not None:
            _tell_refused(root, event, data["session_id"], refused[0], adapter, carried=refused[1])
        elif isinstance(exc, client.RemoteError) and exc.kind == "ConfigError":
            # A running server refused it for a setting it read when it started ($MEMDIR_USER_VAULT in its own
            # environment): the record's stamp follows this shell's variable, which the user may have fixed since,
            # and memory stayed off without a word until that server exited (review of session 18).
            _tell_refused(root, event, data["session_id"], str(exc), adapter, server_held=True)
        elif isinstance(exc, client.RemoteError) and exc.kind == "CarriedStateError":
            # The repository commits the vault's .memdir/ (vault/carried_state.py): the prompt went on without memory,
            # the reason only in the server's log (bench/results/s21-attack21.md, seen and left 5).
            _tell_refused(root, event, data["session_id"], str(exc), adapter, carried=True)
        return 0
    context = result.get("additionalContext") if isinstance(result, dict) else None
    if context and event in ("prompt", "session-start"):
        output = adapter.hook_output(event, context) if adapter else \
            {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": context}}
        sys.stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
    return 0


def leave(code: int) -> NoReturn:
    """End the hook process with `code` once what it printed is flushed, without the interpreter's teardown (freeing
    every module and object; nothing a hook holds needs it: its files are closed, a server it started is detached).
    The teardown was 6-8 of a hook process's 26-30 ms of CPU on the AVX2 machine (bench/results/s20-hook20.md)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: started with that descriptor closed (main reported what it could not print)
                stream.flush()
        except (OSError, ValueError):  # the client closed its end: nothing more to tell it
            pass
    os._exit(code)


def read_input(raw: bytes) -> Any:
    """The client's hook JSON (`raw`: up to MAX_STDIN + 1 bytes of stdin). Input that is not UTF-8, or over
    MAX_STDIN, is read as far as it can be by hook_input.py, imported only then (a hook's imports are its CPU)."""
    if len(raw) <= MAX_STDIN:
        try:
            text = json.decoded(raw, "surrogatepass")
        except UnicodeDecodeError:
            pass
        else:
            return json.loads(text or "{}")
    from . import hook_input
    return hook_input.parse(raw, MAX_STDIN)


def _tell_refused(root: str, event: str, session_id: object, reason: str, adapter: Any,
                  server_held: bool = False, carried: bool = False) -> None:
    """Once a session: the user (systemMessage, shown by Claude Code and Gemini CLI) and the model (its context)
    learn that the vault's memdir.toml (or its committed .memdir/: `carried`) keeps memdir off, and why."""
    if event not in ("prompt", "session-start") or not config_notice.first_telling(root, session_id):
        return
    user, model = config_notice.carried_telling(reason) if carried else config_notice.telling(reason, server_held)
    output = adapter.hook_output(event, model) if adapter else \
        {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": model}}
    sys.stdout.write(json.dumps({"systemMessage": user, **output}, ensure_ascii=False) + "\n")


def _not_taken(exc: Exception) -> bool:
    """Whether the server certainly did not take the event: it said it is exiting, or no server took the connection
    (it exited after this hook read its address). Not a server that went quiet: it may have applied the event."""
    return isinstance(exc, client.Refused) or isinstance(exc, client.RemoteError) and exc.kind == "Unavailable"


def _to_next_server(root: str, event: str, request: dict[str, Any], made: int) -> None:
    """An event with no other copy whose server is going: started again (once the old one has let go of its lock)
    and handed to it, within what is left of the unspooled budget; else said lost."""
    info, timeout = started_server(UNSPOOLED_START_SECONDS - client.process_age(), start=root,
                                   inbox=_for_inbox(root, event, request, made))
    try:
        if info is not None:
            client.request(info, "POST", f"/api/hook/{event}", request, timeout=timeout, vault=root)
            return
    except (client.Unavailable, client.RemoteError) as exc:
        print(f"memdir hook: {exc}", file=sys.stderr)
    _handed(event) if info is None and timeout > 0 else _lost(event)


def _lost(event: str) -> None:
    print(f"memdir hook: no memdir server took this {event} event within {UNSPOOLED_START_SECONDS:.0f} s; it could "
          "not be spooled, and is lost", file=sys.stderr)


def _handed(event: str) -> None:
    print(f"memdir hook: the {event} event was handed to the memdir server that is starting; it applies it once the "
          "vault is open", file=sys.stderr)


def _for_inbox(root: str, event: str, request: dict[str, Any], made: int) -> bytes:
    """The event as a starting server's inbox takes it (server/inbox.py): its vault and the time it was made."""
    return json.dumps({"vault": root, "event": event, "payload": request, "at": made}).encode()


def started_server(within: float, start: str | None = None,
                   inbox: bytes | None = None) -> tuple[client.ServerInfo | None, float]:
    """The server that is starting, once it listens, and what is left of `within` for its answer (the request's
    whole bound): the wait and the answer together never hold the prompt past `within`. With `start` (a vault),
    a server is started whenever none runs: one that was exiting holds its lock until it has gone, and only then
    can the next one start. With `inbox` (an event no spool could take), the event is handed to the server's inbox
    as soon as the starting process has opened it (server/inbox.py: before its imports, seconds before it listens):
    then (None, the time left), and (None, 0.0) when no server took it in time."""
    deadline = time.monotonic() + within
    for _ in attempts(within, 0.02, 0.1):
        info = client.running()
        if info is None and start is not None:
            client.start_detached(start)
        left = deadline - time.monotonic()
        if info is not None and left > 0:
            return info, left
        if info is None and inbox is not None and left > 0 and client.hand_to_inbox(inbox, left) is not False:
            return None, max(deadline - time.monotonic(), 1e-3)  # kept (or taken and not yet said: not sent twice)
    return None, 0.0


def _arguments(argv: list[str]) -> tuple[str | None, str | None, str | None]:
    event = argv[0] if argv and argv[0] in EVENTS else None
    return event, _option(argv, "--vault"), _option(argv, "--client")


def _option(argv: list[str], name: str) -> str | None:
    if name not in argv[1:]:
        return None
    position = argv.index(name, 1)
    return argv[position + 1] if position + 1 < len(argv) else None


def find_vault(explicit: str | None, cwd: Any) -> str | None:
    """--vault, else $MEMDIR_VAULT, else .memories, a relative one looked up upward from `cwd` (the client's
    project folder, else the hook's cwd; locate.py); only an initialized vault counts. A string: a hook process
    imports no pathlib (locate.py)."""
    base = cwd if isinstance(cwd, str) and cwd else os.getcwd()
    given = next((c for c in (explicit, os.environ.get("MEMDIR_VAULT")) if c), ".memories")
    # The first one given decides: a wrong vault is not silently replaced by another.
    root = os.path.abspath(nearest(given, base))
    return root if uninitialized(root) is None else None


def project_folder(client_name: str | None) -> str | None:
    """Where the client says the session's project is (the folder it started in, kept when the model
    `cd`s elsewhere): the start of the upward search for a relative vault. Codex and OpenCode name none."""
    variable = {None: "CLAUDE_PROJECT_DIR", "claude-code": "CLAUDE_PROJECT_DIR", "gemini": "GEMINI_PROJECT_DIR"}
    return os.environ.get(variable.get(client_name, ""), "") or None


def ancestors(depth: int = 5) -> list[int]:
    """This process's parent chain: lets the server tie this Claude Code session to its MCP connection."""
    chain = [os.getppid()]
    pid = chain[0]
    for _ in range(depth - 1):
        fields = client.proc_fields(pid) or []
        pid = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else 0  # its parent, or none to follow
        if pid <= 1:
            break
        chain.append(pid)
    return chain


def spool(root: str | os.PathLike[str], event: str, payload: dict[str, Any]) -> str | None:
    """Keep the event where the server finds it: it takes the file when the request arrives, and
    replays files no request claimed. Returns the file's name (None for an orientation).

    When the vault's spool cannot be written (a full disk), the event goes to this user's spare spool for the vault
    (client.spare_spool; memory under `$XDG_RUNTIME_DIR`), which the server reads as it reads the vault's: the event
    then has a copy whether or not a server comes in time. An OSError only when neither could be written."""
    if event == "session-start":
        return None  # an orientation is only useful now
    name = f"{time.time_ns()}-{os.getpid()}-{session_tag(payload.get('session_id'))}-{event}.json"
    text = json.dumps({"event": event, "payload": payload})
    try:
        _not_linked(root)
        _write_spooled(os.path.join(root, SPOOL), name, text)
    except OSError as exc:
        try:
            client.own_folder()  # this user's, private: the spare spools live in it
            spare = client.spare_spool(root)
            _own_folders(spare)
            _write_spooled(spare, name, text)
        except OSError:
            raise exc from None
        print(f"memdir hook: the vault's spool could not be written ({exc}); the event is kept in {spare} until "
              "the server applies it", file=sys.stderr)
    return name


def _not_linked(root: str | os.PathLike[str]) -> None:
    """An OSError when the vault's `.memdir` or its spool is a symlink: memdir makes neither one, and a repository or
    an archive that carries one had every prompt written wherever it pointed (bench/results/s21-attack21.md)."""
    folder = os.path.join(root, ".memdir")
    for path in (folder, os.path.join(folder, "spool")):
        if os.path.islink(path):
            raise OSError(f"{path} is a symlink; memdir writes no event through it")


def _own_folders(spare: str) -> None:
    """Make the spare spool's two folders (spool/, then the vault's) unless they are there, and check that each is a
    folder of this user's own, not a symlink: one planted as the servers folder's `spool/` had the events written
    wherever it pointed (a folder another user made there, named by the digest, could read them)."""
    for path in (os.path.dirname(spare), spare):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        status = os.lstat(path)
        if not os.path.isdir(path) or os.path.islink(path) or status.st_uid != os.getuid():
            raise OSError(f"{path} is not a folder of this user's own; no event is kept there")


def _write_spooled(folder: str, name: str, text: str) -> None:
    os.makedirs(folder, mode=0o700, exist_ok=True)
    temp = os.path.join(folder, f".{name}.tmp")
    try:
        with open(temp, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temp, os.path.join(folder, name))  # not fsynced: it guards against a killed process, not a power cut
    except OSError:
        try:
            os.remove(temp)  # a full disk: no torn temp file left behind
        except OSError:
            pass
        raise
