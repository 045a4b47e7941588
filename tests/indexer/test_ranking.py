"""The outcome learner ranks by evidence, and a fallible scorer does not turn it upside down."""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexer.learner import QualityModel
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
    return MODEL(memory, NOW)


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


def test_a_memory_never_scored_is_lifted_only_by_its_optimism():
    assert 1.0 < factor(scored()) < 1.02


def test_a_memory_whose_outcomes_are_a_list_is_ranked_like_one_whose_outcomes_are_a_tuple():
    # Memories parsed from files carry tuples; one built by hand (a bench, a plugin) may carry a list.
    as_tuple = scored("worked", "failed", "worked")
    as_list = dataclasses.replace(as_tuple, outcomes=list(as_tuple.outcomes))
    assert factor(as_list) == factor(as_tuple)


def test_a_streak_of_failures_after_a_long_good_record_demotes_the_memory():
    assert factor(scored(*["worked"] * 6, "partial", "worked", "failed", "failed")) < 0.85


def test_two_real_failures_demote_a_memory_that_worked_for_months_by_more_than_a_tenth():
    months = ["worked"] * 19
    assert factor(scored(*months, "failed", "failed")) < 0.9 < factor(scored(*months, "failed"))


def test_a_memory_only_ever_scored_partial_is_not_demoted():
    assert factor(scored(*["partial"] * 10)) >= 1.0 and factor(scored("worked", *["partial"] * 4)) >= 1.0


def test_a_helpful_memory_scored_wrong_a_fifth_of_the_time_is_rarely_demoted_however_long_its_record():
    rng = random.Random(7)
    for uses in (20, 40):
        demoted = sum(factor(scored(*misreported("worked", 0.2, rng, uses))) < 0.9 for _ in range(500))
        assert demoted / 500 < 0.12


def test_a_misleading_memory_scored_wrong_a_fifth_of_the_time_is_demoted_within_five_uses_mostly():
    rng = random.Random(8)
    kept = sum(factor(scored(*misreported("failed", 0.2, rng, 5))) > 0.9 for _ in range(500))
    assert kept / 500 < 0.1


@pytest.mark.parametrize(("uses", "successes"), [(3000, 1500.0), (1000, 0.0), (5000, 5000.0)])
def test_counters_of_thousands_of_uses_without_a_list_rank_without_error(uses: int, successes: float):
    merged = Memory(id="m-4", path="history/m-4.md", collection="history", type="learning", title="t", body="b",
                    uses=uses, success_count=successes)
    assert 0.0 < factor(merged) < 2.0


def test_one_wrong_failed_after_a_long_good_record_costs_less_than_half_of_what_two_cost():
    record = ["worked"] * 10
    one, two = factor(scored(*record, "failed")), factor(scored(*record, "failed", "failed"))
    assert 1.0 - one < (1.0 - two) / 2 and one > 0.9


def test_a_memory_that_kept_working_after_one_failure_is_not_held_back_by_it():
    assert factor(scored(*["worked"] * 5, "failed", *["worked"] * 4)) > 1.0
    assert MODEL.demotion_of(scored("worked", "worked", "partial", "worked", "failed", "worked", "worked", "partial",
                                    "worked", "worked")) < 0.01


def test_a_worked_between_two_failed_leaves_the_memory_between_neutral_and_two_failures():
    assert factor(scored("failed", "failed")) < factor(scored("failed", "worked", "failed")) < 1.0


def test_a_good_record_lifts_a_memory_by_a_tie_breaker_that_grows_with_its_tier():
    assert 1.0 < factor(scored("worked")) < factor(scored(*["worked"] * 3)) < factor(scored(*["worked"] * 20)) < 1.15


def test_counters_a_person_wrote_without_a_list_count_as_evidence():
    def counted(uses: int, successes: float) -> Memory:
        return Memory(id="m-3", path="history/m-3.md", collection="history", type="learning", title="t", body="b",
                      uses=uses, success_count=successes)
    assert factor(counted(10, 0.0)) < 0.8 < 1.0 < factor(counted(10, 10.0))


def test_one_wrong_failed_on_a_takeaways_first_showing_costs_it_less_than_a_tenth():
    recorded = Memory(id="m-2", path="working/m-2.md", collection="working", type="learning", title="t", body="b",
                      uses=1, success_count=0.0, outcomes=("worked", "failed"))
    assert factor(recorded) > 0.9


def test_a_takeaway_recorded_as_worked_enters_above_an_unscored_memory_but_only_by_a_tie_breaker():
    recorded = Memory(id="m-2", path="working/m-2.md", collection="working", type="learning", title="t", body="b",
                      outcomes=("worked",))
    assert 1.05 > factor(recorded) > factor(scored()) > 1.0


def test_the_learners_defaults_are_the_ones_memdir_toml_writes_out():
    assert QualityModel.from_settings(SearchSettings()) == QualityModel()


def test_memdir_toml_sets_how_likely_a_memory_is_taken_to_have_gone_wrong_since_its_last_use(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text("[search]\nquality_stale_hazard = 0.0\n")
    never_stale = QualityModel.from_settings(load_sections(tmp_path, INDEX_SECTIONS)["search"])
    stale = scored(*["worked"] * 6, "partial", "worked", "failed", "failed")
    assert never_stale(stale, NOW) >= 1.0 > factor(stale)


def test_memdir_toml_sets_how_far_a_bad_record_demotes(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text("[search]\nquality_demotion = 0.0\n")
    flat = QualityModel.from_settings(load_sections(tmp_path, INDEX_SECTIONS)["search"])
    assert flat(scored("failed", "failed"), NOW) == 1.0 > factor(scored("failed", "failed"))


@pytest.mark.parametrize(("line", "message"), [
    ("quality_stale_hazard = 1.0", r"memdir.toml:3 \[search\] quality_stale_hazard: 1.0 is not in \[0, 1\)"),
    ("quality_demotion = -0.1", r"memdir.toml:3 \[search\] quality_demotion: -0.1 is not in \[0, 1\]"),
    ("quality_prior = 0", r"memdir.toml:3 \[search\] quality_prior: 0.0 is not positive"),
    ("quality_worked_if_misleading = 1", r"memdir.toml:3 \[search\] quality_worked_if_misleading: 1.0 is not in \(0, 1\)"),
    ("quality_failed_if_helpful = 0.8", r"memdir.toml:3 \[search\] quality_failed_if_helpful: with "
                                        r"quality_worked_if_misleading = 0.2 a score would be no evidence or backwards"),
    ("quality_curve = 0", r"memdir.toml:3 \[search\] quality_curve: 0.0 is not positive"),
    ("quality_decy = 0.7", r"memdir.toml:3 \[search\] quality_decy: unknown key \(did you mean quality_decay\?\)"),
])
def test_a_learner_constant_that_cannot_be_used_names_the_file_line_and_key(tmp_path: Path, line: str, message: str):
    (tmp_path / "memdir.toml").write_text(f"[search]\nquality_gain = 0.25\n{line}\n")
    with pytest.raises(ConfigError, match=message):
        load_sections(tmp_path, INDEX_SECTIONS)


def test_an_unknown_section_names_its_line_and_the_section_it_likely_meant(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text("[search]\nquality_gain = 0.25\n\n[serch.recency]\nx = 1\n")
    with pytest.raises(ConfigError, match=r"memdir.toml:4: unknown section \[serch\] \(did you mean search\?\); known: "):
        load_sections(tmp_path, INDEX_SECTIONS)


def test_a_memdir_toml_written_before_a_setting_was_retired_still_loads(tmp_path: Path):
    # `memdir init` wrote every setting out; the shown relevance's old rule is no longer a setting (session 10).
    (tmp_path / "memdir.toml").write_text("[search]\nshown_gap_scale = 0.05\nshown_gap_floor = 0.2\nquality_gain = 0.25\n")
    assert load_sections(tmp_path, INDEX_SECTIONS)["search"].quality_gain == 0.25
