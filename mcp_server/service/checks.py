"""What `memdir doctor` warns about besides files that do not parse (read by the CLI and the server)."""

from __future__ import annotations

import os
import re
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterable

from vault import Memory
from vault.carried_state import check_not_carried
from vault.errors import CarriedStateError
from vault.fields import problems
from vault.write import utc_now

# Two machines' clocks and time zones written wrong by hand are within a day; a date past that is a typo (2099 for
# 2024) or a clock far off, and it misleads: the memory reads as minutes old and sorts first in every timeline.
FUTURE_LEEWAY = timedelta(days=1)


def warnings(memories: Iterable[Memory], root: Path | None = None, user_root: Path | None = None,
             now: datetime | None = None) -> list[dict[str, Any]]:
    """Files that parse but will mislead: a `privacy: private` file inside the project vault (readable by
    everyone with the repository), per-type fields whose value does not fit (a deadline that is no date), a date
    in the future, and a user vault that the project's git would commit."""
    found = []
    now = now or utc_now()
    for m in sorted(memories, key=lambda m: m.path):
        if m.privacy == "private":
            found.append({"path": m.path, "line": None,
                          "reason": "privacy: private in the project vault: everyone with the repository can read it; "
                                    f"`update_memory {m.id} fields={{privacy: private}}` moves it to your user vault"})
        for key, reason in [*problems(m), *future_dates(m, now)]:
            found.append({"path": m.path, "line": _key_line(root, m.path, key), "reason": reason})
    return found + (carried(root) + folder_links(root) + moved_aside(root) + committed_user_vault(root, user_root)
                    if root is not None else [])


def future_dates(m: Memory, now: datetime) -> list[tuple[str, str]]:
    """The memory's own dates more than FUTURE_LEEWAY ahead of `now`, as (key, reason)."""
    dates = (("created_at", m.created_at), ("updated_at", m.updated_at), ("last_used_at", m.last_used_at))
    return [(key, f"{key} {when.isoformat()} is in the future: the memory reads as new and sorts first in every "
                  f"timeline until then; correct the date (this machine's clock says {now.date().isoformat()})")
            for key, when in dates if when is not None and when > now + FUTURE_LEEWAY]


GIT_SECONDS = 5


def carried(root: Path) -> list[dict[str, Any]]:
    """A `.memdir/` the repository commits: no command or server opens the vault's index until it is removed
    (vault/carried_state.py); doctor, which opens none, says so too."""
    try:
        unanswered = check_not_carried(root)
    except CarriedStateError as exc:
        return [{"path": ".memdir", "line": None, "reason": str(exc)}]
    return [] if unanswered is None else [{"path": ".memdir", "line": None, "reason": unanswered}]


def committed_user_vault(root: Path, user_root: Path | None) -> list[dict[str, Any]]:
    """A user vault inside the project's git work tree that git does not ignore: `git add -A` would commit every
    private memory. (Inside the vault folder itself it is refused at start: config.user_vault_root.) Silent when
    there is no git or no repository: nothing to commit to."""
    if user_root is None:
        return []
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=root, capture_output=True, text=True,
                             timeout=GIT_SECONDS, check=False)
        if top.returncode != 0 or not user_root.resolve().is_relative_to(Path(top.stdout.strip()).resolve()):
            return []
        ignored = subprocess.run(["git", "check-ignore", "-q", f"{user_root.resolve()}/"], cwd=top.stdout.strip(),
                                 capture_output=True, timeout=GIT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if ignored.returncode != 1:  # 0: ignored; 128: git could not tell
        return []
    return [{"path": str(user_root), "line": None,
             "reason": f"your user vault is inside this project's git repository ({top.stdout.strip()}) and git does not "
                       "ignore it: a `git add -A` commits every private memory. Add it to .gitignore, or set [vault] "
                       "user_vault (or $MEMDIR_USER_VAULT) to a folder outside the repository"}]


def folder_links(root: Path) -> list[dict[str, Any]]:
    """Folder symlinks in the vault: the walk follows none (vault/paths.py), so the notes below one are in no
    index; without this they were missing from every search with nothing said."""
    found = []
    for folder, dirs, _ in os.walk(root):  # lists a linked folder among `dirs`, never enters it
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in dirs:
            path = Path(folder, name)
            if path.is_symlink():
                found.append({"path": path.relative_to(root).as_posix(), "line": None,
                              "reason": "a folder symlink: memdir follows none (it could lead anywhere), so the notes "
                                        "below it are not read; move them into the vault"})
    return found


# Where the index owner moves a generation whose files did not load (indexer/generations.Layout.quarantine);
# read here by name so the CLI's doctor does not import the indexer (FAISS) to list a folder.
QUARANTINE = (".memdir", "quarantine")


def moved_aside(root: Path) -> list[dict[str, Any]]:
    """The index generations moved aside because their files did not load (rebuilt from the memory files)."""
    folder = root.joinpath(*QUARANTINE)
    names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    return [{"path": "/".join((*QUARANTINE, name)), "line": None,
             "reason": "index files that did not load (truncated or damaged), moved aside; the index was rebuilt "
                       "from the memory files. Kept for a look; safe to delete"} for name in names]


def _key_line(root: Path | None, path: str, key: str) -> int | None:
    """The frontmatter line of `key` in the file (1-based), for the report; None when it cannot be read."""
    if root is None:
        return None
    try:
        lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    pattern = re.compile(rf"^{re.escape(key)}\s*:")
    return next((n for n, line in enumerate(lines[1:], 2) if pattern.match(line)), None)
