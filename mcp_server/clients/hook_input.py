"""A hook's stdin, as the client's event: what the hook can use of an input that is not quite JSON.

Two inputs used to give the turn nothing (bench/results/s19-attack19.md). Bytes that are not UTF-8 failed the
whole parse (a UnicodeDecodeError, or `SystemError: <_json.Scanner …>`): they are replaced (U+FFFD) and named, and
the prompt, which decodes, still gets its context. An input over the hook's read limit was cut mid-JSON and not
parsed at all: its members before the cut are kept, with the head of the string member the cut went through
(the prompt's head is what its search reads first; a Stop's answer is stored cut, marked so), and what was dropped
is said. Standard library only, through plain_json (a hook runs on every prompt).
"""

from __future__ import annotations

import sys

from .. import plain_json as json

TYPE_CHECKING = False  # typing is not imported by a hook process (client.py)
if TYPE_CHECKING:
    from typing import Any

_BLANK = " \t\n\r"
CUT_MARK = "\n[… cut by memdir: the hook input was over {limit:,} bytes]"


def parse(raw: bytes, limit: int) -> Any:
    """The event in `raw`, read from stdin up to `limit` + 1 bytes (more than `limit`: the input was cut)."""
    cut = len(raw) > limit
    text = _text(raw[:limit], cut)
    if not cut:
        return json.loads(text or "{}")
    fields, member = head_fields(text)
    head = fields.get(member)
    if isinstance(head, str):
        fields[member] = head + CUT_MARK.format(limit=limit)
        told = f"its {member!r} was cut to its first {len(head):,} characters"
    else:
        told = f"its {member!r} was dropped" if member is not None else "no member was cut"
    print(f"memdir hook: the hook input is over {limit:,} bytes and only those were read: {told}, and any member "
          f"after it is lost (kept: {', '.join(sorted(fields)) or 'nothing'})", file=sys.stderr)
    return fields


def _text(raw: bytes, cut: bool) -> str:
    """`raw` as UTF-8 (a byte-order mark dropped); bytes that are not UTF-8 replaced, and where they began said.
    A cut input may end inside a character: that is not said."""
    try:
        return raw.decode("utf-8-sig", "surrogatepass")  # a lone surrogate as raw bytes is read, as json reads it
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(raw) - 3 and exc.reason == "unexpected end of data":
            return raw[:exc.start].decode("utf-8-sig", "replace")
        print(f"memdir hook: hook input is not UTF-8 at byte {exc.start}; bytes that are not were replaced (U+FFFD)",
              file=sys.stderr)
        return raw.decode("utf-8-sig", "replace")


def head_fields(text: str) -> tuple[dict[str, Any], str | None]:
    """The members of the JSON object that `text`, cut, begins: each whole one, and the one the cut went through if it
    is a string (its head). Returns them and the cut member's name (None when the cut fell between members)."""
    fields: dict[str, Any] = {}
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return fields, None
    at += 1
    while True:
        at = _skip(text, at)
        try:
            key, at = json.scan(text, at)
        except ValueError:
            return fields, None
        at = _skip(text, at)
        if not isinstance(key, str) or not text.startswith(":", at):
            return fields, None
        at = _skip(text, at + 1)
        try:
            value, at = json.scan(text, at)
        except ValueError:
            if text.startswith('"', at):
                fields[key] = _string_head(text[at:])
            return fields, key
        fields[key] = value
        at = _skip(text, at)
        if not text.startswith(",", at):
            return fields, None
        at += 1


def _string_head(cut: str) -> str:
    """The text of a JSON string cut before its closing quote; an escape the cut went through is dropped."""
    for shorter in range(7):  # the longest escape is six characters: a backslash, u and four hex digits
        closed = cut[:len(cut) - shorter] + '"'
        try:
            value, end = json.scan(closed, 0)
        except ValueError:
            continue
        if end == len(closed) and isinstance(value, str):
            return value[:-1] if value and "\ud800" <= value[-1] <= "\udbff" else value  # half a surrogate pair
    return ""


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _BLANK:
        at += 1
    return at
