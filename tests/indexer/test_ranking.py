"""The outcome learner ranks by evidence, and a fallible scorer does not turn it upside down."""

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


def factor(memory: Memory) -> float:
    return quality_factor(*MODEL(memory, NOW))


def misreported(truth: str, wrong: float, rng: random.Random, count: int) -> tuple[str, ...]:
    return tuple(FLIPPED[truth] if rng.random() < wrong else truth for _ in range(count))


def test_a_good_memory_given_30_percent_wrong_scores_still_ranks_above_a_bad_one_most_of_the_time():
    right = total = 0
    for seed in range(200):
        rng = random.Random(seed)
        good, bad = misreported("worked", 0.3, rng, 12), misreported("failed", 0.3, rng, 12)
        for seen in range(4, 13):
            total += 1
            right += factor(scored(*good[:seen])) > factor(scored(*bad[:seen]))
    assert right / total >= 0.8


def test_a_streak_of_failures_after_a_long_good_record_demotes_the_memory():
    assert factor(scored(*["worked"] * 6, "partial", "worked", "failed", "failed")) < 1.0


def test_a_new_memory_that_worked_once_is_promoted_at_once():
    assert factor(scored("worked")) > factor(scored()) > 1.0
