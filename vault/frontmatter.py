"""Split a Markdown file into frontmatter and body, load the YAML safely, and patch it minimally.

Reading uses PyYAML's C composer (fast, gives line numbers) with guards against aliases,
tags, deep nesting and duplicate keys. Writing never re-serialises the whole block: only the
lines of the keys that change are re-rendered (with ruamel.yaml, so comments and quoting on
those lines survive) and spliced back, so every other byte of the file stays as it was.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any, Mapping, Sequence

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

BOM = "\ufeff"
MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_DEPTH = 16
MAX_NODES = 5000

_OPEN = re.compile(r"---[ \t]*(\r?\n)")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.M)
_STANDARD_TAGS = frozenset(
    "tag:yaml.org,2002:" + t
    for t in ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")
)


class FrontmatterError(Exception):
    """Raised with a line number relative to the start of the file (1-based)."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Document:
    """A Markdown file cut into exact pieces; `text()` puts them back byte for byte."""

    bom: bool
    opening: str  # "---\n" or "" when the file has no frontmatter
    frontmatter: str | None  # the YAML text between the delimiters, None when absent
    closing: str  # "---\n" (or "---" at EOF)
    body: str
    newline: str  # "\r\n" or "\n": the style new lines are written in

    @property
    def has_frontmatter(self) -> bool:
        return self.frontmatter is not None

    @property
    def body_line(self) -> int:
        """1-based line number on which the body starts."""
        head = self.opening + (self.frontmatter or "") + self.closing
        return head.count("\n") + 1

    def text(self) -> str:
        head = self.opening + (self.frontmatter or "") + self.closing
        return (BOM if self.bom else "") + head + self.body

    def with_parts(self, frontmatter: str | None = None, body: str | None = None) -> "Document":
        fm = self.frontmatter if frontmatter is None else frontmatter
        opening, closing = self.opening, self.closing
        if fm is not None and not opening:
            opening, closing = "---" + self.newline, "---" + self.newline
        if closing and not closing.endswith("\n"):
            closing += self.newline  # frontmatter used to end the file; a body now follows
        return Document(self.bom, opening, fm, closing, self.body if body is None else body, self.newline)


def split(text: str) -> Document:
    """Cut a decoded file into BOM, frontmatter and body without losing a character."""
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    newline = "\r\n" if "\r\n" in text[:4096] else "\n"
    opened = _OPEN.match(text)
    if not opened:
        return Document(bom, "", None, "", text, newline)
    rest = text[opened.end():]
    closed = _CLOSE.search(rest)
    if not closed:
        raise FrontmatterError(1, "frontmatter opened with '---' on line 1 is never closed by a '---' line")
    return Document(
        bom,
        opened.group(0),
        rest[: closed.start()],
        closed.group(0),
        rest[closed.end():],
        opened.group(1),
    )


@dataclass(frozen=True, slots=True)
class Loaded:
    """Frontmatter values plus what validation needs: raw scalars and key line numbers."""

    data: dict[str, Any]
    raw: dict[str, Any]  # for scalar values, the scalar exactly as written (no YAML 1.1 typing)
    lines: dict[str, int]  # 1-based file line of every top-level key


def load(fm_text: str) -> Loaded:
    """Parse frontmatter YAML safely. Line numbers in errors are file lines (frontmatter starts on line 2)."""
    if len(fm_text) > MAX_FRONTMATTER_CHARS:
        raise FrontmatterError(2, f"frontmatter is {len(fm_text)} characters; the limit is {MAX_FRONTMATTER_CHARS}")
    try:
        root = yaml.compose(fm_text, Loader=yaml.CSafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark else 2
        raise FrontmatterError(line, f"invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise FrontmatterError(2, f"invalid YAML: {exc}") from None
    if root is None:
        return Loaded({}, {}, {})
    if not isinstance(root, yaml.MappingNode):
        raise FrontmatterError(root.start_mark.line + 2, "frontmatter must be a mapping of keys to values")
    _guard(root)
    constructor = yaml.CSafeLoader("")
    data: dict[str, Any] = {}
    raw: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for key_node, value_node in root.value:
        # Keys are names: `on:` is the key "on", not YAML 1.1's boolean True.
        if isinstance(key_node, yaml.ScalarNode):
            key = key_node.value
        else:
            key = str(constructor.construct_object(key_node, deep=True))
        line = key_node.start_mark.line + 2
        try:
            value = constructor.construct_object(value_node, deep=True)
        except yaml.YAMLError as exc:
            raise FrontmatterError(line, f"invalid value for '{key}': {exc}") from None
        data[key] = value
        raw[key] = value_node.value if isinstance(value_node, yaml.ScalarNode) else value
        lines[key] = line
    return Loaded(data, raw, lines)


def _guard(root: yaml.Node) -> None:
    """Refuse aliases (billion laughs), custom tags, deep nesting, huge trees and duplicate keys."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        line = node.start_mark.line + 2
        if id(node) in seen:
            raise FrontmatterError(line, "YAML anchors and aliases are not allowed in frontmatter")
        seen.add(id(node))
        if len(seen) > MAX_NODES:
            raise FrontmatterError(line, f"frontmatter has more than {MAX_NODES} values")
        if depth > MAX_DEPTH:
            raise FrontmatterError(line, f"frontmatter is nested deeper than {MAX_DEPTH} levels")
        if node.tag not in _STANDARD_TAGS:
            raise FrontmatterError(line, f"YAML tag '{node.tag}' is not allowed in frontmatter")
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    if key_node.value == "<<":
                        raise FrontmatterError(key_node.start_mark.line + 2, "YAML merge keys ('<<') are not allowed")
                    if key_node.value in keys:
                        raise FrontmatterError(
                            key_node.start_mark.line + 2, f"duplicate key '{key_node.value}'"
                        )
                    keys.add(key_node.value)
                stack.append((key_node, depth + 1))
                stack.append((value_node, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)


# --- writing -----------------------------------------------------------------------------

class IsoStamp(str):
    """A timestamp written unquoted as 2026-11-20T14:03:11Z (Obsidian's Date & time format)."""


def iso_stamp(moment: datetime) -> IsoStamp:
    moment = moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return IsoStamp(moment.strftime("%Y-%m-%dT%H:%M:%SZ"))


def _yaml(seq_indent: int = 2, seq_offset: int = 0) -> YAML:
    y = YAML()
    y.preserve_quotes = True
    y.width = 10**9
    y.indent(mapping=2, sequence=seq_indent, offset=seq_offset)
    y.representer.add_representer(
        IsoStamp, lambda rep, value: rep.represent_scalar("tag:yaml.org,2002:timestamp", str(value))
    )
    return y


_RESOLVER = yaml.resolver.Resolver()


def _yaml_value(value: Any, flow: bool) -> Any:
    """Turn a Python value into what ruamel should emit; strings that YAML 1.1 would retype get quoted."""
    if isinstance(value, datetime):
        return iso_stamp(value)
    if isinstance(value, date):
        return IsoStamp(value.isoformat())
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(_yaml_value(item, flow) for item in value)
        if flow:
            seq.fa.set_flow_style()
        return seq
    if isinstance(value, str) and not isinstance(value, IsoStamp):
        resolved = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))
        if resolved != "tag:yaml.org,2002:str" or not _PLAIN_SAFE.match(value):
            return DoubleQuotedScalarString(value)
    return value


# Strings written unquoted must read back as the same string in block and flow context, by
# PyYAML (YAML 1.1) as well as by ruamel and Obsidian; anything more exotic is double-quoted.
_PLAIN_SAFE = re.compile(r"^[\w(][\w .()'/+@=-]*(?<! )$")


def _dump(mapping: CommentedMap, y: YAML) -> str:
    buffer = io.StringIO()
    y.dump(mapping, buffer)
    return buffer.getvalue()


def _segments(fm_text: str) -> tuple[list[str], dict[str, tuple[int, int]]] | None:
    """Line ranges [start, end) of each top-level key in a block mapping, or None if not block style."""
    root = yaml.compose(fm_text, Loader=yaml.CSafeLoader) if fm_text.strip() else None
    lines = fm_text.splitlines(keepends=True)
    if root is None:
        return lines, {}
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return None
    if any(k.start_mark.column != 0 or not isinstance(k, yaml.ScalarNode) for k, _ in root.value):
        return None  # indented or complex keys: let the whole-block fallback handle it
    starts = [(str(k.value), k.start_mark.line) for k, _ in root.value]
    ranges: dict[str, tuple[int, int]] = {}
    for index, (key, start) in enumerate(starts):
        end = starts[index + 1][1] if index + 1 < len(starts) else len(lines)
        while end > start + 1 and _is_filler(lines[end - 1]):
            end -= 1
        ranges[key] = (start, end)
    return lines, ranges


def key_segments(fm_text: str) -> dict[str, str] | None:
    """The exact text of each top-level key (`key: value` and its continuation lines), or None when
    the block is not a plain block mapping; lets a caller show or splice one key as it was written."""
    layout = _segments(fm_text)
    if layout is None:
        return None
    lines, ranges = layout
    return {key: "".join(lines[start:end]) for key, (start, end) in ranges.items()}


def _is_filler(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


_SEQ_ITEM = re.compile(r"^( *)- ")


def _render_key(segment: str | None, key: str, value: Any, newline: str) -> str:
    """Render one `key: value` block, reusing the old segment so its comments and list style survive."""
    if segment is not None:
        match = next((m for m in map(_SEQ_ITEM.match, segment.splitlines()) if m), None)
        offset = len(match.group(1)) if match else 2
        y = _yaml(seq_indent=offset + 2, seq_offset=offset)
        mini = y.load(segment.replace("\r\n", "\n"))
        old = mini[key]
        if isinstance(old, CommentedSeq) and isinstance(value, (list, tuple)):
            # An empty list can only be written `[]`, but ruamel does not mark it flow style: a list
            # that starts empty (a new exchange's `outcomes: []`) must stay one line, so diffs do.
            flow = bool(old.fa.flow_style()) or not old
            old[:] = [_yaml_value(item, flow) for item in value]
            if flow:
                old.fa.set_flow_style()
        else:
            flow = isinstance(old, CommentedSeq) and old.fa.flow_style()
            mini[key] = _yaml_value(value, flow)
    else:
        y = _yaml(seq_indent=4, seq_offset=2)
        mini = CommentedMap()
        mini[key] = _yaml_value(value, flow=True)
    text = _dump(mini, y)
    return text.replace("\n", newline) if newline != "\n" else text


def patch(fm_text: str, updates: Mapping[str, Any], removals: Sequence[str] = (), newline: str = "\n") -> str:
    """Return frontmatter text with only the given keys changed, added or removed."""
    current = load(fm_text).data if fm_text.strip() else {}
    updates = {k: v for k, v in updates.items() if k not in current or not _same(current[k], v)}
    layout = _segments(fm_text)
    if layout is None:
        return _patch_whole(fm_text, updates, removals, newline)
    lines, ranges = layout
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += newline
    replaced: dict[int, tuple[int, str]] = {}
    appended: list[str] = []
    for key in removals:
        if key in ranges and key not in updates:
            start, end = ranges[key]
            replaced[start] = (end, "")
    for key, value in updates.items():
        if key in ranges:
            start, end = ranges[key]
            replaced[start] = (end, _render_key("".join(lines[start:end]), key, value, newline))
        else:
            appended.append(_render_key(None, key, value, newline))
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in replaced:
            end, text = replaced[index]
            out.append(text)
            index = end
        else:
            out.append(lines[index])
            index += 1
    return "".join(out) + "".join(appended)


def _same(old: Any, new: Any) -> bool:
    """Whether writing `new` would change nothing a reader sees (so the line is left untouched)."""
    if isinstance(new, (list, tuple)):
        return isinstance(old, list) and len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new))
    if isinstance(new, float) and not isinstance(old, bool) and isinstance(old, (int, float)):
        return round(float(old), 4) == round(new, 4)
    if isinstance(new, datetime) and isinstance(old, datetime):
        as_utc = lambda d: d if d.tzinfo else d.replace(tzinfo=timezone.utc)  # noqa: E731
        return as_utc(old).replace(microsecond=0) == as_utc(new).replace(microsecond=0)
    return type(old) is type(new) and old == new


def _patch_whole(fm_text: str, updates: Mapping[str, Any], removals: Sequence[str], newline: str) -> str:
    """Fallback for flow-style or unusual mappings: one ruamel round trip of the whole block."""
    y = _yaml()
    data = y.load(fm_text.replace("\r\n", "\n")) or CommentedMap()
    if hasattr(data, "fa"):
        data.fa.set_block_style()
    for key in removals:
        data.pop(key, None)
    for key, value in updates.items():
        data[key] = _yaml_value(value, flow=True)
    text = _dump(data, y)
    return text.replace("\n", newline) if newline != "\n" else text


def render_new(fields: Mapping[str, Any], body: str, newline: str = "\n") -> str:
    """The text of a brand-new memory file."""
    fm = patch("", fields, newline=newline)
    return f"---{newline}{fm}---{newline}{body}"
