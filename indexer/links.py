"""Find Obsidian wikilinks in Markdown and type them by the words that lead up to them.

Every form Obsidian writes is understood: `[[note]]`, `[[note.md]]`, `[[folder/note]]`,
`[[note|display]]`, `[[note#Heading]]`, `[[note#Heading#Sub]]`, `[[note#^block]]`,
`[[#Heading]]` and the embeds `![[note]]` and `![[image.png|100x145]]`. Links inside fenced
code blocks and inline code spans are examples, not links, and are skipped.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import islice
from typing import Any, Iterator, NamedTuple

from vault import markdown

CONTEXT_CHARS = 60
# The links of one text that are read. A hand-made index note holds hundreds; a file of 100,000 links
# (1.7 MB, under the size limit) is an attack or an accident: each link becomes a graph edge, perhaps a
# ghost node, and keyword terms. Past this many, the rest of the text is not read (graph.py warns).
MAX_LINKS = 5000

LINKS_TO = "links_to"
EMBEDS = "embeds"
SUPERSEDES = "supersedes"
DEPENDS_ON = "depends_on"
CONTRADICTS = "contradicts"
DERIVES_FROM = "derives_from"
RELATIONS = (LINKS_TO, EMBEDS, SUPERSEDES, DEPENDS_ON, CONTRADICTS, DERIVES_FROM)
# Frontmatter keys that type every link or id they hold (supersedes is read by the vault itself).
TYPED_KEYS = (DEPENDS_ON, CONTRADICTS, DERIVES_FROM)
MEMORY_PREFIX = "memory:"  # [[memory:ID]] (seed 004) names a memory by id or file name

# Obsidian forbids "[", "]" and line breaks inside a link, so a link is one short run. The "!"
# of an embed is checked by hand: a pattern starting with a literal "[[" is found much faster.
_LINK = re.compile(r"\[\[([^\[\]\n]+)\]\]")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# "updates" and "needs" were dropped: in ordinary prose ("Dana updates [[x]] monthly") they
# would type a plain mention as supersession and hide the linked memory from search.
_WORD_PHRASES = {
    SUPERSEDES: ("supersedes", "replaces"),
    DEPENDS_ON: ("depends on", "requires"),
    CONTRADICTS: ("contradicts", "disagrees with", "conflicts with"),
    DERIVES_FROM: ("derives from", "derived from", "based on"),
}
# A phrase after the link ("[[jwt-research]] is what this depends on", "… contradicts [[x]]" read
# the other way) types it too, except supersession: "[[v2]] replaces it" says the link is the
# newer one, and reading it as "this replaces [[v2]]" would hide the newer memory from search.
_AFTER_RELATIONS = (DEPENDS_ON, CONTRADICTS, DERIVES_FROM)
_PHRASE_RELATION = {
    phrase.replace(" ", ""): relation for relation, phrases in _WORD_PHRASES.items() for phrase in phrases
}
_PHRASE_WORDS = tuple(sorted({phrase.split()[0] for phrases in _WORD_PHRASES.values() for phrase in phrases}))
_PHRASE = re.compile(
    r"\b("
    + "|".join(p.replace(" ", r"\s+") for phrases in _WORD_PHRASES.values() for p in phrases)
    + r")\b",
    re.IGNORECASE,
)
# A sentence ends at ";" or a line break, or at ".", "!" or "?" followed by a space or tab: a
# dot inside a name such as "v1.2" or "parser.py" does not end one. The next sentence starts where
# such an end's match ends.
_SENTENCE_BREAK = re.compile(r"[\n\r;]|[.!?][ \t]")


class LinkParts(NamedTuple):
    """The inside of one [[...]], cut at "#", "#^" and "|"."""

    target: str
    heading: str | None
    block: str | None
    display: str | None


@dataclass(frozen=True, slots=True)
class Link:
    """One wikilink as written: where it points, how it is shown, and what the prose says it means."""

    target: str  # "" for a same-note link such as [[#Heading]]
    heading: str | None  # "Heading" or "Heading#Sub"
    block: str | None  # the block id without its "^"
    display: str | None
    embed: bool
    relation: str
    context: str  # the words around the link, whitespace collapsed
    start: int  # offset of "[[" (or of "!" for an embed) in the parsed text


def parse_links(text: str, limit: int = MAX_LINKS) -> list[Link]:
    """Every wikilink in a Markdown text, in order, skipping code blocks and code spans; at most the
    first `limit` of them (the text after the last one read is left out)."""
    if "[[" not in text:
        return []
    text = within_link_budget(text, limit)
    visible = _mask_code(text)
    found = [(m, parts) for m in _LINK.finditer(visible) if (parts := _split(m.group(1))) is not None]
    spans = [(_start(visible, m), m.end()) for m, _ in found]
    # Relation phrases are read from prose only: code and the text of other links are blanked.
    typing = _Typing(_mask_spans(visible, spans))
    ends = [start for start, _ in spans[1:]] + [len(visible)]
    return [_link(text, typing, span, parts, following) for span, (_, parts), following in zip(spans, found, ends)]


def within_link_budget(text: str, limit: int = MAX_LINKS) -> str:
    """The text up to its `limit`-th link: what memdir reads of a file that holds more (both indices and
    the graph), so a file of 100,000 links costs what one of 5,000 does."""
    if text.count("[[") <= limit:
        return text
    last = None
    for last in islice(_LINK.finditer(text), limit):
        pass
    return text[: last.end()] if last is not None else text


def frontmatter_links(values: Any) -> list[str]:
    """Targets of the quoted "[[x]]" links in a frontmatter value (a string or a list of strings)."""
    strings = frontmatter_strings(values)
    return [parts.target for string in strings for parts in links_in_string(string) if parts.target]


def frontmatter_strings(values: Any) -> Iterator[str]:
    """The strings of a frontmatter value that hold a wikilink, nested lists included."""
    if isinstance(values, str):
        if "[[" in values:
            yield values
    elif isinstance(values, (list, tuple)):
        for value in values:
            yield from frontmatter_strings(value)


def named_targets(value: Any) -> list[LinkParts]:
    """What a relation key's value names: ids, names and links, in a string or a (nested) list.
    `[[x]]` written without quotes in YAML is a nested list, and is read as the link it was meant as."""
    if isinstance(value, (list, tuple)):
        return [parts for item in value for parts in named_targets(item)]
    if not isinstance(value, str) or not value.strip():
        return []
    return links_in_string(value) or [p for p in [_split(value.strip())] if p is not None]


def links_in_string(string: str) -> list[LinkParts]:
    """The parts of each link in a short string such as a frontmatter value (no code masking)."""
    return [parts for match in _LINK.finditer(string) if (parts := _split(match.group(1))) is not None]


def _split(inner: str) -> LinkParts | None:
    """Cut the inside of [[...]] into target, heading, block and display; None if it names nothing."""
    destination, bar, display = inner.partition("|")
    # Inside a Markdown table the bar is written "\|"; the backslash is not part of the name.
    destination = destination[:-1] if bar and destination.endswith("\\") else destination
    target, _, fragment = destination.partition("#")
    parts = [part.strip() for part in fragment.split("#")] if fragment else []
    block = parts.pop()[1:].strip() if parts and parts[-1].startswith("^") else None
    heading = "#".join(part for part in parts if part) or None
    target = target.strip()
    if target[:len(MEMORY_PREFIX)].lower() == MEMORY_PREFIX:
        target = target[len(MEMORY_PREFIX):].strip()
    if not target and heading is None and block is None:
        return None
    return LinkParts(target, heading, block or None, display.strip() or None)


def _start(text: str, match: re.Match[str]) -> int:
    """Where a link starts: at the "!" when it is an embed."""
    return match.start() - 1 if match.start() and text[match.start() - 1] == "!" else match.start()


def _link(text: str, typing: _Typing, span: tuple[int, int], parts: LinkParts, following: int) -> Link:
    start, end = span
    embed = text[start] == "!"
    relation = typing.relation(start, embed)
    if relation in (LINKS_TO, EMBEDS):
        relation = typing.after(end, following) or relation
    return Link(
        target=parts.target,
        heading=parts.heading,
        block=parts.block,
        display=parts.display,
        embed=embed,
        relation=relation,
        context=_context(text, start, end),
        start=start,
    )


class _Typing:
    """Types the links of one text in order, reading each sentence's prose once."""

    def __init__(self, prose: str) -> None:
        self.prose = prose
        # Where every sentence starts, found in one pass: looking back from each link instead made a
        # line of n links cost n^2 (20,000 links on one line held their vault for half a minute).
        self.sentence_starts = [0] + [match.end() for match in _SENTENCE_BREAK.finditer(prose)]
        self.sentence_start = -1
        self.read_to = 0
        self.last: str | None = None  # the last relation phrase read in the current sentence

    def relation(self, start: int, embed: bool) -> str:
        """The relation named by the last phrase between the start of the sentence and the link."""
        sentence_start = self.sentence_starts[bisect_right(self.sentence_starts, start) - 1]
        if sentence_start != self.sentence_start:
            self.sentence_start, self.read_to, self.last = sentence_start, sentence_start, None
        # Earlier links in the sentence are blanked, so no phrase straddles where reading stopped.
        # Most prose names no relation; a plain substring test saves the regex most of the time.
        window = self.prose[self.read_to : start].casefold()
        if any(word in window for word in _PHRASE_WORDS):
            for match in _PHRASE.finditer(self.prose, self.read_to, start):
                # casefold, not lower: the regex also matches the long s of "ſupersedes".
                self.last = _PHRASE_RELATION["".join(match.group().split()).casefold()]
        self.read_to = start
        return self.last or (EMBEDS if embed else LINKS_TO)


    def after(self, end: int, following: int) -> str | None:
        """A relation phrase after the link, before the sentence ends or the next link starts."""
        stop = _sentence_end(self.prose, end, following)
        window = self.prose[end:stop].casefold()
        if not any(word in window for word in _PHRASE_WORDS):
            return None
        for match in _PHRASE.finditer(self.prose, end, stop):
            relation = _PHRASE_RELATION["".join(match.group().split()).casefold()]
            if relation in _AFTER_RELATIONS:
                return relation
            return None  # "replaces", "supersedes" after a link: see _AFTER_RELATIONS
        return None


def _sentence_end(prose: str, position: int, limit: int) -> int:
    """Where the sentence holding `position` ends (a line break, ";", or ".", "!", "?" and a space), at most `limit`."""
    match = re.compile(r"[\n;]|[.!?](?=[ \t]|$)").search(prose, position, limit)
    return match.start() if match else limit


def _context(text: str, start: int, end: int) -> str:
    return " ".join(text[max(0, start - CONTEXT_CHARS) : end + CONTEXT_CHARS].split())


def _mask_code(text: str) -> str:
    """The text with fenced code blocks and inline code spans blanked out, offsets unchanged."""
    if "`" not in text and "~~~" not in text:
        return text
    spans = list(_fenced_blocks(text))
    fenced = _mask_spans(text, spans)
    return _mask_spans(fenced, list(_code_spans(fenced))) if "`" in fenced else fenced


def _fenced_blocks(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each fenced block, fences included; an unclosed fence runs to the end."""
    offset = 0
    start: int | None = None  # where the open block starts
    for line, in_code in markdown.fenced(text.split("\n")):
        end = min(offset + len(line) + 1, len(text))  # past the line's "\n", if it has one
        if in_code and start is None:
            start = offset
        elif not in_code and start is not None:
            yield start, offset
            start = None
        offset = end
    if start is not None:
        yield start, len(text)


def _code_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each inline code span: a backtick run closed by one of the same length."""
    runs = list(_BACKTICKS.finditer(text))
    index = 0
    while index < len(runs):
        opener = runs[index]
        closer = next(
            (j for j in range(index + 1, len(runs)) if len(runs[j].group()) == len(opener.group())),
            None,
        )
        # A span never crosses a blank line: that would be a new paragraph.
        if closer is None or _BLANK_LINE.search(text, opener.end(), runs[closer].start()):
            index += 1
            continue
        yield opener.start(), runs[closer].end()
        index = closer + 1


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """Replace each span with spaces, keeping line breaks so lines and offsets stay where they were."""
    if not spans:
        return text
    pieces: list[str] = []
    position = 0
    for start, end in spans:
        pieces.append(text[position:start])
        pieces.append(re.sub(r"[^\n]", " ", text[start:end]))
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
