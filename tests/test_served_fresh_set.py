"""The served fresh-memory hold-out set (bench/served_fresh_set.py) keeps its rules, so a later edit cannot
quietly make it a set that keyword search solves or that asks one memory twice."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import served_fresh  # noqa: E402


def test_the_set_keeps_its_rules():
    assert served_fresh.rule_violations() == []


def test_the_checker_catches_a_question_that_shares_a_word_with_its_memory(monkeypatch):
    leaky = [("where is the local postgres", ("s01",)), *served_fresh.QUESTIONS[1:]]
    monkeypatch.setattr(served_fresh, "QUESTIONS", leaky)
    assert any("postgr" in problem and "s01" in problem for problem in served_fresh.rule_violations())


def test_the_checker_catches_a_memory_asked_twice(monkeypatch):
    monkeypatch.setattr(served_fresh, "QUESTIONS", [*served_fresh.QUESTIONS, ("what hosts the mail", ("s02",))])
    assert "s02 is asked for 2 times (once each)" in served_fresh.rule_violations()


def test_shown_relevance_plateau_counts_values_as_printed():
    assert served_fresh.plateau([0.551, 0.5512, 0.549, 0.30, 0.56, None]) == 3
    assert served_fresh.plateau([0.01, 0.012, 0.009, 0.30, 0.31], 0.10, 0.99) == 1


def test_the_third_set_keeps_its_rules():
    assert served_fresh.rule_violations("notes") == []


@pytest.mark.parametrize(("name", "module", "question", "key", "stem"), [
    ("notes", served_fresh.served_notes_set, "how do I roll back a release", "n02", "releas"),
    ("holdout", served_fresh.served_holdout_set, "when does the revaluation run", "h01", "revalu"),
    ("holdout5", served_fresh.served_holdout5_set, "which days does Sam work", "f01", "sam"),
    ("holdout6", served_fresh.served_holdout6_set, "where are settings read", "d01", "setting"),
    ("holdout7", served_fresh.served_holdout7_set, "which image do we redeploy", "h01", "redeploy"),
    ("holdout8", served_fresh.served_holdout8_set, "which canary takes the image", "k01", "canary"),
    ("tune9", served_fresh.served_tune9_set, "where is the beat schedule", "t12", "schedul"),
    ("holdout9", served_fresh.served_holdout9_set, "how are fees stored", "j01", "fee"),
])
def test_the_checker_catches_a_later_set_question_that_shares_a_word(monkeypatch, name, module, question, key, stem):
    leaky = [(question, (key,)), *[q for q in module.QUESTIONS if key not in q[1]]]
    monkeypatch.setattr(module, "QUESTIONS", leaky)
    assert any(stem in problem and key in problem for problem in served_fresh.rule_violations(name))


def test_the_checker_catches_a_memory_in_a_collection_the_server_refuses(monkeypatch):
    memories = [("n01", "notes", *served_fresh.served_notes_set.FRESH[0][2:]), *served_fresh.served_notes_set.FRESH[1:]]
    monkeypatch.setattr(served_fresh.served_notes_set, "FRESH", memories)
    assert any(problem.startswith("n01: no collection 'notes'") for problem in served_fresh.rule_violations("notes"))


HOLD_OUTS = [("holdout", served_fresh.served_holdout_set), ("holdout5", served_fresh.served_holdout5_set),
             ("holdout6", served_fresh.served_holdout6_set), ("holdout7", served_fresh.served_holdout7_set),
             ("holdout8", served_fresh.served_holdout8_set),
             ("holdout9", served_fresh.served_holdout9_set)]


@pytest.mark.parametrize(("name", "module"), HOLD_OUTS)
def test_the_later_hold_out_sets_keep_their_rules(name, module):
    assert served_fresh.rule_violations(name) == []


@pytest.mark.parametrize(("name", "module"), HOLD_OUTS)
def test_the_later_hold_out_sets_hold_at_least_forty_memories(monkeypatch, name, module):
    monkeypatch.setattr(module, "FRESH", module.FRESH[:39])
    monkeypatch.setattr(module, "QUESTIONS", module.QUESTIONS[:39])
    assert "only 39 fresh memories (at least 40)" in served_fresh.rule_violations(name)


def test_the_checker_catches_a_memory_of_a_type_the_server_refuses(monkeypatch):
    memories = [(*served_fresh.served_holdout5_set.FRESH[0][:2], "how-to", *served_fresh.served_holdout5_set.FRESH[0][3:]),
                *served_fresh.served_holdout5_set.FRESH[1:]]
    monkeypatch.setattr(served_fresh.served_holdout5_set, "FRESH", memories)
    assert any(problem.startswith("f01: no type 'how-to'") for problem in served_fresh.rule_violations("holdout5"))


def test_the_notes_tuning_set_keeps_its_rules():
    assert served_fresh.rule_violations("tune9") == []


def test_the_notes_tuning_set_holds_at_least_sixty_memories(monkeypatch):
    module = served_fresh.served_tune9_set
    monkeypatch.setattr(module, "FRESH", module.FRESH[:59])
    monkeypatch.setattr(module, "QUESTIONS", module.QUESTIONS[:59])
    assert "only 59 fresh memories (at least 60)" in served_fresh.rule_violations("tune9")
