"""Pure ranking math: channel evidence → relevance, quality by collection, and per-type recency.

Kept free of index state so it can be tested exhaustively and swapped (the outcome-learning
layer supplies a better quality estimate through `QualityFn`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Mapping

from vault.model import BANK_DEFAULT, Memory
from vault.scoring import wilson_lower_bound

from .settings import SearchSettings

QualityFn = Callable[[Memory, datetime], tuple[float, float]]  # -> (quality 0..1, weight 0..1)


def quality_factor(quality: float, weight: float, gain: float = 1.0) -> float:
    """How much a memory's outcome record scales its relevance (1.0 = neutral).

    A bad record takes off up to `weight`; a good one adds only `gain` of that. Outcomes are the
    model's own, noisy judgement of memories it was shown, and a record only exists for memories
    that were shown: at full strength a long good record lifted a loosely related memory over a
    new one that answers the question (coding set: MRR@10 0.754 at gain 1, 0.836 at 0.25).
    """
    delta = 2.0 * weight * (quality - 0.5)
    return 1.0 + (delta * gain if delta > 0 else delta)


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

    Evidence is discounted by recency within the outcome history: the latest outcome counts 1,
    the one before `decay`, then decay², ... (worked = 1 success, partial = ½, failed = 1
    failure). So a memory that helped for months but misled the last three times reads as
    misleading now, while its long record still shows in `uses` and Wilson.

    quality = (prior + s) / (2 * prior + s + f) + explore / sqrt(1 + s + f)
      the posterior mean of Beta(prior + s, prior + f), plus an optimistic bonus that shrinks
      as evidence accumulates, so an unproven memory that is relevant can reach the top and
      earn its first outcomes (Wilson's lower bound would rank it at 0 and bury it).
    factor = 1 + 2 * w * (quality - 0.5), w growing with the tier (new → emerging → established
      → proven): a neutral memory keeps its relevance, a proven good one gains up to +w, one
      that keeps misleading loses up to -w. Multiplying keeps relevance first.
    memory_bank: quality = sqrt(importance * confidence), blended 80/20 with the outcome quality
    after 3 uses; books are not scored (w = 0).

    Every constant is a `[search] quality_*` key of memdir.toml (`from_settings`); the defaults
    here are the same values.
    """

    decay: float = 0.5
    prior: float = 0.5
    explore: float = 0.1
    weights: tuple[float, float, float, float] = (0.2, 0.35, 0.5, 0.6)  # new, emerging, established, proven
    memory_bank_weight: float = 0.3
    bank_outcome_share: float = 0.2
    bank_outcome_uses: int = 3

    @classmethod
    def from_settings(cls, settings: SearchSettings) -> QualityModel:
        return cls(decay=settings.quality_decay, prior=settings.quality_prior, explore=settings.quality_explore,
                   weights=(settings.quality_weight_new, settings.quality_weight_emerging,
                            settings.quality_weight_established, settings.quality_weight_proven),
                   memory_bank_weight=settings.quality_weight_memory_bank,
                   bank_outcome_share=settings.quality_bank_outcome_share,
                   bank_outcome_uses=settings.quality_bank_outcome_uses)

    def evidence(self, memory: Memory) -> tuple[float, float]:
        """Recency-discounted (successes, failures) from the outcome history, most recent last."""
        successes = failures = 0.0
        weight = 1.0
        listed = listed_successes = 0.0
        for outcome in reversed(memory.outcomes):
            credit = {"worked": 1.0, "partial": 0.5, "failed": 0.0}.get(outcome)
            if credit is not None:
                successes += weight * credit
                failures += weight * (1.0 - credit)
                weight *= self.decay
                listed += 1
                listed_successes += credit
        # Uses older than the (bounded) list, or counters a person wrote without a list, count at
        # the weight the list ends with: fully when there is no list, hardly behind a long one.
        rest = max(0.0, memory.uses - listed)
        rest_successes = min(rest, max(0.0, memory.success_count - listed_successes))
        return successes + weight * rest_successes, failures + weight * (rest - rest_successes)

    def outcome_quality(self, memory: Memory) -> float:
        s, f = self.evidence(memory)
        mean = (self.prior + s) / (2 * self.prior + s + f)
        return min(1.0, mean + self.explore / math.sqrt(1.0 + s + f))

    def __call__(self, memory: Memory, now: datetime) -> tuple[float, float]:
        if memory.collection == "books":
            return 0.5, 0.0
        if memory.collection == "memory_bank":
            stated = math.sqrt((memory.importance if memory.importance is not None else BANK_DEFAULT)
                               * (memory.confidence if memory.confidence is not None else BANK_DEFAULT))
            share = self.bank_outcome_share if memory.uses >= self.bank_outcome_uses else 0.0
            quality = (1.0 - share) * stated + share * self.outcome_quality(memory) if share else stated
            return quality, self.memory_bank_weight
        return self.outcome_quality(memory), self.weights[TIERS.index(proven_tier(memory.uses))]


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
