"""A vault's `.memdir/` that a repository carries: never read.

`.memdir/` holds what memdir derives and keeps on this machine: the index (whose keyword files Whoosh reads with
pickle, and whose vector file FAISS parses), the embedding cache, the spool of hook events the server applies, the
sessions. A repository that commits it (the vault's .gitignore leaves it out, but a commit may add it anyway)
hands its contents to every clone: opening such a vault ran the repository's code in the user's server on their
first prompt (bench/results/s21-attack21.md). So a vault whose `.memdir/` git tracks is not opened, and says how
to remove it; memdir rebuilds what it holds from the memory files.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from pathlib import Path
from typing import Mapping

from .errors import CarriedStateError

STATE = ".memdir"
GIT_SECONDS = 5.0
# What tells git which repository to read instead of the one it finds from its working folder (git's own
# `rev-parse --local-env-vars`, less the config): inherited from a git hook or a shell that set it, the question was
# asked of that other repository, which tracks no `.memdir/` of this vault, and a committed one was read.
REPOSITORY_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                  "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE")

log = logging.getLogger("memdir.vault")
_git_env: dict[str, str] | None = None  # set once by the entry point (ask_git_in): the environment git runs in
_told: set[Path] = set()  # vaults whose unanswered question was logged (once a process)
_told_lock = threading.Lock()


def check_not_carried(root: Path) -> str | None:
    """A CarriedStateError when git tracks anything under the vault's `.memdir/` (itself, a symlink in its place,
    or a file in it). None when it does not, or when there is no `.memdir/` yet or no repository. When the vault is
    in a repository and git does not answer (another user's repository, "dubious ownership"; no git; a damaged
    one), why, logged once: the `.memdir/` is read as memdir's own (its index generations are still checked against
    this user's stamp, state_stamp.py), and doctor says so."""
    if not os.path.lexists(root / STATE):
        return None  # nothing there to read: memdir makes it
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", STATE], cwd=root, capture_output=True,
                                timeout=GIT_SECONDS, check=False, env=_git_env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _unanswered(root, f"{type(exc).__name__}: {exc}")
    if listed.returncode != 0:
        said = listed.stderr.decode("utf-8", "replace").strip().splitlines()
        return _unanswered(root, said[0] if said else f"git exited {listed.returncode}")
    tracked = [name for name in listed.stdout.decode("utf-8", "replace").split("\0") if name]
    if not tracked:
        return None
    raise CarriedStateError(
        f"{root / STATE} is committed to the repository ({len(tracked):,} tracked "
        f"file{'s' if len(tracked) != 1 else ''}, e.g. {tracked[0]}): it is memdir's local index and state, and "
        "memdir does not read one a repository carries (it could run code). Remove it from git and delete it: "
        f"git rm -r -q --cached {STATE} && rm -rf {STATE} (in {root}); memdir rebuilds it from the memory files")


def ask_git_in(environment: Mapping[str, str] | None) -> None:
    """The environment the check runs git in: the entry point's, less what points git at another repository
    (REPOSITORY_ENV). None: this process's own, as for a library caller that names none."""
    global _git_env
    _git_env = None if environment is None else {k: v for k, v in environment.items() if k not in REPOSITORY_ENV}


def _unanswered(root: Path, why: str) -> str | None:
    """Why git could not say whether the repository holding `root` tracks its `.memdir/`; None outside a repository
    (git's "not a git repository", or no git and no `.git` above): nothing there can commit it."""
    if not any(os.path.lexists(folder / ".git") for folder in (root, *root.parents)):
        return None
    reason = (f"git could not say whether the repository commits {root / STATE} ({why}): it is read as memdir's own. "
              "If the repository is another user's, `git config --global --add safe.directory <its folder>` lets "
              "git answer")
    with _told_lock:
        first = root not in _told
        _told.add(root)
    if first:
        log.warning("%s", reason)
    return reason
