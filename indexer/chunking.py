"""Cut memories into the pieces that are indexed, and each piece into the texts that are embedded.

A memory is one chunk, or one per section of a long document; the keyword index holds one
document per chunk. A chunk is embedded as one or more *units*: the whole chunk (title and
text), for a short memory of several sentences also each sentence (a question usually
matches one sentence, and averaging it with the rest of the memory blurs it), and, when the
memory names the memory captured just before it (`previous:`), a `previous` and a `next`
unit that read it together with its neighbour, so a turn of a conversation is found by what
was said around it. A memory's `next` unit is its follower's `previous` unit, word for word
(`pair_text`), so each consecutive pair is embedded once.

A sentence unit is the sentence as its line's speaker says it ("Dana: It broke again."),
without the title: on conversations the title's words diluted short sentences, and the
whole unit, which carries the title, is blended into every score (see search).

A short memory's units read its [[links]] as written; the keyword index reads them as the words
a reader sees (`readable`). See `linked_as_written`.

Chunk and unit ids are stable int64s derived from the memory id and their place (heading
path and part number; role and number), so rebuilding the index from the same files gives
the same ids, and re-indexing a memory removes exactly the ids it added before.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass

from vault import markdown
from vault.ids import identity_key
from vault.model import Memory

from .links import frontmatter_links, within_link_budget

log = logging.getLogger("memdir.chunking")

LONG_MEMORY_CHARS = 2000  # longer memories are chunked like documents
# A memory's sections read apart, at most: past it, the rest of the text is read as plain paragraphs, in pieces of
# MAX_CHUNK_CHARS. A 1.8 MB file of 300,000 one-line headings was 300,000 chunks, each a vector and a keyword
# document (bench/results/s20-attack20.md); a 2 MB book of real sections is under 2,000.
MAX_SECTIONS = 5000
MAX_CHUNK_CHARS = 1200  # about what MiniLM reads (256 word pieces) before it truncates
MAX_SENTENCE_UNITS = 8  # more sentences are merged, neighbours together, into this many units
MIN_SENTENCE_CHARS = 12  # a shorter piece ("Why:", "Thanks!") joins the sentence before it
NEIGHBOUR_CHARS = 600  # of a neighbour's text, what its context units and context field read
WHOLE, SENTENCE, PREVIOUS, NEXT = "whole", "sentence", "previous", "next"  # unit roles
_WIKILINK = re.compile(r"!?\[\[([^\[\]|]*?)(?:\|([^\[\]]*))?\]\]")
_BLOCK_ID = re.compile(r"\s\^[A-Za-z0-9-]+\s*$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")  # "v1.2" and "parser.py" have no space after the dot
_SPEAKER = re.compile(r"^([^\W\d][\w'.-]*(?: [\w'.-]+){0,3}): ")  # "Dana: ", "Claude Code: ", "Caveat: "


@dataclass(frozen=True, slots=True)
class Neighbours:
    """The texts of the memories captured just before and just after one memory ("" when none)."""

    previous: str = ""
    next: str = ""
    next_pair: str = ""  # the next memory's own `previous` unit (pair_text), when it has one: embedded once for both


@dataclass(frozen=True, slots=True)
class Unit:
    """One embedded text of a chunk."""

    unit_id: int
    chunk_id: int
    role: str  # whole (the chunk), sentence, previous or next
    text: str


@dataclass(frozen=True, slots=True)
class Chunk:
    memory_id: str
    chunk_id: int
    key: str  # "" for a whole memory, else "heading path#part"
    heading: str  # "Deploying > Database migrations" ("" when none)
    title: str  # the memory's title (plus the heading, for sections)
    text: str  # the section's text, links rendered as words
    context: str = ""  # the neighbours' texts, for the keyword index's context field
    units: tuple[Unit, ...] = ()
    lead: str = ""  # what the whole unit reads before the text, when not the title (a section: its own path)
    vector_text: str = ""  # what the units read instead of `text`, when not the same (a short memory: links as written)

    @property
    def embedding_text(self) -> str:
        lead = self.lead or self.title
        text = self.vector_text or self.text
        return f"{lead}\n{text}" if text else lead


def chunk_id(memory_id: str, key: str) -> int:
    digest = hashlib.blake2b(f"{memory_id}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & 0x7FFF_FFFF_FFFF_FFFF


def unit_id(memory_id: str, key: str, role: str, number: int) -> int:
    digest = hashlib.blake2b(f"{memory_id}\x00{key}\x00{role}\x00{number}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & 0x7FFF_FFFF_FFFF_FFFF


def readable(text: str) -> str:
    """Render [[links]] as the words a reader sees, and drop block ids, so both indices see prose."""

    def link_words(match: re.Match[str]) -> str:
        if match.group(2):
            return match.group(2)
        target = match.group(1).replace("#^", " ").replace("#", " ").rsplit("/", 1)[-1]
        target = target[:-3] if target.lower().endswith(".md") else target
        return target.replace("-", " ").replace("_", " ")

    return _BLOCK_ID.sub("", _WIKILINK.sub(link_words, text))


def linked_as_written(text: str) -> str:
    """What a short memory's vectors read: its text with its [[links]] as typed, block ids dropped.

    `readable` turns "[[timezone-bug-statement-dates]]" into "timezone bug statement dates": four words of
    another memory's topic, which drew the linking note towards questions on that topic. Read as typed, the
    link is one bracketed token run the model weighs less; it is also what plain cosine over "title\nbody"
    embeds. On the served example vault (every note links) hit@3 0.729 -> 0.750 (cosine 0.750), and no set
    loses (bench/results/s11-book11.md). Dropping memory links from the vector instead gained more served MRR but
    cost the book hold-out a top-3 answer. Book sections keep `readable` (not measured)."""
    return _BLOCK_ID.sub("", text)


def chunks_for(memory: Memory, neighbours: Neighbours = Neighbours()) -> list[Chunk]:
    body = readable(within_link_budget(memory.body)).strip()
    if memory.collection != "books" and len(body) <= LONG_MEMORY_CHARS:
        return [_short_chunk(memory, body, neighbours)]
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for heading, text in _within_section_budget(_sections(body), memory.path):
        for part, piece in enumerate(_pieces(text)):
            base = f"{heading}#{part}"
            seen[base] = seen.get(base, 0) + 1
            key = base if seen[base] == 1 else f"{base}~{seen[base]}"  # repeated headings stay distinct
            title = f"{memory.title} — {heading}" if heading else memory.title
            chunks.append(_with_units(Chunk(memory.id, chunk_id(memory.id, key), key, heading, title, piece,
                                            lead=_own_path(heading, memory.title)), []))
    return chunks or [_short_chunk(memory, "", Neighbours())]


def _own_path(heading: str, book_title: str) -> str:
    """What a section's vector reads before its text: its heading path without the book's title (the title
    alone for the text before the first heading, or under the title's own heading). Every section used to start
    with the book's title, twice when the first heading repeats it; that made a book's sections near-copies
    (mean cosine to their 10 nearest units 0.64, notes 0.38) and drew each towards whatever the book is about.
    Without it, on the fresh-paraphrase and book-question sets (bench/results/search.md, issue 26 session 5) both gain:
    fresh hit@3 0.689 -> 0.703, book questions 0.378 -> 0.405 (the book in any section 0.514 -> 0.595). The
    keyword index keeps the title: a question naming the book still finds its sections."""
    parts = heading.split(" > ") if heading else []
    if parts and parts[0].strip().lower() == book_title.strip().lower():
        parts = parts[1:]
    return " > ".join(parts) or book_title


def _short_chunk(memory: Memory, body: str, neighbours: Neighbours) -> Chunk:
    """A memory read as one chunk: whole, by sentence, and with its neighbours when it has them."""
    as_written = linked_as_written(within_link_budget(memory.body)).strip()
    chunk = Chunk(memory.id, chunk_id(memory.id, ""), "", "", memory.title, body,
                  "\n".join(t for t in (neighbours.previous, neighbours.next) if t),
                  vector_text=as_written if body and as_written != body else "")
    sentences = sentence_groups(as_written)
    extra = [(SENTENCE, s) for s in sentences] if len(sentences) > 1 else []
    if neighbours.previous:
        extra.append((PREVIOUS, f"{memory.title}\n{neighbours.previous}\n{body}"))
    if neighbours.next:
        extra.append((NEXT, neighbours.next_pair or f"{memory.title}\n{body}\n{neighbours.next}"))
    return _with_units(chunk, extra)


def _with_units(chunk: Chunk, extra: list[tuple[str, str]]) -> Chunk:
    """The chunk with its units: the whole chunk first, then `extra` (role, text) pairs, numbered per role."""
    numbers: dict[str, int] = {}
    units = []
    for role, text in [(WHOLE, chunk.embedding_text), *extra]:
        number = numbers[role] = numbers.get(role, -1) + 1
        units.append(Unit(unit_id(chunk.memory_id, chunk.key, role, number), chunk.chunk_id, role, text))
    return Chunk(chunk.memory_id, chunk.chunk_id, chunk.key, chunk.heading, chunk.title, chunk.text, chunk.context,
                 tuple(units), chunk.lead, chunk.vector_text)


def sentence_groups(text: str) -> list[str]:
    """The sentences of a short text (lines and list items count as sentences), at most MAX_SENTENCE_UNITS.

    A sentence from a line that starts with a speaker ("Dana: ...") keeps the speaker in front.
    """
    pieces: list[str] = []
    for line in text.splitlines():
        if markdown.FENCE.match(line):
            continue
        line = line.strip()
        speaker = _SPEAKER.match(line)
        first = len(pieces)
        for piece in _SENTENCE_END.split(line):
            if not piece:
                continue
            if pieces and (len(piece) < MIN_SENTENCE_CHARS or len(pieces[-1]) < MIN_SENTENCE_CHARS):
                pieces[-1] = f"{pieces[-1]} {piece}"
            else:
                pieces.append(piece)
        if speaker:
            pieces[first + 1:] = [speaker.group(0) + piece for piece in pieces[first + 1:]]
    if len(pieces) <= MAX_SENTENCE_UNITS:
        return pieces
    count = len(pieces)
    return [" ".join(pieces[i * count // MAX_SENTENCE_UNITS:(i + 1) * count // MAX_SENTENCE_UNITS])
            for i in range(MAX_SENTENCE_UNITS)]


def previous_key(memory: Memory) -> str | None:
    """The identity key of the memory this one names as `previous:` (an id, or a quoted "[[id]]" link)."""
    value = memory.frontmatter.get("previous")
    while isinstance(value, list) and len(value) == 1:
        value = value[0]  # an unquoted [[id]] reads as a nested YAML list
    if not isinstance(value, str):
        return None
    targets = frontmatter_links(value) if "[[" in value else [value.strip()]
    return identity_key(targets[0]) if len(targets) == 1 and targets[0] else None


def pair_text(earlier: Memory, later: Memory) -> str | None:
    """The text of `later`'s `previous` unit, which reads `earlier` then `later` (None when `later` is
    chunked as a document and has none). `earlier`'s `next` unit is this same text rather than its own
    near-copy (its title first, the later text cut at NEIGHBOUR_CHARS): the two read the same exchange,
    and one text is embedded once. On conversations those two units were 63% of the tokens embedded."""
    body = readable(within_link_budget(later.body)).strip()
    if later.collection == "books" or len(body) > LONG_MEMORY_CHARS:
        return None
    return f"{later.title}\n{neighbour_text(earlier)}\n{body}"


def neighbour_text(memory: Memory) -> str:
    """What a memory lends its neighbours: its text, cut at a word near NEIGHBOUR_CHARS."""
    text = " ".join(readable(memory.body).split())
    if len(text) <= NEIGHBOUR_CHARS:
        return text
    cut = text.rfind(" ", 0, NEIGHBOUR_CHARS)
    return text[:cut if cut > NEIGHBOUR_CHARS // 2 else NEIGHBOUR_CHARS]


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading path, text) pairs; text before the first heading has an empty path.

    A heading with no text of its own ("## Deploying" straight above "### Normal deploy") is no section: its
    name lives on in its subsections' paths. As a chunk it was the book's title and that name alone, a short
    generic text close to any question on the book's topic, and a hit on it showed an empty excerpt
    ("Ledger schema reference > Tables" for a question the notes answered; bench/results/search.md, issue 26,
    session 5)."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    path: list[tuple[int, str]] = []
    for line, in_code in markdown.fenced(body.splitlines()):
        heading = None if in_code else markdown.HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, heading.group(2).strip())]
            sections.append((" > ".join(name for _, name in path), []))
        else:
            sections[-1][1].append(line)
    return [(heading, "\n".join(lines).strip()) for heading, lines in sections if "".join(lines).strip()]


def _within_section_budget(sections: list[tuple[str, str]], path: str) -> list[tuple[str, str]]:
    """The first MAX_SECTIONS - 1 sections, then the rest as one section of paragraphs (each its heading's name
    over its text), which _pieces cuts by size: every word is still read, by a bounded number of chunks."""
    if len(sections) <= MAX_SECTIONS:
        return sections
    log.warning("%s: more than %d sections; the text past the %d-th is read as plain paragraphs", path,
                MAX_SECTIONS, MAX_SECTIONS - 1)
    rest = sections[MAX_SECTIONS - 1:]
    merged = "\n\n".join(f"{heading.rsplit(' > ', 1)[-1]}\n{text}" if heading else text for heading, text in rest)
    return sections[:MAX_SECTIONS - 1] + [(rest[0][0], merged)]


def _pieces(text: str) -> list[str]:
    """Split a long section at paragraph breaks into pieces the model reads whole."""
    if len(text) <= MAX_CHUNK_CHARS:
        return [text]
    pieces: list[str] = []
    current = ""
    for paragraph in re.split(r"\n\s*\n", text):
        while len(paragraph) > MAX_CHUNK_CHARS:
            cut = paragraph.rfind(" ", 0, MAX_CHUNK_CHARS)
            cut = cut if cut > MAX_CHUNK_CHARS // 2 else MAX_CHUNK_CHARS
            pieces.append((current + "\n\n" + paragraph[:cut]).strip() if current else paragraph[:cut].strip())
            current, paragraph = "", paragraph[cut:]
        if current and len(current) + len(paragraph) + 2 > MAX_CHUNK_CHARS:
            pieces.append(current.strip())
            current = paragraph
        else:
            current = f"{current}\n\n{paragraph}" if current else paragraph
    if current.strip():
        pieces.append(current.strip())
    return pieces
