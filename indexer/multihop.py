"""A second hop: reach the memory a question needs through the one the first search found.

Two ways here. The thread (on by default, `thread_lift`): the exchanges just before and after the
best hit in its captured conversation (its `previous:` chain, as the Stop hook writes it) rise a
little, together with it. A conversation speaks of one thing over several turns, and the turn that
answers often sits next to the one that matched the words ("I started a pottery class" two turns
before "the kids made bowls"). Only memories already among the candidates move, and their order
among themselves does not change; memories in no chain (notes, decisions) are not touched, and the
best hit stays first. On LoCoMo dev at turn level it lifted R@10 0.786 -> 0.799 and MRR@10
0.603 -> 0.612, in each of the five conversations (bench/results/locomo.md, "Issue 26 item 3, session 4").

The conversation (on by default, `conversation_lift`): among the strongest hits, the one whose whole text
is nearest the question marks the conversation that speaks of it, and that hit's session (up to
`conversation_reach` turns before and after it) rises a little. The best hit by the fused order is
often a turn that repeats the question's words; the turn nearest in meaning as a whole points at the
session where the topic is discussed, and a list question's other items are often said there. On
LoCoMo dev at turn level it lifted R@10 0.796 -> 0.805 on both halves of the dev conversations and
multi-hop R@10 0.534 -> 0.542, at 0.003 of MRR@10 (bench/results/locomo.md, "Issue 26 item 3, session 6").

The vector hop (below, off by default, `hop_seeds`):

Some questions are answered by two memories together ("where did Caroline move from", answered
by one turn saying she moved and another naming the country), and the second often shares no
word and little meaning with the question, only with the first memory. Without an LLM, the
second hop here is pseudo-relevance feedback on the vector channel (Rocchio): the query vector is
moved towards each of the strongest first-stage hits, the search's channels are asked again with
each moved vector (the keyword channel with the same words), and what that finds joins the
candidates with a share of its own score.

Off by default (`hop_seeds = 0`): on LoCoMo dev it moved turn-level Recall@10 by less than a
point at several times the search cost, and multi-hop not at all; a boost for memories naming
the person a question names, and the graph's neighbours, did not pay either (bench/results/locomo.md,
"Issue 26 item 3"). Kept so the measurement can be repeated and built on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Protocol, TypeVar

import numpy as np

from .chunking import WHOLE
from .index import Index


class Scored(Protocol):
    """What the second hop reads and writes of a search candidate."""

    memory_id: str
    fused: float
    evidence: float
    channel: str
    via: str | None


Retrieve = Callable[[np.ndarray], dict[str, Scored]]


def memory_vector(index: Index, memory_id: str) -> np.ndarray | None:
    """A memory's meaning as one unit vector: the mean of its whole-chunk vectors."""
    units = [u for u, _, role in index.units_of(memory_id) if role == WHOLE]
    if not units:
        return None
    mean = index.unit_vectors(np.array(units, dtype=np.int64)).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else None


def second_hop(index: Index, candidates: dict[str, Scored], query_vector: np.ndarray, retrieve: Retrieve,
               seeds: int, beta: float, share: float, make: Callable[[str], Scored]) -> None:
    """Search again from each of the `seeds` strongest candidates (the query vector moved `beta` of
    the way towards that memory); a memory found there enters, or rises, at `share` of the score
    it got there, led `via` that seed. `retrieve` runs the search's channels for a query vector."""
    if seeds <= 0 or share <= 0.0 or not candidates:
        return
    first = sorted(candidates.values(), key=lambda c: (-c.fused, c.memory_id))[:seeds]
    for seed in first:
        vector = memory_vector(index, seed.memory_id)
        if vector is None:
            continue
        moved = query_vector + beta * vector
        moved = moved / (float(np.linalg.norm(moved)) or 1.0)
        for memory_id, found in retrieve(moved.astype(np.float32)).items():
            fused, evidence = found.fused * share, found.evidence * share
            known = candidates.get(memory_id)
            if known is None:
                c = candidates[memory_id] = make(memory_id)
                c.fused, c.evidence, c.channel, c.via = fused, evidence, "hop", seed.memory_id
            elif fused > known.fused:
                known.fused = fused
                known.evidence = max(known.evidence, evidence)



class Ranked(Protocol):
    """What the thread lift reads and writes of a ranked hit."""

    @property
    def memory(self) -> Any: ...
    @property
    def final(self) -> float: ...
    @property
    def explain(self) -> dict[str, float] | None: ...


H = TypeVar("H", bound=Ranked)


def thread(index: Index, memory_id: str, reach: int) -> set[str]:
    """The memory and those up to `reach` `previous:` links before or after it (one captured session's nearby turns)."""
    found = {memory_id}
    for step in (index.previous_of, index.next_of):
        current = memory_id
        for _ in range(reach):
            near = step(current)
            if near is None or near.id in found:
                break
            found.add(near.id)
            current = near.id
    return found


def standing(hit: Ranked) -> float:
    """What a lift picks its anchor by: the hand-made order's `final` when the learned order replaced it
    (search.learned_order). The lifts were tuned on, and the learned order fitted with, anchors the hand order
    chose; anchored on the learned order's top, they lifted other turns and LoCoMo dev fell 0.606 -> 0.571."""
    return (hit.explain or {}).get("hand_final", hit.final)


def lift_thread(index: Index, hits: list[H], reach: int, lift: float) -> list[H]:
    """The best hit (the highest `final`) and the hits within `reach` turns of it in its thread, their
    `final` times 1 + `lift`: the best hit stays first and only the rest of the list moves."""
    if reach <= 0 or lift <= 0.0 or len(hits) < 2:
        return hits
    best = max(hits, key=standing)
    near = thread(index, best.memory.id, reach)
    if len(near) < 2:  # in no chain: nothing to lift beside the best hit
        return hits
    return [lifted(h, 1.0 + lift, "thread_factor") if h.memory.id in near else h for h in hits]


def lifted(hit: H, factor: float, name: str) -> H:
    """The hit with its `final` times `factor`, said in its explain under `name`. The hand-made order's final, where
    the learned order kept it, moves with it: the next lift anchors where the hand order, lifted, would have (the
    conversation lift picks among tied turns the one the thread lift raised)."""
    explain = {**(hit.explain or {}), name: factor}
    if "hand_final" in explain:
        explain["hand_final"] *= factor
    return replace(hit, final=hit.final * factor, explain=explain)  # type: ignore[type-var]


CONVERSATION_POOL = 30  # the strongest hits among which the one nearest the question in meaning is sought


def nearest_whole(index: Index, memory_ids: list[str], query_vector: np.ndarray) -> str | None:
    """Of these memories, the one whose whole text (its best whole-chunk unit) is nearest the query vector; ties
    go to the earlier one. None when none has a whole unit."""
    owners: list[int] = []
    units: list[int] = []
    for position, memory_id in enumerate(memory_ids):
        for unit, _, role in index.units_of(memory_id):
            if role == WHOLE:
                owners.append(position)
                units.append(unit)
    if not units:
        return None
    cosines = index.unit_vectors(np.array(units, dtype=np.int64)) @ query_vector
    return memory_ids[owners[int(np.argmax(cosines))]]


def lift_conversation(index: Index, hits: list[H], query_vector: np.ndarray | None, reach: int, lift: float,
                      pool: int = CONVERSATION_POOL) -> list[H]:
    """Among the `pool` strongest hits, the one whose whole text is nearest the query: it and the hits up to
    `reach` turns from it in its thread, their `final` times 1 + `lift`. Memories in no chain move nothing."""
    if query_vector is None or reach <= 0 or lift <= 0.0 or len(hits) < 2:
        return hits
    strongest = [h.memory.id for h in sorted(hits, key=lambda h: (-standing(h), h.memory.id))[:pool]]
    if not any(index.previous_of(i) is not None or index.next_of(i) is not None for i in strongest):
        return hits  # no captured conversation among them (a vault of notes): no vectors read
    nearest = nearest_whole(index, strongest, query_vector)
    near = thread(index, nearest, reach) if nearest is not None else set()
    if len(near) < 2:  # in no chain: its session is itself alone
        return hits
    return [lifted(h, 1.0 + lift, "conversation_factor") if h.memory.id in near else h for h in hits]
