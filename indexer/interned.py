"""Strings that repeat across memories (frontmatter keys, collections, types, unit roles, folders), held once.

A string decoded from JSON or cut from a path is a fresh object even when a thousand memories hold the
same text; a bounded table of short ones hands back the first object instead.
"""

from __future__ import annotations

_SHARED: dict[str, str] = {}
SHARED_MAX = 10_000  # distinct strings kept; past it a string is held per memory again (a vault of odd keys)
SHARED_LONGEST = 40


def shared(text: str) -> str:
    """One object for a short string that many memories repeat (a decoded JSON string is a fresh object)."""
    found = _SHARED.get(text)
    if found is not None:
        return found
    if len(text) <= SHARED_LONGEST and len(_SHARED) < SHARED_MAX:
        _SHARED[text] = text
    return text
