"""Read the bytes of one file into a validated Memory, or raise ParseError naming file, line and reason."""

from __future__ import annotations

import hashlib
import math
import re
from datetime import date, datetime, timezone
from types import MappingProxyType
from typing import Any, Callable

from . import frontmatter as fm
from . import markdown
from .errors import ParseError, ValidationError
from .ids import check_id, derived_id
from .model import (
    COLLECTIONS,
    DEFAULT_TYPE,
    OUTCOMES,
    PRIVACY,
    STATUSES,
    TYPES,
    Memory,
    stem_of,
)

DEFAULT_MAX_BYTES = 2 * 1024 * 1024


def sha256(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def decode(data: bytes, path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Bytes to text, refusing what is not a UTF-8 text file (with the line of the first bad byte)."""
    if len(data) > max_bytes:
        raise ParseError(path, None, f"file is {len(data):,} bytes; memory files are limited to {max_bytes:,} bytes")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ParseError(path, data.count(b"\n", 0, nul) + 1, "binary file (contains a NUL byte), not Markdown")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ParseError(
            path, line, f"not valid UTF-8 (byte 0x{data[exc.start]:02X} at column {column}); save the file as UTF-8"
        ) from None


def parse(data: bytes, path: str, *, max_bytes: int = DEFAULT_MAX_BYTES, source: str = "project") -> Memory:
    """Parse one file. `path` is vault-relative with "/" separators."""
    text = decode(data, path, max_bytes)
    _refuse_conflict_markers(text, path)
    try:
        doc = fm.split(text)
        loaded = fm.load(doc.frontmatter) if doc.frontmatter is not None else None
    except fm.FrontmatterError as exc:
        raise ParseError(path, exc.line, exc.reason) from None
    if loaded is None:
        return _plain_document(data, doc, path, source)
    return _from_frontmatter(data, doc, loaded, path, source)


_MARKER = re.compile(r"^(?:<{7}|>{7})(?:[ \t]|\r?$)", re.M)


def _refuse_conflict_markers(text: str, path: str) -> None:
    """A merge git left unresolved is not a memory yet: report it, and never rewrite it (memdir rewrites
    only files it can parse). Markers inside fenced code blocks are examples, not conflicts; a lone
    `=======` is a Markdown heading underline, so only `<<<<<<<` and `>>>>>>>` lines count."""
    if not _MARKER.search(text):
        return
    for number, (line, in_code) in enumerate(markdown.fenced(text.splitlines()), 1):
        if not in_code and _MARKER.match(line):
            raise ParseError(path, number, f"unresolved git conflict marker '{line[:7]}'; resolve the merge "
                                           "(keep one side, or both) and remove the <<<<<<< ======= >>>>>>> lines")


def _plain_document(data: bytes, doc: fm.Document, path: str, source: str) -> Memory:
    """A Markdown file without frontmatter is reference material: a `books` document, never scored."""
    return Memory(
        id=derived_id(path),
        path=path,
        collection="books",
        type=DEFAULT_TYPE["books"],
        title=_title_from_body(doc.body) or stem_of(path),
        body=doc.body,
        has_frontmatter=False,
        id_derived=True,
        content_hash=sha256(data),
        body_hash=sha256(doc.body),
        source=source,
    )


def _from_frontmatter(data: bytes, doc: fm.Document, loaded: fm.Loaded, path: str, source: str) -> Memory:
    fields = _Fields(loaded, path)
    raw_id = fields.get("id", _text)
    collection = fields.get("collection", _choice(COLLECTIONS)) or _collection_from_folder(path)
    memory_type = fields.get("type", _choice(TYPES)) or DEFAULT_TYPE[collection]
    uses = fields.get("uses", _count) or 0
    success_count = fields.get("success_count", _non_negative) or 0.0
    if success_count > uses:
        raise ParseError(path, loaded.lines.get("success_count"), f"success_count ({success_count}) exceeds uses ({uses})")
    score = fields.get("score", _unit)
    return Memory(
        id=_checked_id(raw_id, path, loaded) if raw_id is not None else derived_id(path),
        path=path,
        collection=collection,
        type=memory_type,
        title=fields.get("title", _text) or _title_from_body(doc.body) or stem_of(path),
        body=doc.body,
        tags=fields.get("tags", _names) or (),
        aliases=fields.get("aliases", _names) or (),
        created_at=fields.get("created_at", _timestamp),
        updated_at=fields.get("updated_at", _timestamp),
        last_used_at=fields.get("last_used_at", _timestamp),
        score=0.5 if score is None else score,
        uses=uses,
        success_count=success_count,
        outcomes=fields.get("outcomes", _outcome_list) or (),
        last_outcome=fields.get("last_outcome", _choice(OUTCOMES)),
        status=fields.get("status", _choice(STATUSES)) or "active",
        supersedes=fields.get("supersedes", _names) or (),
        privacy=fields.get("privacy", _choice(PRIVACY)) or "shared",
        importance=fields.get("importance", _unit),
        confidence=fields.get("confidence", _unit),
        always_inject=bool(fields.get("always_inject", _flag)),
        frontmatter=MappingProxyType(loaded.data),
        has_frontmatter=True,
        id_derived=raw_id is None,
        id_line=loaded.lines.get("id"),
        content_hash=sha256(data),
        body_hash=sha256(doc.body),
        source=source,
    )


class _Fields:
    """Typed access to frontmatter keys; a bad value becomes a ParseError on that key's line."""

    def __init__(self, loaded: fm.Loaded, path: str) -> None:
        self.loaded = loaded
        self.path = path

    def get(self, key: str, convert: Callable[[Any, Any], Any]) -> Any:
        if key not in self.loaded.data or self.loaded.data[key] is None:
            return None
        try:
            return convert(self.loaded.data[key], self.loaded.raw[key])
        except ValidationError as exc:
            raise ParseError(self.path, self.loaded.lines[key], f"'{key}': {exc}") from None


def _checked_id(value: str, path: str, loaded: fm.Loaded) -> str:
    try:
        return check_id(value)
    except ValidationError as exc:
        raise ParseError(path, loaded.lines["id"], str(exc)) from None


def _text(value: Any, raw: Any) -> str:
    # Take the scalar as written: `title: yes` is the word "yes", not YAML 1.1's True.
    if isinstance(value, (dict, list)):
        raise ValidationError(f"expected text, got a {'list' if isinstance(value, list) else 'mapping'}")
    return str(raw).strip()


def _choice(options: tuple[str, ...]) -> Callable[[Any, Any], str]:
    def convert(value: Any, raw: Any) -> str:
        text = _text(value, raw)
        if text not in options:
            raise ValidationError(f"unknown value {text!r}; expected one of: {', '.join(options)}")
        return text

    return convert


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValidationError(f"expected a number, got {value!r}")
    return float(value)


def _unit(value: Any, raw: Any) -> float:
    number = _number(value)
    if not 0.0 <= number <= 1.0:
        raise ValidationError(f"{number} is out of range; expected a number from 0 to 1")
    return number


def _non_negative(value: Any, raw: Any) -> float:
    number = _number(value)
    if number < 0:
        raise ValidationError(f"{number} is negative")
    return number


def _count(value: Any, raw: Any) -> int:
    number = _non_negative(value, raw)
    if not number.is_integer():
        raise ValidationError(f"expected a whole number, got {value!r}")
    return int(number)


def _flag(value: Any, raw: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValidationError(f"expected true or false, got {raw!r}")


def _names(value: Any, raw: Any) -> tuple[str, ...]:
    """Tags, aliases and references: a list of scalars, or one scalar (Obsidian accepts both)."""
    items = value if isinstance(value, list) else [raw]
    names: list[str] = []
    for item in items:
        if isinstance(item, list):
            raise ValidationError('found a nested list; a [[link]] in frontmatter must be quoted: "[[name]]"')
        if isinstance(item, dict):
            raise ValidationError(f"expected a list of names, found {item!r}")
        text = str(item).strip()
        if text:
            names.append(text)
    return tuple(names)


def _outcome_list(value: Any, raw: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValidationError("expected a list such as [worked, partial, failed]")
    outcomes = tuple(str(item).strip() for item in value)
    for outcome in outcomes:
        if outcome not in OUTCOMES:
            raise ValidationError(f"unknown outcome {outcome!r}; expected one of: {', '.join(OUTCOMES)}")
    return outcomes


def _timestamp(value: Any, raw: Any) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValidationError(f"{value!r} is not an ISO 8601 date or time (e.g. 2026-11-20T14:03:11Z)") from None
    else:
        raise ValidationError(f"expected a date or time, got {value!r}")
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def _collection_from_folder(path: str) -> str:
    top = path.split("/", 1)[0] if "/" in path else ""
    return top if top in COLLECTIONS else "books"


def _title_from_body(body: str) -> str:
    return markdown.first_heading(body)


