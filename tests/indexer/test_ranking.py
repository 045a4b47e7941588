"""The outcome learner ranks by evidence, and a fallible scorer does not turn it upside down."""

from __future__ import annotations

import random
from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexer.ranking import QualityModel, quality_factor
from indexer.settings import INDEX_SECTIONS, SearchSettings
from vault.config import load_sections
from vault.errors import ConfigError
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
    """The factor search multiplies a result's order by."""
    return quality_factor(*MODEL(memory, NOW), SearchSettings().quality_gain)


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


def test_a_takeaway_recorded_as_worked_survives_one_wrong_failed_on_its_first_showing():
    recorded = Memory(id="m-2", path="working/m-2.md", collection="working", type="learning", title="t", body="b",
                      uses=1, success_count=0.0, outcomes=("worked", "failed"))
    assert factor(recorded) > 0.95 > factor(scored("failed"))


def test_a_takeaway_recorded_as_worked_enters_above_an_unscored_memory_but_only_by_a_tie_breaker():
    recorded = Memory(id="m-2", path="working/m-2.md", collection="working", type="learning", title="t", body="b",
                      outcomes=("worked",))
    assert 1.05 > factor(recorded) > factor(scored()) > 1.0


def test_the_learners_defaults_are_the_ones_memdir_toml_writes_out():
    assert QualityModel.from_settings(SearchSettings()) == QualityModel()


def test_memdir_toml_sets_how_fast_old_outcomes_fade(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text("[search]\nquality_decay = 1.0\n")
    never_fades = QualityModel.from_settings(load_sections(tmp_path, INDEX_SECTIONS)["search"])
    stale = scored(*["worked"] * 6, "partial", "worked", "failed", "failed")
    assert quality_factor(*never_fades(stale, NOW), 0.25) > 1.0 > factor(stale)


def test_memdir_toml_sets_how_far_a_bad_record_demotes_by_tier(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text("[search]\nquality_weight_emerging = 0.0\n")
    flat = QualityModel.from_settings(load_sections(tmp_path, INDEX_SECTIONS)["search"])
    assert quality_factor(*flat(scored("failed"), NOW), 0.25) == 1.0 > factor(scored("failed"))


@pytest.mark.parametrize(("line", "message"), [
    ("quality_decay = 1.5", r"memdir.toml:3 \[search\] quality_decay: 1.5 is not in \(0, 1\]"),
    ("quality_weight_proven = -0.1", r"memdir.toml:3 \[search\] quality_weight_proven: -0.1 is not in \[0, 1\]"),
    ("quality_prior = 0", r"memdir.toml:3 \[search\] quality_prior: 0.0 is not positive"),
    ("quality_decy = 0.7", r"memdir.toml \[search\]: unknown key\(s\) quality_decy"),
])
def test_a_learner_constant_that_cannot_be_used_names_the_file_line_and_key(tmp_path: Path, line: str, message: str):
    (tmp_path / "memdir.toml").write_text(f"[search]\nquality_gain = 0.25\n{line}\n")
    with pytest.raises(ConfigError, match=message):
        load_sections(tmp_path, INDEX_SECTIONS)
