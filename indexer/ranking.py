"""Pure ranking math: channel evidence → relevance, quality by collection, and per-type recency.

Kept free of index state so it can be tested exhaustively and swapped (the outcome-learning
layer supplies a better quality estimate through `QualityFn`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Mapping

from vault.model import Memory
from vault.scoring import wilson_lower_bound

QualityFn = Callable[[Memory, datetime], tuple[float, float]]  # -> (quality 0..1, weight 0..1)


def quality_factor(quality: float, weight: float) -> float:
    """How much a memory's outcome record scales its relevance (1.0 = neutral)."""
    return 1.0 + 2.0 * weight * (quality - 0.5)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def calibrate(evidence: float, midpoint: float, steepness: float) -> float:
    """Map 0..1 evidence to a 0..1 relevance with a sigmoid rescaled so 0 → 0 and 1 → 1."""
    low, high = sigmoid(-steepness * midpoint), sigmoid(steepness * (1 - midpoint))
    return min(1.0, max(0.0, (sigmoid(steepness * (evidence - midpoint)) - low) / (high - low)))


def vector_evidence(cosine: float, floor: float, full: float) -> float:
    """How strongly the embedding says "relevant": 0 at or below `floor`, 1 at or above `full`."""
    return min(1.0, max(0.0, (cosine - floor) / (full - floor)))


def combined_evidence(vector: float | None, keyword: float | None) -> float:
    """Noisy-or: either channel alone can make a memory relevant; both together more so."""
    missing_v = 1.0 - (vector or 0.0)
    missing_k = 1.0 - (keyword or 0.0)
    return 1.0 - missing_v * missing_k


def proven_tier(uses: int) -> str:
    """new → emerging → established → proven, by how much outcome evidence a memory has."""
    if uses <= 0:
        return "new"
    if uses < 3:
        return "emerging"
    if uses < 10:
        return "established"
    return "proven"


@dataclass(frozen=True)
class QualityModel:
    """How outcome evidence turns into a ranking quality, and how strongly it moves a result.

    quality = min(1, (beta_mean + score) / 2 + explore / sqrt(uses + 1))
      beta_mean = (1 + success_count) / (2 + uses): the posterior mean of Beta(1 + s, 1 + f); a
                  new memory starts at 0.5 instead of Wilson's 0, so it is not buried;
      score     = the file's outcome score, which reacts to recent outcomes faster than counts do;
      explore   = an optimistic bonus that shrinks as evidence accumulates, so an unproven
                  memory that is relevant can reach the top and earn its first outcomes.
    factor = 1 + 2 * w * (quality - 0.5), with w growing with the tier (new → proven): a neutral
    memory keeps its relevance, a proven good one gains up to +w, one that kept failing loses up
    to -w. Multiplying (rather than averaging quality into relevance) keeps relevance first: a
    strong match is never dragged towards its quality's absolute level.
    memory_bank: quality = sqrt(importance * confidence), blended 80/20 with beta_mean after 3
    uses; books are not scored (w = 0).
    """

    explore: float = 0.15
    weights: tuple[float, float, float, float] = (0.15, 0.3, 0.45, 0.55)  # new, emerging, established, proven
    memory_bank_weight: float = 0.3

    def __call__(self, memory: Memory, now: datetime) -> tuple[float, float]:
        if memory.collection == "books":
            return 0.5, 0.0
        beta_mean = (1.0 + memory.success_count) / (2.0 + memory.uses)
        if memory.collection == "memory_bank":
            stated = math.sqrt((memory.importance if memory.importance is not None else 0.7)
                               * (memory.confidence if memory.confidence is not None else 0.7))
            return (0.8 * stated + 0.2 * beta_mean if memory.uses >= 3 else stated), self.memory_bank_weight
        quality = min(1.0, (beta_mean + memory.score) / 2 + self.explore / math.sqrt(memory.uses + 1))
        return quality, self.weights[TIERS.index(proven_tier(memory.uses))]


TIERS = ("new", "emerging", "established", "proven")


def wilson_quality(memory: Memory, now: datetime) -> tuple[float, float]:
    """Wilson's lower bound as quality: kept for comparison; it ranks unproven memories at 0."""
    if memory.collection == "books":
        return 0.5, 0.0
    weight = (0.0, 0.15, 0.3, 0.4)[TIERS.index(proven_tier(memory.uses))]
    return wilson_lower_bound(memory.success_count, memory.uses), weight


def recency_bonus(memory: Memory, now: datetime, table: Mapping[str, Mapping[str, float]]) -> float:
    """Additive bonus for young memories of time-sensitive types; old memories are never penalised."""
    rule = table.get(memory.type)
    if not rule or memory.created_at is None:
        return 0.0
    age_days = max(0.0, (now - memory.created_at).total_seconds() / 86400)
    if age_days > rule["window_days"]:
        return 0.0
    return rule["max_boost"] * rule["decay"] ** age_days
