"""The learner: how a memory's outcome record moves its rank (reputation lifts, current state demotes).

Outcomes are the model's own noisy judgement of the memories it was shown; `QualityModel` turns a
memory's record into the factor its order is multiplied by, and `proven_tier` names how much evidence
the record holds. Kept apart from the ranking math (ranking.py) so the learner can be read, tested and
swapped (`QualityFn`) on its own.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol, Sequence

from vault.model import Memory, bank_weight
from vault.scoring import SUCCESS_CREDIT

from .settings import SearchSettings


class Scored(Protocol):
    """What the learner reads of a memory: its outcome record (a Memory is one)."""

    @property
    def outcomes(self) -> Sequence[str]: ...
    @property
    def uses(self) -> int: ...
    @property
    def success_count(self) -> float: ...


class Record(NamedTuple):
    """An outcome record on its own: the key the learner's factor is cached by."""

    outcomes: tuple[str, ...]
    uses: int
    success_count: float


def quality_factor(quality: float, weight: float, gain: float = 1.0) -> float:
    """How a 0..1 quality moves a result (1.0 = neutral): a bad one takes off up to `weight`, a good
    one adds only `gain` of that (used for memory_bank facts' stated quality)."""
    delta = 2.0 * weight * (quality - 0.5)
    return 1.0 + (delta * gain if delta > 0 else delta)


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
    """How a memory's outcome record moves its rank: its reputation lifts it, its current state demotes it.

    Outcomes are the model's own, noisy judgement of memories it was shown (it forgets one that
    helped, blames one that was merely nearby, calls a half-fit "worked"), and a memory that helped
    for months can go wrong when the code changes. So the record answers two questions, each with
    its own evidence, and the factor is their product:

    lift (reputation: has it been good?), as before wave 2 session 5. The `outcomes` list is read
      newest first, the latest counting 1, the one before `decay`, then decay², ... (worked = 1
      success, partial = ½, failed = 1 failure), giving s and f; uses older than the list count at
      the weight the list ends with. quality = (prior + s) / (2 prior + s + f) + explore / sqrt(1 +
      s + f), and lift = gain * 2 * w * (quality - 0.5) when positive, w by tier (new → emerging →
      established → proven). A proven memory breaks ties; it does not bury a new one that answers
      better (coding set: full-strength lifts cost MRR).

    demotion (current state: is it wrong now?): a two-state filter (helpful / misleading) over the
      list, oldest first, from P(helpful) = ½:
        before each outcome   p *= 1 - stale_hazard       (it may have gone wrong since it was last used)
        worked                odds *= (1 - failed_if_helpful) / worked_if_misleading
        failed                odds *= failed_if_helpful / (1 - worked_if_misleading)
        partial               half a worked in log-odds: it helped somewhat, never evidence of misleading
      With the defaults a `worked` multiplies the odds by 3.5 and a `failed` by 0.375, and the hazard
      caps what any good record is worth (P ≤ 0.9), so failures in a row demote a memory that worked
      for months too, while a record that went on working after a failure recovers, and one scored
      wrong a fifth of the time stays helpful however long it grows. Below ½, badness
      b = (½ - p) / ½ and demotion = demotion * b^curve: one failure costs a new memory 13 %, two 39 %,
      three 53 %; after a long good record one costs nothing, two about 15 %.

    factor = (1 + lift) * (1 - demotion). memory_bank: quality_factor(sqrt(importance * confidence),
    memory_bank_weight, gain), its outcome quality blended in 20 % after 3 uses; books (never scored): a memory
    with no record's factor. Every
    constant is a `[search] quality_*` key of memdir.toml (`from_settings`), same defaults.
    Measured in bench/results/trust.md ("Issue 17, wave 2 session 5").
    """

    decay: float = 0.5
    prior: float = 0.5
    explore: float = 0.1
    weights: tuple[float, float, float, float] = (0.2, 0.35, 0.5, 0.6)  # new, emerging, established, proven
    gain: float = 0.25
    stale_hazard: float = 0.2
    worked_if_misleading: float = 0.2
    failed_if_helpful: float = 0.3
    demotion: float = 0.6
    curve: float = 3.0
    memory_bank_weight: float = 0.3
    bank_outcome_share: float = 0.2
    bank_outcome_uses: int = 3
    lift_cap: float = 0.05

    @classmethod
    def from_settings(cls, settings: SearchSettings) -> QualityModel:
        return cls(decay=settings.quality_decay, prior=settings.quality_prior, explore=settings.quality_explore,
                   weights=(settings.quality_weight_new, settings.quality_weight_emerging,
                            settings.quality_weight_established, settings.quality_weight_proven),
                   gain=settings.quality_gain, stale_hazard=settings.quality_stale_hazard,
                   worked_if_misleading=settings.quality_worked_if_misleading,
                   failed_if_helpful=settings.quality_failed_if_helpful,
                   demotion=settings.quality_demotion, curve=settings.quality_curve,
                   memory_bank_weight=settings.quality_weight_memory_bank,
                   bank_outcome_share=settings.quality_bank_outcome_share,
                   bank_outcome_uses=settings.quality_bank_outcome_uses,
                   lift_cap=settings.quality_lift_cap)

    def __call__(self, memory: Memory, now: datetime) -> float:
        if memory.collection == "books":
            # A reference document is never scored: it is lifted as a memory with no record is, or a note written
            # this morning (lifted by its optimism) wins a tie against the section that answers (issue 26 session 8).
            return self._record_factor((), 0, 0.0)
        if memory.collection == "memory_bank":
            stated = math.sqrt(bank_weight(memory.importance) * bank_weight(memory.confidence))
            if memory.uses >= self.bank_outcome_uses:
                stated = (1.0 - self.bank_outcome_share) * stated + self.bank_outcome_share * self.reputation(memory)
            return quality_factor(stated, self.memory_bank_weight, self.gain)
        # tuple(): the cache needs a hashable record, and a Memory built by hand may carry a list.
        return self._record_factor(tuple(memory.outcomes), memory.uses, memory.success_count)

    @functools.lru_cache(maxsize=4096)
    def _record_factor(self, outcomes: tuple[str, ...], uses: int, success_count: float) -> float:
        # The factor depends only on the record, and most memories share one with many others (never
        # scored, a few uses): a search reads it from here for its hundreds of candidates.
        record = Record(outcomes, uses, success_count)
        return (1.0 + self.lift(record)) * (1.0 - self.demotion_of(record))

    # -- reputation: the lift -----------------------------------------------------------

    def evidence(self, memory: Scored) -> tuple[float, float]:
        """Recency-discounted (successes, failures) from the outcome history, most recent last."""
        successes = failures = 0.0
        weight = 1.0
        listed = listed_successes = 0.0
        for outcome in reversed(memory.outcomes):
            credit = SUCCESS_CREDIT.get(outcome)
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

    def reputation(self, memory: Scored) -> float:
        """0..1: the Beta posterior mean of the discounted record, plus optimism that shrinks with evidence."""
        s, f = self.evidence(memory)
        mean = (self.prior + s) / (2 * self.prior + s + f)
        return min(1.0, mean + self.explore / math.sqrt(1.0 + s + f))

    def lift(self, memory: Scored) -> float:
        """The reputation's lift, scaled so that the best record in the top tier lifts by `lift_cap`: a
        proven memory still wins a near tie over an emerging one, but never buries a fresh memory
        that answers better (fresh-paraphrase set, bench/results/search.md issue 26 session 2)."""
        weight = self.weights[TIERS.index(proven_tier(memory.uses))]
        lift = max(0.0, self.gain * 2.0 * weight * (self.reputation(memory) - 0.5))
        strongest = self.gain * max(self.weights)  # reputation 1 in the top tier
        return lift * min(1.0, self.lift_cap / strongest) if strongest > 0 else 0.0

    # -- current state: the demotion ----------------------------------------------------

    def helpful(self, memory: Scored) -> float:
        """P(the memory helps now), from its outcome record: the filter in the class docstring."""
        worked = (1.0 - self.failed_if_helpful) / self.worked_if_misleading  # odds ratios of one outcome
        failed = self.failed_if_helpful / (1.0 - self.worked_if_misleading)
        # A partial helped somewhat: half a worked's evidence, never evidence of misleading.
        ratio = {"worked": worked, "partial": math.sqrt(worked), "failed": failed}
        steps = [ratio[o] for o in memory.outcomes if o in ratio]
        older = max(0, memory.uses - len(steps))
        if older:  # counters beyond the list: each step mixes a success and a failure in their proportion
            listed = sum(SUCCESS_CREDIT[o] for o in memory.outcomes if o in ratio)
            share = min(1.0, max(0.0, (memory.success_count - listed) / older))
            steps = [worked ** share * failed ** (1.0 - share)] * min(older, MAX_STEPS) + steps
        keep = 1.0 - self.stale_hazard
        p = 0.5
        for step in steps[-MAX_STEPS:]:
            p *= keep
            odds = p / (1.0 - p) * step
            p = odds / (1.0 + odds)
        return p

    def demotion_of(self, memory: Scored) -> float:
        badness = max(0.0, (0.5 - self.helpful(memory)) / 0.5)
        return self.demotion * badness ** self.curve


TIERS = ("new", "emerging", "established", "proven")
# The filter reads at most this many outcomes, newest last: behind the hazard an older one hardly moves the
# result (each step keeps 0.8 of the belief), and counters a merge summed to thousands of uses stay cheap.
MAX_STEPS = 40
