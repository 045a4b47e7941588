"""A memory that has never been used is ranked on what it says, not under another's outcome lift.

The quality prior lifts a memory with a good outcome record by up to `quality_lift_cap` (and a memory_bank fact by
what its importance and confidence state). Between two memories that both have a record, that is the prior doing
its job: a near tie goes to the one that helped before. Against a memory written this morning it is not: the new
one has had no chance to earn a lift, so a record bought with other questions decides a question it does not
answer better. Asked in other words through the server, fresh notes lost near ties that way to older notes of the
coding set they were nearer to (bench/results/s9-served9.md; issue 26 item 5: "the quality prior must not bury a
fresh memory under proven but off-topic ones").

So when exactly one of two neighbouring hits has a record, they are compared without positive lifts: the order
score with the demotion a bad record carries, recency, time words and the staleness factor, as ranked. Between
two memories with records, or two without, the final score decides as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .search import Hit


def has_record(hit: Hit) -> bool:
    """Whether the memory has been used (an outcome record the prior may lift it for). A book never has one: the
    quality model does not score reference documents, whatever counters their files claim."""
    return hit.memory.collection != "books" and (hit.memory.uses > 0 or bool(hit.memory.outcomes))


def unlifted(hit: Hit) -> float:
    """The hit's final score less what a quality factor above 1 added to it (demotions stay)."""
    explain = hit.explain or {}
    lift = max(0.0, explain.get("quality", 1.0) - 1.0)
    return hit.final - lift * explain.get("order", 0.0) * explain.get("stale_factor", 1.0)


def ahead(upper: Hit, lower: Hit) -> bool:
    """Whether `lower` belongs above `upper`: only when one of them has a record and the other none, and without
    positive lifts `lower` scores more."""
    if upper.explain is None or lower.explain is None or has_record(upper) == has_record(lower):
        return False
    return unlifted(lower) > unlifted(upper)


def fair_to_unscored(hits: Sequence[Hit]) -> list[Hit]:
    """`hits` (ordered by final score) with every adjacent pair of one used and one unused memory put in the order
    their unlifted scores give (passes of neighbour swaps, bounded; the list is a search's candidates)."""
    ordered = list(hits)
    for _ in range(len(ordered)):
        swapped = False
        for i in range(len(ordered) - 1):
            if ahead(ordered[i], ordered[i + 1]):
                ordered[i], ordered[i + 1] = ordered[i + 1], ordered[i]
                swapped = True
        if not swapped:
            break
    return ordered
