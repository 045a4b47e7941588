from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import write
from vault import Change, ValidationError, Vault, parse
from vault.scoring import initial_counters, initial_score, outcome_updates, recency_weight, wilson_lower_bound
from vault.settings import ScoringSettings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
S = ScoringSettings()


def memory(collection="history", score=0.5, uses=0, success=0.0, outcomes="", age_days=0.0):
    created = (NOW - timedelta(days=age_days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = (f"---\nid: m-0000abcd\ncollection: {collection}\ntitle: t\ncreated_at: {created}\nscore: {score}\n"
            f"uses: {uses}\nsuccess_count: {success}\noutcomes: [{outcomes}]\n---\nbody\n")
    return parse(text.encode(), f"{collection}/t.md")


@pytest.mark.parametrize("outcome, delta, credit", [("worked", 0.20, 1.0), ("partial", 0.05, 0.5), ("failed", -0.30, 0.0)])
def test_each_outcome_moves_score_uses_and_successes(outcome, delta, credit):
    updates = outcome_updates(memory(), outcome, NOW, S)
    assert updates["score"] == pytest.approx(0.5 + delta)
    assert updates["uses"] == 1 and updates["success_count"] == credit
    assert updates["outcomes"] == [outcome] and updates["last_outcome"] == outcome and updates["last_used_at"] == NOW


def test_unknown_means_not_used_and_changes_nothing():
    assert outcome_updates(memory(uses=3, success=2.0), "unknown", NOW, S) == {}


def test_old_memories_move_less_by_one_over_one_plus_age_over_thirty_days():
    young = outcome_updates(memory(age_days=0), "worked", NOW, S)["score"]
    month = outcome_updates(memory(age_days=30), "worked", NOW, S)["score"]
    assert young == pytest.approx(0.70) and month == pytest.approx(0.60)
    assert recency_weight(memory(age_days=90), NOW, S) == pytest.approx(0.25)


def test_the_score_is_clamped_to_zero_and_one():
    assert outcome_updates(memory(score=0.95), "worked", NOW, S)["score"] == 1.0
    assert outcome_updates(memory(score=0.1), "failed", NOW, S)["score"] == 0.0


def test_the_outcome_history_is_bounded_most_recent_last():
    long = memory(uses=25, success=25.0, outcomes=", ".join(["worked"] * 20))
    assert outcome_updates(long, "failed", NOW, S, history=20)["outcomes"] == ["worked"] * 19 + ["failed"]


def test_memory_bank_counts_uses_but_keeps_its_score_and_books_are_never_scored():
    bank = outcome_updates(memory(collection="memory_bank", score=0.5), "failed", NOW, S)
    assert "score" not in bank and bank["uses"] == 1
    assert outcome_updates(memory(collection="books"), "worked", NOW, S) == {}


def test_record_response_initial_scores():
    assert [initial_score(o, S) for o in ("worked", "partial", "failed", None)] == [0.7, 0.55, 0.2, 0.5]
    with pytest.raises(ValidationError):
        initial_score("great", S)


def test_a_takeaway_recorded_with_an_outcome_starts_with_it_as_evidence_but_no_use():
    assert initial_counters("worked", S) == {"score": 0.7, "outcomes": ["worked"]}
    assert initial_counters("failed", S) == {"score": 0.2, "outcomes": ["failed"]}
    assert initial_counters(None, S) == initial_counters("unknown", S) == {"score": 0.5}


def test_wilson_lower_bound_is_the_displayed_confidence():
    assert wilson_lower_bound(0, 0) == 0.5
    assert wilson_lower_bound(8, 10) == pytest.approx(0.4902, abs=1e-3)
    assert wilson_lower_bound(80, 100) > wilson_lower_bound(8, 10)


def test_a_score_rewrite_changes_only_counter_lines_and_keeps_a_concurrent_body_edit(vault: Vault):
    path = write(vault.root, "history/t.md", "---\nid: m-0000abcd\ncollection: history\ntitle: t\nscore: 0.5\n"
                                             "uses: 0\n---\noriginal body\n")
    base = vault.load("history/t.md")
    path.write_text(path.read_text().replace("original body", "a human rewrote the body"))
    vault.edit(base, Change(derive=lambda m: outcome_updates(m, "worked", NOW, S)))
    text = path.read_text()
    assert "a human rewrote the body" in text and "uses: 1" in text and "score: 0.7" in text
