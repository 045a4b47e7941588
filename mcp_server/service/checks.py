"""What `memdir doctor` warns about besides files that do not parse (read by the CLI and the server)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

from vault import Memory
from vault.fields import problems


def warnings(memories: Iterable[Memory], root: Path | None = None) -> list[dict[str, Any]]:
    """Files that parse but will mislead: a `privacy: private` file inside the project vault (readable by
    everyone with the repository), and per-type fields whose value does not fit (a deadline that is no date)."""
    found = []
    for m in sorted(memories, key=lambda m: m.path):
        if m.privacy == "private":
            found.append({"path": m.path, "line": None,
                          "reason": "privacy: private in the project vault: everyone with the repository can read it; "
                                    f"`update_memory {m.id} fields={{privacy: private}}` moves it to your user vault"})
        for key, reason in problems(m):
            found.append({"path": m.path, "line": _key_line(root, m.path, key), "reason": reason})
    return found + (folder_links(root) + moved_aside(root) if root is not None else [])


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
