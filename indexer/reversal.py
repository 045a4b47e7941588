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
stop stopped dropped drop disable disabled disallow forbid forbidden deprecated removed remove nor neither off
""".split())
_ANTONYMS = (
    ("enable", "disable"), ("enabled", "disabled"), ("allow", "deny"), ("allowed", "denied"), ("sync", "async"),
    ("synchronous", "asynchronous"), ("synchronous", "async"), ("sync", "asynchronous"), ("true", "false"), ("on", "off"), ("increase", "decrease"),
    ("always", "never"), ("keep", "remove"), ("add", "remove"), ("use", "avoid"), ("before", "after"),
    ("include", "exclude"), ("required", "optional"), ("public", "private"), ("works", "fails"),
    ("succeeds", "fails"), ("faster", "slower"), ("more", "less"), ("higher", "lower"), ("start", "stop"),
    ("accept", "reject"), ("accepted", "rejected"), ("approve", "reject"), ("approved", "rejected"),
    ("safe", "unsafe"), ("supported", "unsupported"), ("first", "last"), ("min", "max"), ("up", "down"),
    ("synchronously", "asynchronously"), ("allow", "forbid"), ("allowed", "forbidden"), ("allow", "disallow"),
    ("serially", "parallel"), ("sequential", "parallel"), ("stateless", "stateful"), ("mutable", "immutable"),
    ("include", "omit"), ("included", "excluded"), ("inside", "outside"), ("internal", "external"),
    ("blocking", "non-blocking"), ("strict", "lenient"), ("optional", "mandatory"), ("eager", "lazy"),
)
# Words that name a value as much as a number does: "one approval" / "two approvals", "nightly" / "weekly".
_VALUE_WORDS = frozenset("""one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty
sixty hundred thousand once twice hourly nightly daily weekly biweekly monthly quarterly yearly annually""".split())
_OPPOSITE: dict[str, set[str]] = {}
for _a, _b in _ANTONYMS:  # a word may have several opposites ("synchronous": "async", "asynchronous")
    _OPPOSITE.setdefault(_a, set()).add(_b)
    _OPPOSITE.setdefault(_b, set()).add(_a)
VALUE_CHANGED = "a value changed"
_STOP = frozenset("a an the of to in on for and or is are was were be it this that with we our by as at".split())


@lru_cache(maxsize=32768)
def tokens(text: str) -> tuple[str, ...]:
    # Cached: the review inbox compares each memory with several neighbours (14k pairs at 10k memories).
    return tuple(t.rstrip(".:") for t in _TOKEN.findall(text.lower().replace("’", "'")))


def reverses(a: str, b: str) -> str:
    """Why statement `b` reverses statement `a` ("" when it does not). Symmetric: whether two statements
    are opposed does not depend on which came first (only the reason is worded from `a` to `b`), so a
    merge group and the review queue, which look at a pair from either side, agree."""
    return _reverses(a, b) or _reverses(b, a)


def _reverses(a: str, b: str) -> str:
    ta, tb = tokens(_canonical(a)), tokens(_canonical(b))  # "spaces, not tabs" is an order, not a negation
    if not ta or not tb:
        return ""
    why = _flipped_order(_canonical(a), _canonical(b))
    if why:
        return why
    sa, sb = set(ta) - _STOP, set(tb) - _STOP
    shared = len(sa & sb) / max(1, min(len(sa), len(sb)))
    if shared < 0.5:
        return ""  # different statements: whatever differs is not a reversal of one claim
    why = _chooses_rejected(_canonical(a), b)
    if why:
        return why
    only_a, only_b = sa - sb, sb - sa
    negated = (only_a & _NEGATIONS) ^ (only_b & _NEGATIONS)
    if negated and not (_NEGATIONS & only_a and _NEGATIONS & only_b):
        return f"one says {sorted(negated)[0]!r}, the other does not"
    for word in only_a:
        opposite = sorted(_OPPOSITE.get(word, set()) & only_b)
        if opposite:
            return f"{word!r} against {opposite[0]!r}"
    values_a = {t for t in only_a if _VALUE.search(t) or t in _VALUE_WORDS}
    values_b = {t for t in only_b if _VALUE.search(t) or t in _VALUE_WORDS}
    if values_a and values_b and shared >= 0.6:
        return f"{VALUE_CHANGED}: {sorted(values_a)[0]!r} to {sorted(values_b)[0]!r}"
    return ""


# Words by which a statement says it comes after another: "we no longer use Celery", "we now use RQ", "switched to".
_LATER = re.compile(r"\b(?:no longer|not any ?more|any ?more|now|nowadays|these days|from now on|going forward|"
                    r"instead|switched|switching|moved (?:to|from|away)|migrated|replaced|replaces|superseded|"
                    r"deprecated|since then|changed (?:to|from))\b", re.IGNORECASE)


def reads_later(a: str, b: str) -> bool | None:
    """Whether statement `b` says by its own words that it came after `a` ("we no longer use X" after "we use X"):
    True or False when exactly one of the two speaks of a change, None when neither or both do. For two memories
    whose timestamps cannot order them (written in the same second)."""
    said_a, said_b = bool(_LATER.search(a)), bool(_LATER.search(b))
    return None if said_a == said_b else said_b


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


def _canonical(text: str) -> str:
    """Lower case, with every way of saying "A is preferred to B" written as "A over B": so "pytest rather
    than unittest" and "unittest over pytest" are compared as one order flipped."""
    text = text.lower().replace("’", "'")
    text = re.sub(r"\b(?:instead of|rather than|in place of)\b", " over ", text)
    text = re.sub(r",\s*(?:and\s+)?not\s+", " over ", text)  # "spaces, not tabs"
    # "prefer X to Y", not "prefers to deploy on Mondays to avoid ..." (a "to" right after the verb)
    return re.sub(r"\b(prefers?|preferred|preferring|favou?rs?|favou?red)(\s+(?!to\b)\S.{0,60}?)\s+to\b",
                  r"\1\2 over", text)


def _chooses_rejected(a: str, b: str) -> str:
    """`a` says "X over Y" and `b` takes Y without X: "rolling releases instead of blue-green releases"
    against "deploy with blue-green releases". `a` is canonical (see _canonical)."""
    if " over " in f" {_canonical(b)} ":
        return ""  # b states an order of its own: _flipped_order compares the two
    words_b = {_stem(w) for w in tokens(b)}
    words = [_stem(w) for w in tokens(a)]
    for i, word in enumerate(words):
        if word != "over":
            continue
        after = [w for w in words[i + 1:i + 4] if w not in _STOP]
        # The nearest word before "over" that the other side does not repeat ("rolling" in "rolling
        # releases over blue-green releases"), and the first word after it.
        chosen = next((w for w in reversed(words[max(0, i - 3):i]) if w not in _STOP and w not in after), None)
        rejected = after[0] if after else None
        if chosen and rejected and rejected in words_b and chosen not in words_b:
            return f"{chosen!r} over {rejected!r}, then {rejected!r} alone"
    return ""


def _flipped_order(a: str, b: str) -> str:
    """"A over B" against "B over A" (also instead of, rather than, before, after, prefer A to B)."""
    for connector in _CONNECTORS:
        for left_a, right_a in _sides(a, connector):
            for left_b, right_b in _sides(b, connector):
                if left_a & right_b and right_a & left_b:
                    return f"{sorted(left_a & right_b)[0]!r} {connector} {sorted(right_a & left_b)[0]!r}, then the reverse"
    return ""


_CONNECTORS = ("over", "before", "after")  # "instead of", "rather than", "in place of": "over" (_canonical)
