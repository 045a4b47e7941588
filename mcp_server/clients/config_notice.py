"""A vault the server could not open because of its memdir.toml (or its committed .memdir/): said once per session by
the hooks, not silently.

The server records the reason (`.memdir/config-error.json`, with the size and times of the memdir.toml it read) when
it refuses the vault for a ConfigError, and removes it when it opens the vault. A hook that finds the record for the
memdir.toml as it is now tells the user (Claude Code's `systemMessage`) and the model (`additionalContext`) once per
session, and starts no server that would refuse the vault again; its event stays in the spool until the file is fixed.
An edited memdir.toml no longer matches the record, so the next hook asks the server again.

Imported by the hook process: standard library only, nothing imported beyond os.
"""

from __future__ import annotations

import os

from .. import plain_json as json
from .spool_names import session_tag

RECORD = os.path.join(".memdir", "config-error.json")
TOLD = os.path.join(".memdir", "config-error.told")  # session tags told, one a line
# The one setting read from the environment that can refuse the vault (mcp_server.config.USER_VAULT_ENV; not imported:
# the hook imports the standard library only): part of the stamp, so a fixed variable asks the server again.
USER_VAULT_ENV = "MEMDIR_USER_VAULT"
_REPOSITORY_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                   "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE")


def record(root: str | os.PathLike[str], reason: str, *, carried: bool = False) -> None:
    """Keep why the vault's memdir.toml was refused, or (`carried`) its .memdir/ that the repository commits, for the
    hooks (a read-only vault keeps nothing: best effort)."""
    stamp = _stamp(root)
    if stamp is None:
        return
    path = os.path.join(root, RECORD)
    kept = {"reason": reason, "config": stamp, **({"carried": True} if carried else {})}
    if _kept(path) == kept:
        return  # refused again for the same reason (a server asked each time): told once a session, not each time
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temp, "w", encoding="utf-8") as file:
            file.write(json.dumps(kept))
        os.replace(temp, path)
        _remove(os.path.join(root, TOLD))  # a new reason is told again
    except OSError:
        _remove(temp)


def clear(root: str | os.PathLike[str]) -> None:
    """The vault opened: nothing to tell any more."""
    _remove(os.path.join(root, RECORD))
    _remove(os.path.join(root, TOLD))


def pending_refusal(root: str | os.PathLike[str]) -> tuple[str, bool] | None:
    """(the recorded reason, whether it is a committed .memdir/) while it still holds: memdir.toml is the file it was
    recorded for, and a committed .memdir/ is still tracked (untracked with `git rm --cached` alone, the folder and the
    record in it stay: the server is asked again). Else None."""
    kept = _kept(os.path.join(root, RECORD))
    if kept is None or kept.get("config") != _stamp(root):
        return None
    carried = kept.get("carried") is True
    if carried and not _tracked(root):
        return None
    return kept["reason"], carried


def _tracked(root: str | os.PathLike[str]) -> bool:
    """Whether git still tracks anything under the vault's .memdir/ (run only while such a record is kept)."""
    import subprocess

    try:
        # Asked of the vault's own repository, as the server asks it (vault.carried_state.ask_git_in; not imported
        # here): a GIT_DIR inherited from elsewhere dropped the record, and every prompt started a server that refused.
        env = {key: value for key, value in os.environ.items() if key not in _REPOSITORY_ENV}
        listed = subprocess.run(["git", "ls-files", "-z", "--", ".memdir"], cwd=root, capture_output=True, timeout=5,
                                check=False, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return True  # cannot tell: keep saying what the server said
    return listed.returncode == 0 and bool(listed.stdout.strip(b"\0"))


def _kept(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as file:
            kept = json.loads(file.read())
    except (OSError, ValueError):
        return None
    return kept if isinstance(kept, dict) and isinstance(kept.get("reason"), str) else None


def first_telling(root: str | os.PathLike[str], session_id: object) -> bool:
    """True once per session (and reason): the caller tells it now. Two hooks racing may both tell: harmless."""
    tag = session_tag(session_id)
    path = os.path.join(root, TOLD)
    try:
        with open(path, encoding="utf-8") as file:
            if tag in file.read().split():
                return False
    except OSError:
        pass
    try:
        with open(path, "a", encoding="utf-8") as file:
            file.write(tag + "\n")
    except OSError:
        pass  # cannot remember it (a full disk): tell it each time rather than never
    return True


def telling(reason: str, server_held: bool = False) -> tuple[str, str]:
    """(the user's line, the model's line) for a vault refused for its memdir.toml; `server_held`: refused by a running
    server for a setting it read when it started (its own $MEMDIR_USER_VAULT), which only a new server reads again."""
    if server_held:
        return (f"memdir: no memories this session: {reason}. The running memdir server read that when it started: fix "
                "it, then run `memdir stop` and the next prompt starts one that reads it again; prompts and exchanges "
                "are kept until then.",
                f"memdir's memory vault is not available: {reason}. No memories were searched for this prompt and the "
                "memdir tools will fail until the user fixes it and restarts memdir's server (`memdir stop`).")
    user = (f"memdir: no memories this session: {reason}. Fix that line (`memdir doctor` checks the file); "
            "prompts and exchanges are kept until then.")
    model = (f"memdir's memory vault is not available: its memdir.toml has a value memdir cannot use ({reason}). "
             "No memories were searched for this prompt and the memdir tools will fail until the user fixes it.")
    return user, model


def carried_telling(reason: str) -> tuple[str, str]:
    """(the user's line, the model's line) for a vault the server refused because the repository commits its .memdir/
    (`reason`: the server's error, which names the commands that remove it)."""
    return (f"memdir: no memories this session: {reason}",
            "memdir's memory vault is not available: the repository commits the vault's .memdir/ folder (memdir's "
            "local index, which memdir does not read from a repository: it could run code). No memories were searched "
            f"for this prompt and the memdir tools will fail until the user removes it ({reason}).")


def _stamp(root: str | os.PathLike[str]) -> list[int | str | None] | None:
    try:
        found = os.stat(os.path.join(root, "memdir.toml"))
    except OSError:
        return None
    return [found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino, os.environ.get(USER_VAULT_ENV)]


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
