"""Does text the model is about to write into a shared file repeat a private memory?

Private memories (the user vault, or `privacy: private`) are for the user only. In a turn where
some were shown, anything the model writes - a takeaway, an edit, an appended paragraph, a merge,
the captured exchange - may carry them into a file the team reads. Writes in such a turn go to the
private side unless they share nothing with the private memories shown; this module decides
"shares", and errs towards "yes": a shared note wrongly kept private costs a teammate one note,
a private detail wrongly shared cannot be taken back.

Shared content is any of:
- a run of three words of the private text (stop words alone do not count);
- a distinctive token of it: anything with a digit (dates, amounts, phone numbers, ids), an
  e-mail address or handle, a name written with a capital inside a sentence ("Berlin", "Priya";
  not months and weekdays).
Paraphrase without any of these ("moving abroad next month" for "relocates to Berlin in December")
is not caught; tests/mcp_server/test_leaks.py measures both kinds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Container, Iterable, Iterator, Mapping

from indexer.stopwords import STOP_WORDS
from vault import Memory

SHINGLE = 3
_WORD = re.compile(r"[A-Za-z0-9][\w@.+'-]*[\w]|[A-Za-z0-9]")
_SENTENCE_END = re.compile(r"[.!?:;\n]\s*$")
# Capitalized without being names: months and weekdays are in every plan ("Tom covers billing in
# December"), so alone they are not a sign of a private memory (a phrase with them still is).
_CAPITALIZED_COMMON = frozenset("""i i'm i've i'll i'd user assistant the a an ok okay yes no monday tuesday wednesday
thursday friday saturday sunday january february march april may june july august september october november
december""".split())


def _tokens(text: str) -> list[tuple[str, bool]]:
    """Words in order, each with whether it opens a sentence."""
    found = []
    for match in _WORD.finditer(text):
        before = text[:match.start()]
        found.append((match.group(0), not before.strip() or bool(_SENTENCE_END.search(before))))
    return found


def _distinctive(tokens: list[tuple[str, bool]]) -> set[str]:
    keep = set()
    for word, opens in tokens:
        lower = word.lower()
        if any(c.isdigit() for c in word) and len(word) >= 2:
            keep.add(lower)
        elif "@" in word:
            keep.add(lower)
        elif word[0].isupper() and not opens and len(word) >= 3 and lower not in STOP_WORDS \
                and lower not in _CAPITALIZED_COMMON:
            keep.add(lower)
    return keep


def _shingles(tokens: list[tuple[str, bool]]) -> set[tuple[str, ...]]:
    words = [w.lower() for w, _ in tokens]
    return {tuple(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)
            if not all(w in STOP_WORDS for w in words[i:i + SHINGLE])}


def shared_fragment(text: str, private: str, marks: Iterable[str] = ()) -> str | None:
    """What of `private` the `text` repeats (a phrase or a token), or None when it repeats nothing. `marks` are
    more distinctive tokens of the private memory (its compound tags)."""
    mine, theirs = _tokens(text), _tokens(private)
    common = _shingles(mine) & _shingles(theirs)
    if common:
        return " ".join(sorted(common)[0])
    words = {w.lower() for w, _ in mine}
    words |= {part for w in list(words) for part in re.split(r"[-_./]", w) if part}  # a tag "berlin-move", a key "berlin_move"
    tokens = sorted((_distinctive(theirs) | {m.lower() for m in marks}) & words)
    return tokens[0] if tokens else None


def _compound_tags(memory: Memory, topics: Container[str]) -> list[str]:
    """A private memory's tags of two parts or more ("dana-leaving"): as particular as a name, unless a shared memory
    carries the tag too (`topics`: "code-review" is the team's). A one-word tag ("python") is a topic anyway."""
    return [t for t in memory.tags if len([p for p in re.split(r"[-_./]", t) if p]) >= 2 and t not in topics]


def repeated(text: str, memories: Iterable[Memory], topics: Container[str] = ()) -> tuple[Memory, str] | None:
    """The first private memory (of those given) whose content `text` repeats, with what it repeats: its title,
    aliases and body, and its compound tags that no shared memory carries (`topics`)."""
    for memory in memories:
        fragment = shared_fragment(text, "\n".join((memory.title, *memory.aliases, memory.body)),
                                   _compound_tags(memory, topics))
        if fragment is not None:
            return memory, fragment
    return None


# -- the one rule every write into a shared file goes through -------------------------------------

RELATION_KEYS = frozenset({"supersedes", "depends_on", "contradicts", "derives_from", "related", "previous"})
_WIKILINK = re.compile(r"\[\[(?:memory:)?([^\]|#]+)")


@dataclass(frozen=True)
class Leak:
    """A field of a write that would carry a private memory into a shared file."""
    field: str
    memory: Memory
    what: str  # "text" (a phrase or token of it) or "id" (its id or title as a reference)
    fragment: str

    def reason(self) -> str:
        if self.what == "id":
            return f"{self.field} names private memory {self.memory.id} ({self.fragment!r})"
        return f"{self.field} repeats text of private memory {self.memory.id} shown in this session ({self.fragment!r})"


def first_leak(fields: Mapping[str, Any], shown: Iterable[Memory], private: Mapping[str, Memory],
               topics: Container[str] = ()) -> Leak | None:
    """The first field of a write into a shared file that carries a private memory, or None.

    `fields` is everything the write puts into the file, by name: content, title, tags, aliases, summary,
    custom keys, relation targets, appended or merged text. A field leaks when its text repeats a private
    memory shown in this session (`shown`, see `repeated`), or when it refers to any private memory
    (`private`, by id) at all: as a relation target or a wikilink (by id, title, alias or file name), or its
    id, file name or exact title written out.
    A shared file that points at a private memory tells every reader it exists and links to nothing.
    `topics`: the tags shared memories carry (see `repeated`).
    """
    shown = list(shown)
    for name, text, is_relation in _flattened(fields):
        reference = _reference(text, is_relation, private)
        if reference is not None:
            return Leak(name, reference[0], "id", reference[1])
        found = repeated(text, shown, topics)
        if found is not None:
            return Leak(name, found[0], "text", found[1])
    return None


def _flattened(fields: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str, bool]]:
    """(field name, its text, whether it is a relation) for every string a write would store."""
    for key, value in fields.items():
        name = f"{prefix}{key}"
        relation = str(key) in RELATION_KEYS
        yield f"the key {name}", str(key), False  # a custom key's name is written into the file too
        if isinstance(value, Mapping):
            yield from _flattened(value, f"{name}.")
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in value:
                for inner_name, text, inner in _flattened({key: item}, prefix):
                    if not inner_name.startswith("the key "):
                        yield name, text, relation or inner
        elif value is not None and not isinstance(value, bool):
            yield name, str(value), relation


def _reference(text: str, is_relation: bool, private: Mapping[str, Memory]) -> tuple[Memory, str] | None:
    """A private memory that `text` points at: as a relation value or wikilink (id, title, alias or file
    name: every name a link resolves by), as the whole value when that is its title or an alias (two words
    or more), or its id written out when the id looks like one (has a digit or a hyphen; a one-word id or
    title is an ordinary word)."""
    if not private:
        return None
    targets = [m.group(1).strip() for m in _WIKILINK.finditer(text)]
    if is_relation:
        targets.append(text.strip())
    by_title = {name.strip().lower(): m for m in private.values() for name in (m.title, *m.aliases) if name.strip()}
    by_name = {**{m.stem.lower(): m for m in private.values()}, **by_title}
    for target in targets:
        file_name = target.rsplit("/", 1)[-1].lower().removesuffix(".md")  # [[memory_bank/dana-move.md]]
        memory = private.get(target) or by_name.get(target.lower()) or by_name.get(file_name)
        if memory is not None:
            return memory, target
    whole = by_title.get(text.strip().lower())  # a value that is a private title or alias of two words or more
    if whole is not None and len(text.split()) >= 2:
        return whole, text.strip()
    for memory_id, memory in private.items():
        # Its id, or its file name written out ("see memory_bank/dana-relocation.md"): a file name of two words or
        # more is a slug of its title.
        for name in (memory_id, memory.stem if len(re.split(r"[-_.]", memory.stem)) >= 2 else ""):
            if name and any(c.isdigit() or c in "-_" for c in name) and \
                    re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE):
                return memory, name
    return None
