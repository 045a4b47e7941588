"""Cut memories into the pieces that are indexed: one chunk per memory, or per section of a long document.

Each chunk gets a stable int64 id derived from its memory id and its place (heading path
and part number), so rebuilding the index from the same files gives the same ids, and
re-indexing a memory removes exactly the ids it added before.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from vault.model import Memory

LONG_MEMORY_CHARS = 2000  # longer memories are chunked like documents
MAX_CHUNK_CHARS = 1200  # about what MiniLM reads (256 word pieces) before it truncates
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_WIKILINK = re.compile(r"!?\[\[([^\[\]|]*?)(?:\|([^\[\]]*))?\]\]")
_BLOCK_ID = re.compile(r"\s\^[A-Za-z0-9-]+\s*$", re.M)


@dataclass(frozen=True, slots=True)
class Chunk:
    memory_id: str
    chunk_id: int
    key: str  # "" for a whole memory, else "heading path#part"
    heading: str  # "Deploying > Database migrations" ("" when none)
    title: str  # the memory's title (plus the heading, for sections)
    text: str  # the section's text, links rendered as words

    @property
    def embedding_text(self) -> str:
        return f"{self.title}\n{self.text}" if self.text else self.title


def chunk_id(memory_id: str, key: str) -> int:
    digest = hashlib.blake2b(f"{memory_id}\x00{key}".encode(), digest_size=8).digest()
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


def chunks_for(memory: Memory) -> list[Chunk]:
    body = readable(memory.body).strip()
    if memory.collection != "books" and len(body) <= LONG_MEMORY_CHARS:
        return [Chunk(memory.id, chunk_id(memory.id, ""), "", "", memory.title, body)]
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for heading, text in _sections(body):
        for part, piece in enumerate(_pieces(text)):
            base = f"{heading}#{part}"
            seen[base] = seen.get(base, 0) + 1
            key = base if seen[base] == 1 else f"{base}~{seen[base]}"  # repeated headings stay distinct
            title = f"{memory.title} — {heading}" if heading else memory.title
            chunks.append(Chunk(memory.id, chunk_id(memory.id, key), key, heading, title, piece))
    return chunks or [Chunk(memory.id, chunk_id(memory.id, ""), "", "", memory.title, "")]


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading path, text) pairs; text before the first heading has an empty path."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    path: list[tuple[int, str]] = []
    in_fence = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, heading.group(2).strip())]
            sections.append((" > ".join(name for _, name in path), []))
        else:
            sections[-1][1].append(line)
    return [(heading, "\n".join(lines).strip()) for heading, lines in sections if heading or "".join(lines).strip()]


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
