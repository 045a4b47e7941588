"""A question that names the person whose memories it asks about: "What activities does Melanie do?".

Some memories say who wrote or said them: a `speaker:` or `author:` field in their frontmatter (a
captured conversation turn, a decision signed by a teammate). When a query names such a person, the
name is a field to match, not meaning to embed: every memory of that person already starts with the
name ("Melanie: ..."), so in the query vector it pulls all of them up alike and drowns the words that
say which of them is meant. Here the name is taken out of the text the vector channel embeds (the
keyword channel keeps it), and the memories by the person named are lifted a little in the order.

On LoCoMo dev at turn level (bench/results/locomo.md, "Issue 26 item 3, session 3") this moved multi-hop
Recall@10 from 0.505 to about 0.55, where the evidence is a list spread over many turns by the
person named, each sharing the name and little else with the question. Stripping the name from the
keyword query as well, or lifting without stripping, did not pay.

Names match as written (case-sensitive, whole words): "Will" the author must not turn "what will
break" into a question about him. The index keeps the authors' names in step with the memories (facets.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vault.model import Memory

AUTHOR_FIELDS = ("speaker", "author")  # frontmatter keys that say who wrote or said a memory


def authors(memory: Memory) -> frozenset[str]:
    """Who wrote or said the memory, from its frontmatter (a name or a list of names)."""
    found: set[str] = set()
    for key in AUTHOR_FIELDS:
        value = memory.frontmatter.get(key)
        values = value if isinstance(value, (list, tuple)) else [value]
        found.update(v.strip() for v in values if isinstance(v, str) and v.strip())
    return frozenset(found)


@dataclass(frozen=True)
class Named:
    """The people a query names, and the query without their names (what the vector channel embeds)."""

    people: frozenset[str]
    embedded: str

    def factor(self, memory: Memory, boost: float) -> float:
        """How much a memory is lifted in the order: by 1 + boost when one of the people named wrote it."""
        return 1.0 + boost if self.people and self.people & authors(memory) else 1.0


NOBODY = Named(frozenset(), "")


class People:
    """The pattern of the authors known to an index, made again when their names change."""

    def __init__(self) -> None:
        # The names and their pattern as one value, read once a call: searches run in several threads, and two
        # attributes set one after the other could be read as new names with the old pattern (review of session 18).
        self._known: tuple[frozenset[str] | None, re.Pattern[str] | None] = (None, None)

    def named(self, query: str, names: frozenset[str]) -> Named:
        """The `names` (the index's authors) that `query` names, and the query with them (and a possessive 's) taken
        out. Nobody when it names none, or when taking the names out would leave nothing to embed."""
        known_names, pattern = self._known
        if names is not known_names:
            pattern = _pattern(set(names))
            self._known = (names, pattern)
        if pattern is None or not query:
            return NOBODY
        people = frozenset(m.group(1) for m in pattern.finditer(query))
        if not people:
            return NOBODY
        embedded = re.sub(r"\s{2,}", " ", pattern.sub("", query)).strip()
        return Named(people, embedded) if re.search(r"\w", embedded) else NOBODY


def _pattern(names: set[str]) -> re.Pattern[str] | None:
    """One whole-word, case-sensitive pattern for all names, longest first ("Mel" must not cut "Melanie")."""
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<!\w)({alternatives})(?:'s|’s)?(?!\w)")
