"""A fresh memory nobody has used yet is ranked on what it says, not under another's outcome lift.

The quality prior lifts a memory with a good outcome record by up to `quality_lift_cap` (and a memory_bank fact by
what its importance and confidence state). Between two memories that both had their chances, that is the prior
doing its job: a near tie goes to the one that helped before, and one that sat unused for weeks has no claim
against it. Against a memory written this morning it is not: the new one has had no chance to earn a lift, so a
record bought with other questions decides a question it does not answer better. Asked in other words through the
server, fresh notes lost near ties that way to older notes of the coding set they were nearer to
(bench/results/s9-served9.md; issue 26 item 5: "the quality prior must not bury a fresh memory under proven but
off-topic ones").

So when one of two neighbouring hits has a record and the other is unused and written within `fresh_unscored_days`,
they are compared on how they match the question alone: without the record's lift, and without the recency bonus
that lifts the young one (kept, it put a fresh working note over the used answer it matched less well: coding dev,
"how long do we cache slot search results"). The demotion of a bad record, the query's time words, the
staleness factor and a captured turn's thread and conversation lifts stay. Every other pair keeps the final score's order.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Protocol, Sequence, TypeVar

from vault.model import Memory


class Ranked(Protocol):
    """What this needs of a search hit (indexer.search.Hit, which imports this module)."""

    memory: Memory
    final: float
    explain: dict[str, float] | None

    def moment(self) -> float: ...


Hit = TypeVar("Hit", bound=Ranked)


def has_record(hit: Ranked) -> bool:
    """Whether the memory has been used (an outcome record the prior may lift it for). A book never has one: the
    quality model does not score reference documents, whatever counters their files claim."""
    return hit.memory.collection != "books" and (hit.memory.uses > 0 or bool(hit.memory.outcomes))


def on_match(hit: Ranked) -> float:
    """What the hit scores on how it matches the question: its order score with the demotion a bad record carries,
    what the query's time words add, the staleness factor, and the thread and conversation lifts (they follow the
    question: the turns beside the one it found; indexer/multihop.py); no quality lift and no recency bonus, the two
    priors a used memory and a new one each have the one of (a record's lift, a young memory's recency)."""
    explain: dict[str, Any] = hit.explain or {}
    demoted = explain.get("order", 0.0) * min(1.0, explain.get("quality", 1.0))
    lifts = explain.get("thread_factor", 1.0) * explain.get("conversation_factor", 1.0)
    return (demoted + explain.get("time_match", 0.0)) * explain.get("stale_factor", 1.0) * lifts


def fair_to_fresh(hits: Sequence[Hit], now: datetime, days: float) -> list[Hit]:
    """`hits` (ordered by final score) with every adjacent pair of a used memory and a fresh unused one put in the
    order their match gives (`on_match`) (passes of neighbour swaps, bounded by the list's length). `days` 0: as given."""
    ordered = list(hits)
    if days <= 0:
        return ordered
    since = (now - timedelta(days=days)).timestamp()

    def fresh(hit: Hit) -> bool:
        return not has_record(hit) and hit.moment() >= since

    def ahead(upper: Hit, lower: Hit) -> bool:
        if upper.explain is None or lower.explain is None:
            return False
        if not ((has_record(upper) and fresh(lower)) or (fresh(upper) and has_record(lower))):
            return False
        return on_match(lower) > on_match(upper)

    for _ in range(len(ordered)):
        swapped = False
        for i in range(len(ordered) - 1):
            if ahead(ordered[i], ordered[i + 1]):
                ordered[i], ordered[i + 1] = ordered[i + 1], ordered[i]
                swapped = True
        if not swapped:
            break
    return ordered
