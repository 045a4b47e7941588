"""Memory ids: short, stable, never reused, and safe to show to a model or put in a file name."""

from __future__ import annotations

import hashlib
import re
import secrets
import unicodedata

from .errors import ValidationError

MAX_ID_LENGTH = 64
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def new_id() -> str:
    """A fresh random id: `m-` and 8 hex digits (4 billion values; collisions are checked on create)."""
    return "m-" + secrets.token_hex(4)


def derived_id(relative_path: str) -> str:
    """The id of a file that has none yet: a hash of its normalized path, pinned on first write."""
    return "p-" + hashlib.sha256(identity_key(relative_path).encode()).hexdigest()[:8]


def identity_key(text: str) -> str:
    """NFC + casefold: what makes two ids or names the same on every file system. An id that is its own key
    (most are) comes back as the same object: the index keys its tables by it, once per memory and table."""
    key = unicodedata.normalize("NFC", text).casefold()
    return text if key == text else key


def check_id(value: object) -> str:
    """Return the id if it is well formed, else raise ValidationError saying why."""
    if not isinstance(value, str):
        raise ValidationError(f"id must be text, not {type(value).__name__}")
    if not value or len(value) > MAX_ID_LENGTH:
        raise ValidationError(f"id must be 1 to {MAX_ID_LENGTH} characters long")
    if not _ID.match(value) or ".." in value:
        raise ValidationError(
            f"id {value!r} may only contain letters, digits, '.', '_' and '-' and must start with a letter or digit"
        )
    return value


_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def slug(title: str, limit: int = 60) -> str:
    """A file-name-safe rendering of a title (ASCII letters, digits and dashes)."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    text = _SLUG_DROP.sub("-", ascii_title.lower()).strip("-")
    return text[:limit].rstrip("-") or "memory"
