"""A second hop: reach the memory a question needs through the one the first search found.

Some questions are answered by two memories together ("where did Caroline move from", answered
by one turn saying she moved and another naming the country), and the second often shares no
word and little meaning with the question, only with the first memory. Without an LLM, the
second hop here is pseudo-relevance feedback on the vector channel (Rocchio): the query vector is
moved towards each of the strongest first-stage hits, the search's channels are asked again with
each moved vector (the keyword channel with the same words), and what that finds joins the
candidates with a share of its own score.

Off by default (`hop_seeds = 0`): on LoCoMo dev it moved turn-level Recall@10 by less than a
point at several times the search cost, and multi-hop not at all; a boost for memories naming
the person a question names, and the graph's neighbours, did not pay either (bench/README.md,
"Issue 26 item 3"). Kept so the measurement can be repeated and built on.
"""

from __future__ import annotations

from typing import Callable, Protocol

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

