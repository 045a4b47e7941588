"""The book-question set (bench/book_questions_set.py) keeps its own rules: every question names a section its
book has, and shares no content word with it, so a later edit cannot turn it into a set keyword search solves."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import book_questions  # noqa: E402


def test_the_set_keeps_its_rules():
    assert book_questions.rule_violations() == []


def test_the_checker_catches_a_shared_word_and_a_section_the_book_lacks(monkeypatch):
    asked = book_questions.book_questions_set.QUESTIONS
    leaky = [("how do I roll back a deploy", asked[0][1], ["Rolling back a deploy"], "short"),
             ("anything", asked[0][1], ["No such section"], "short"), *asked]
    monkeypatch.setattr(book_questions.book_questions_set, "QUESTIONS", leaky)
    problems = book_questions.rule_violations()
    assert any("deploy" in p and "Rolling back a deploy" in p for p in problems)
    assert any("no section 'No such section'" in p for p in problems)


def test_a_result_is_the_book_with_the_section_it_was_shown_with():
    assert book_questions.label("m-1", "Runbook > Incident response > Stuck imports") == "m-1#Stuck imports"
    assert book_questions.label("f001", "") == "f001"
