"""The fresh-paraphrase hold-out set (bench/fresh_paraphrase_set.py) keeps its own rules, so a later edit
cannot quietly turn it into a set that keyword search solves."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import fresh_paraphrase  # noqa: E402


def test_the_set_keeps_its_rules():
    assert fresh_paraphrase.rule_violations() == []


def test_the_checker_catches_a_question_that_shares_a_word_with_its_memory(monkeypatch):
    leaky = [("where do feature flags live", ["f001"], "short", False), *fresh_paraphrase.QUESTIONS]
    monkeypatch.setattr(fresh_paraphrase, "QUESTIONS", leaky)
    assert any("flag" in problem and "f001" in problem for problem in fresh_paraphrase.rule_violations())


def test_stemming_counts_inflections_as_one_word():
    assert fresh_paraphrase.content_words("deploys deploying deployed") == {"deploy"}
