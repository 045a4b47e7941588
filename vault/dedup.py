"""Exact-duplicate detection: the same text (up to case, spacing and punctuation) and the same type."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)
# ASCII text's `normalized` as one bytes.translate: letters lowered, every other character but a digit made a space
# (for ASCII, NFKC changes nothing, casefold is lower() and [\W_] is all but letters and digits). The regex's pass was
# most of the dedup table's 100k bodies (3.3 of 4.2 s, bench/results/s21-capture21.md); this one is a quarter of it.
_ASCII_WORDS = bytes(c | 0x20 if chr(c).isalpha() else c if chr(c).isdigit() else 32 for c in range(128)) + bytes(128)
DIGEST_BYTES = 16  # the dedup table's key: 49 bytes an object, a hex string's 113


def normalized(text: str) -> str:
    """Lower-cased words separated by single spaces: what a re-statement of the same fact shares."""
    if text.isascii():
        return " ".join(text.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split())
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NOT_WORD.sub(" ", folded).split())


def dedup_key(text: str, memory_type: str) -> str:
    return hashlib.sha256(f"{memory_type}\x00{normalized(text)}".encode()).hexdigest()


def dedup_digest(text: str, memory_type: str) -> bytes:
    """The dedup key's first 16 bytes: what the index's duplicates table and its manifest keep a memory by."""
    return bytes.fromhex(dedup_key(text, memory_type)[:2 * DIGEST_BYTES])
