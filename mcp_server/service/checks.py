"""What `memdir doctor` warns about besides files that do not parse (read by the CLI and the server)."""

from __future__ import annotations

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
    return found


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
