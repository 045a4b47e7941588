"""Whether two similar statements reverse each other.

Embeddings place "Dana prefers pip over uv" and "Dana prefers uv over pip" at cosine 0.99: the
same words about the same subject. Similarity alone would call them duplicates and suggest a
merge, which would destroy the newer decision. Before two memories are called duplicates (or
grouped for merging), this module looks for what makes them opposite:

- an order that flips: "A over B" / "B over A", also "instead of", "rather than", "not", "to";
- a negation or an antonym on one side only: "use X" / "do not use X", "enable" / "disable";
- a value that changes: a number, a version or a flag ("postgres:16" / "postgres:15", "15 min" / "30 min").

Each check needs the rest of the two statements to agree, so an unrelated difference in wording
(a paraphrase) is not read as a reversal. The pair set in tests/indexer/pairs.py measures it.
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.:/+-]*[a-z0-9]|[a-z0-9]")
_VALUE = re.compile(r"\d")
_NEGATIONS = frozenset("""
not no never don't doesn't didn't isn't aren't wasn't won't can't cannot shouldn't mustn't without avoid
stop stopped dropped drop disable disabled disallow forbid forbidden deprecated removed remove nor neither
""".split())
_ANTONYMS = (
    ("enable", "disable"), ("enabled", "disabled"), ("allow", "deny"), ("allowed", "denied"), ("sync", "async"),
    ("synchronous", "asynchronous"), ("synchronous", "async"), ("sync", "asynchronous"), ("true", "false"), ("on", "off"), ("increase", "decrease"),
    ("always", "never"), ("keep", "remove"), ("add", "remove"), ("use", "avoid"), ("before", "after"),
    ("include", "exclude"), ("required", "optional"), ("public", "private"), ("works", "fails"),
    ("succeeds", "fails"), ("faster", "slower"), ("more", "less"), ("higher", "lower"), ("start", "stop"),
    ("accept", "reject"), ("accepted", "rejected"), ("approve", "reject"), ("approved", "rejected"),
    ("safe", "unsafe"), ("supported", "unsupported"), ("first", "last"), ("min", "max"), ("up", "down"),
)
_OPPOSITE = {a: b for a, b in _ANTONYMS} | {b: a for a, b in _ANTONYMS}
VALUE_CHANGED = "a value changed"
_STOP = frozenset("a an the of to in on for and or is are was were be it this that with we our by as at".split())


@lru_cache(maxsize=32768)
def tokens(text: str) -> tuple[str, ...]:
    # Cached: the review inbox compares each memory with several neighbours (14k pairs at 10k memories).
    return tuple(t.rstrip(".:") for t in _TOKEN.findall(text.lower().replace("’", "'")))


def reverses(a: str, b: str) -> str:
    """Why statement `b` reverses statement `a` ("" when it does not)."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return ""
    why = _flipped_order(a.lower(), b.lower())
    if why:
        return why
    sa, sb = set(ta) - _STOP, set(tb) - _STOP
    shared = len(sa & sb) / max(1, min(len(sa), len(sb)))
    if shared < 0.5:
        return ""  # different statements: whatever differs is not a reversal of one claim
    only_a, only_b = sa - sb, sb - sa
    negated = (only_a & _NEGATIONS) ^ (only_b & _NEGATIONS)
    if negated and not (_NEGATIONS & only_a and _NEGATIONS & only_b):
        return f"one says {sorted(negated)[0]!r}, the other does not"
    for word in only_a:
        if _OPPOSITE.get(word) in only_b:
            return f"{word!r} against {_OPPOSITE[word]!r}"
    values_a = {t for t in only_a if _VALUE.search(t)}
    values_b = {t for t in only_b if _VALUE.search(t)}
    if values_a and values_b and shared >= 0.6:
        return f"{VALUE_CHANGED}: {sorted(values_a)[0]!r} to {sorted(values_b)[0]!r}"
    return ""


def updates(why: str) -> bool:
    """Whether a reversal (a `reverses` reason) is a changed value: more likely an update of the
    older statement than a disagreement."""
    return why.startswith(VALUE_CHANGED)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou" else word


@lru_cache(maxsize=32768)
def _sides(text: str, connector: str, width: int = 3) -> list[tuple[set[str], set[str]]]:
    """The content words just before and just after each use of an order word."""
    words = [t for t in tokens(text)]
    joined = connector.split()
    found = []
    for i in range(len(words) - len(joined) + 1):
        if words[i:i + len(joined)] == joined:
            before = {_stem(w) for w in words[max(0, i - width):i] if w not in _STOP}
            after = {_stem(w) for w in words[i + len(joined):i + len(joined) + width] if w not in _STOP}
            found.append((before - after, after - before))
    return found


def _flipped_order(a: str, b: str) -> str:
    """"A over B" against "B over A" (also instead of, rather than, before, after, prefer A to B)."""
    for connector in _CONNECTORS:
        for left_a, right_a in _sides(a, connector):
            for left_b, right_b in _sides(b, connector):
                if left_a & right_b and right_a & left_b:
                    return f"{sorted(left_a & right_b)[0]!r} {connector} {sorted(right_a & left_b)[0]!r}, then the reverse"
    return ""


_CONNECTORS = ("over", "instead of", "rather than", "before", "after", "in place of")
