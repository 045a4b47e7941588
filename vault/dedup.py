"""Exact-duplicate detection: the same text (up to case, spacing and punctuation) and the same type."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalized(text: str) -> str:
    """Lower-cased words separated by single spaces: what a re-statement of the same fact shares."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NOT_WORD.sub(" ", folded).split())


def dedup_key(text: str, memory_type: str) -> str:
    return hashlib.sha256(f"{memory_type}\x00{normalized(text)}".encode()).hexdigest()
