"""The outcome learner memdir shipped until wave 2 session 5, kept as the measured baseline.

One recency-discounted Beta posterior both lifted and demoted: factor = quality_factor(reputation,
w by tier, gain), so a bad recent record took off up to the tier's weight (at most 35 % with 1-2
uses, 50 % with 3-9). memdir's `QualityModel` keeps that reputation for the lift and demotes with
a two-state filter instead; bench/learning.py runs both (`--models previous,default`) so before
and after are measured in one run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from indexer.learner import TIERS, QualityModel, proven_tier, quality_factor
from vault.model import Memory


@dataclass(frozen=True)
class BetaDecayLearner(QualityModel):
    def __call__(self, memory: Memory, now: datetime) -> float:
        if memory.collection in ("books", "memory_bank"):
            return super().__call__(memory, now)
        weight = self.weights[TIERS.index(proven_tier(memory.uses))]
        return quality_factor(self.reputation(memory), weight, self.gain)
