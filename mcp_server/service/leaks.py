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
from typing import Iterable

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


def shared_fragment(text: str, private: str) -> str | None:
    """What of `private` the `text` repeats (a phrase or a token), or None when it repeats nothing."""
    mine, theirs = _tokens(text), _tokens(private)
    common = _shingles(mine) & _shingles(theirs)
    if common:
        return " ".join(sorted(common)[0])
    words = {w.lower() for w, _ in mine}
    tokens = sorted(_distinctive(theirs) & words)
    return tokens[0] if tokens else None


def repeated(text: str, memories: Iterable[Memory]) -> tuple[Memory, str] | None:
    """The first private memory (of those given) whose content `text` repeats, with what it repeats."""
    for memory in memories:
        fragment = shared_fragment(text, f"{memory.title}\n{memory.body}")
        if fragment is not None:
            return memory, fragment
    return None
