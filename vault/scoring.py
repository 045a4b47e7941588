"""Outcome math: Wilson's lower bound (shown as confidence) and the labels that go with it."""

from __future__ import annotations

import math

OUTCOME_SYMBOL = {"worked": "Y", "partial": "~", "failed": "N", "unknown": "?"}


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
