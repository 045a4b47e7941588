"""The Markdown structure memdir reads - fenced code blocks and headings - defined once for every reader.

The parser (titles, git conflict markers), the chunker (sections, sentences) and the link finder
used to carry three fence patterns that disagreed (indentation, blockquotes, closing rules), so a
body opening with a fenced `# comment` got that comment as its title. CommonMark's rules, as far
as memdir needs them: a fence is three or more backticks or tildes (after indentation or `>`
quote markers); a backtick fence whose info string holds a backtick is inline code, not a fence;
a block is closed by a fence of the same character, at least as long, with nothing after it; an
unclosed block runs to the end.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

FENCE = re.compile(r"^[ \t>]*(`{3,}|~{3,})(.*)$")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


def opening_fence(line: str) -> str | None:
    """The fence marks (``` or ~~~~ ...) when the line opens a fenced block, else None."""
    match = FENCE.match(line.rstrip("\r"))
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)


def closes(line: str, opening: str) -> bool:
    """Whether the line closes a block opened by `opening`."""
    match = FENCE.match(line.rstrip("\r"))
    return (match is not None and match.group(1)[0] == opening[0] and len(match.group(1)) >= len(opening)
            and not match.group(2).strip())


def fenced(lines: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """Each line with whether it belongs to a fenced code block (its fence lines included)."""
    opening: str | None = None
    for line in lines:
        if opening is None:
            opening = opening_fence(line)
            yield line, opening is not None
        else:
            if closes(line, opening):
                opening = None
            yield line, True


def first_heading(body: str) -> str:
    """The text of the body's first heading outside code blocks ("" when there is none)."""
    for line, in_code in fenced(body.splitlines()):
        match = None if in_code else HEADING.match(line)
        if match:
            return match.group(2).strip()
    return ""


def section_count(body: str) -> int:
    """How many sections the chunker reads in the body: the text before the first heading (when there is
    any), then one per heading outside code blocks that has text of its own (a heading straight above a
    subheading is only part of the subsection's path). `memdir ingest` and `memdir books` both report it."""
    count, has_text = 0, False
    for line, in_code in fenced(body.splitlines()):
        if not in_code and HEADING.match(line):
            count, has_text = count + has_text, False
        elif line.strip():
            has_text = True
    return count + has_text
