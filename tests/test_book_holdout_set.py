"""The held-out book questions (bench/book_holdout_set.py) keep the book set's rules: every question names a
section the held-out handbook has and shares no content word with it, and the handbook reaches the vault only
when the held-out set is asked for."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import book_holdout_set  # noqa: E402
import book_questions  # noqa: E402


def test_the_held_out_set_keeps_its_rules():
    assert book_questions.rule_violations(holdout=True) == []


def test_the_held_out_checker_catches_a_shared_word(monkeypatch):
    leaky = [("who does code review", book_holdout_set.HANDBOOK, ["Code review"], "short"), *book_holdout_set.QUESTIONS]
    monkeypatch.setattr(book_holdout_set, "QUESTIONS", leaky)
    assert any("Code review" in p and "review" in p for p in book_questions.rule_violations(holdout=True))


def test_the_held_out_handbook_is_a_book_no_other_set_asks_about():
    sections = book_questions.book_sections(holdout=True)
    assert set(sections) == {book_holdout_set.HANDBOOK}
    assert len(sections[book_holdout_set.HANDBOOK]) >= 15
    assert book_holdout_set.HANDBOOK not in book_questions.book_sections()
