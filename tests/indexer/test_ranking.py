"""The outcome learner ranks by evidence that survives a fallible scorer."""

from __future__ import annotations

import random
from datetime import datetime, timezone

from indexer.ranking import QualityModel, quality_factor
from vault.model import Memory
from vault.scoring import SUCCESS_CREDIT

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
MODEL = QualityModel()
FLIPPED = {"worked": "failed", "failed": "worked"}


def scored(*outcomes: str) -> Memory:
    return Memory(id="m-1", path="history/m-1.md", collection="history", type="learning", title="t", body="b",
                  uses=len(outcomes), success_count=sum(SUCCESS_CREDIT.get(o, 0.0) for o in outcomes),
                  outcomes=outcomes[-20:])


def factor(memory: Memory, model: QualityModel = MODEL) -> float:
    return quality_factor(*model(memory, NOW))


def misreported(truth: str, wrong: float, rng: random.Random, count: int) -> tuple[str, ...]:
    return tuple(FLIPPED[truth] if rng.random() < wrong else truth for _ in range(count))


def share_ranked_right(model: QualityModel, wrong: float) -> float:
    """How often a helpful memory outranks a misleading one when `wrong` of all scores are flipped."""
    right = total = 0
    for seed in range(200):
        rng = random.Random(seed)
        good, bad = misreported("worked", wrong, rng, 12), misreported("failed", wrong, rng, 12)
        for seen in range(4, 13):
            total += 1
            right += factor(scored(*good[:seen]), model) > factor(scored(*bad[:seen]), model)
    return right / total


def test_a_good_memory_given_30_percent_wrong_scores_still_ranks_above_a_bad_one_and_more_often_than_before():
    robust = share_ranked_right(MODEL, 0.3)
    assert robust >= 0.85
    assert robust > share_ranked_right(QualityModel(decay=0.5, streak=0), 0.3)


def test_one_stray_failure_in_a_long_good_record_keeps_the_memory_promoted():
    assert factor(scored(*["worked"] * 8, "failed")) > 1.05


def test_a_streak_of_failures_after_a_long_good_record_demotes_the_memory():
    stale = scored(*["worked"] * 6, "partial", "worked", "failed", "failed")
    assert factor(stale) < 1.0
    assert factor(stale) < factor(stale, QualityModel(streak=0))  # the record before the streak counts less


def test_one_stray_success_after_a_record_of_failures_does_not_promote_the_memory():
    assert factor(scored("failed", "failed", "failed", "failed", "worked")) < 1.0


def test_a_new_memory_that_worked_once_is_promoted_at_once():
    assert factor(scored("worked")) > factor(scored()) > 1.0


def test_a_streak_needs_an_older_record_to_discount():
    assert MODEL.streak_boundary(("failed", "failed")) == 0
    assert MODEL.streak_boundary(("worked", "failed", "failed")) == 2
    assert MODEL.streak_boundary(("worked", "worked", "failed")) == 0
    assert MODEL.streak_boundary(("failed", "partial")) == 0
    assert QualityModel(streak=0).streak_boundary(("worked", "failed", "failed")) == 0


def test_a_lone_reversal_counts_less_until_the_next_outcome_confirms_it():
    assert MODEL.lone_reversal(("worked", "worked", "failed"))
    assert MODEL.lone_reversal(("failed", "failed", "worked"))
    assert not MODEL.lone_reversal(("partial", "worked", "failed"))
    assert not MODEL.lone_reversal(("worked", "failed"))
    assert factor(scored("worked", "worked", "worked", "failed")) > 1.1  # one misreport among successes
    assert factor(scored("worked", "worked", "failed", "failed")) < 1.0  # confirmed: demoted
