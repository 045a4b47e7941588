"""Strings that repeat across memories (frontmatter keys, collections, types, unit roles, folders), held once.

A string decoded from JSON or cut from a path is a fresh object even when a thousand memories hold the
same text. Python's own intern table hands back the first object instead, and lets a string go when
nothing holds it any more, so it needs no bound of its own; long strings (titles, bodies) rarely repeat
and are left as they are.
"""

from __future__ import annotations

import sys

SHARED_LONGEST = 40


def shared(text: str) -> str:
    """One object for a short string that many memories repeat (a decoded JSON string is a fresh object)."""
    return sys.intern(text) if len(text) <= SHARED_LONGEST else text
