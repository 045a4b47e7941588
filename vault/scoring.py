"""Outcome math: how one outcome changes a memory's counters, Wilson's bound, and the labels.

Everything here is pure: it computes frontmatter values from a Memory and a moment. The
write itself is a `Change(derive=...)`, so it is re-derived from the current file if a
human or another process changed it in the meantime, and touches only these keys.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from .errors import ValidationError
from .model import OUTCOMES, Memory
from .settings import ScoringSettings

OUTCOME_SYMBOL = {"worked": "Y", "partial": "~", "failed": "N", "unknown": "?"}
SUCCESS_CREDIT = {"worked": 1.0, "partial": 0.5, "failed": 0.0}
COUNTER_KEYS = (  # what scoring writes into frontmatter (curator protects them, history tells them apart)
    "score", "uses", "success_count", "outcomes", "last_used_at", "last_outcome")


def check_outcome(outcome: object) -> str:
    if outcome not in OUTCOMES:
        raise ValidationError(f"unknown outcome {outcome!r}; expected one of: {', '.join(OUTCOMES)}")
    return str(outcome)


def recency_weight(memory: Memory, now: datetime, settings: ScoringSettings) -> float:
    """1 / (1 + age_days / recency_days): outcomes move young memories more than old ones."""
    if memory.created_at is None:
        return 1.0
    age_days = max(0.0, (now - memory.created_at).total_seconds() / 86400)
    return 1.0 / (1.0 + age_days / settings.recency_days)


def outcome_updates(memory: Memory, outcome: str, now: datetime, settings: ScoringSettings,
                    history: int = 20) -> dict[str, Any]:
    """The frontmatter keys one outcome changes; {} when nothing changes.

    `unknown` means the memory was not used: it neither helps nor hurts. memory_bank memories
    count uses (ranking blends their record in after 3) but keep their score; books are
    reference documents and are never scored.
    """
    check_outcome(outcome)
    if outcome == "unknown" or memory.collection == "books":
        return {}
    updates: dict[str, Any] = {
        "uses": memory.uses + 1,
        "success_count": round(memory.success_count + SUCCESS_CREDIT[outcome], 4),
        "outcomes": (list(memory.outcomes) + [outcome])[-history:],
        "last_used_at": now,
        "last_outcome": outcome,
    }
    if memory.scored:
        delta = getattr(settings, outcome) * recency_weight(memory, now, settings)
        updates["score"] = round(min(1.0, max(0.0, memory.score + delta)), 4)
    return updates


def initial_score(outcome: str | None, settings: ScoringSettings) -> float:
    """The score a recorded takeaway starts with: worked 0.7, partial 0.55, failed 0.2, none 0.5."""
    if outcome is None or outcome == "unknown":
        return settings.initial_none
    check_outcome(outcome)
    return float(getattr(settings, f"initial_{outcome}"))


def initial_counters(outcome: str | None, settings: ScoringSettings) -> dict[str, Any]:
    """The counters a recorded takeaway starts with: its initial score and, when the exchange it came
    from had an outcome, that outcome as the first entry of `outcomes` (`uses` stays 0: it has not
    been shown yet). Ranking reads the list, so a takeaway that worked starts with one success of
    evidence, which fades like any other outcome, and one wrong `failed` on its first showing
    leaves it neutral instead of demoted (bench/learning.py: with 20 % flipped scores the new
    helpful memories enter within 1 round instead of 2, worst of 5 seeds).
    """
    counters: dict[str, Any] = {"score": initial_score(outcome, settings)}
    if outcome in SUCCESS_CREDIT:
        counters["outcomes"] = [outcome]
    return counters


def wilson_lower_bound(successes: float, trials: int, z: float = 1.96) -> float:
    """95 % lower bound of the success rate; 0.5 for a memory that has never been scored."""
    if trials <= 0:
        return 0.5
    p = min(max(successes / trials, 0.0), 1.0)
    denominator = 1 + z * z / trials
    centre = p + z * z / (2 * trials)
    margin = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, (centre - margin) / denominator)


def outcome_history(outcomes: tuple[str, ...] | list[str], last: int = 4) -> str:
    """`[YY~N]`: the most recent outcomes, oldest first (Y worked, ~ partial, N failed)."""
    if not outcomes:
        return ""
    return "[" + "".join(OUTCOME_SYMBOL.get(o, "?") for o in list(outcomes)[-last:]) + "]"
