"""What `memdir doctor` warns about besides files that do not parse (read by the CLI and the server)."""

from __future__ import annotations

from typing import Any, Iterable

from vault import Memory


def warnings(memories: Iterable[Memory]) -> list[dict[str, Any]]:
    """A `privacy: private` file inside the project vault is readable by everyone with the repository."""
    return [{"path": m.path, "line": None,
             "reason": "privacy: private in the project vault: everyone with the repository can read it; "
                       f"`update_memory {m.id} fields={{privacy: private}}` moves it to your user vault"}
            for m in sorted(memories, key=lambda m: m.path) if m.privacy == "private"]
