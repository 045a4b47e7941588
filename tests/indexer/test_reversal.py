"""Reversed statements are conflicts, never duplicates or merge suggestions."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.reversal import reverses
from tests.indexer.helpers import default_curator, empty_real_model_index, open_index
from tests.indexer.meaning_pairs import TUNE
from tests.indexer.pairs import PAIRS


@pytest.mark.parametrize("a, b, label", PAIRS)


def test_a_pair_is_read_as_a_reversal_exactly_when_it_contradicts(a: str, b: str, label: str):
    assert bool(reverses(a, b)) is (label == "contradiction"), reverses(a, b)


def test_a_flipped_preference_is_a_conflict_not_a_near_duplicate_and_is_never_grouped(hashing_root: Path):
    index = open_index(hashing_root)
    curator = default_curator(index)
    pip = curator.add("Dana prefers pip over uv for the billing service.", type="preference")
    uv = curator.add("Dana prefers uv over pip for the billing service.", type="preference")
    assert [s.id for s in uv.possible_conflicts] == [pip.memory.id] and uv.near_duplicates == ()
    again = curator.add("For the billing service, Dana prefers pip over uv.", type="preference")
    groups = [set(c.ids) for c in curator.suggest_merges(threshold=0.5)]
    assert not any({pip.memory.id, uv.memory.id} <= g for g in groups)
    assert not any({again.memory.id, uv.memory.id} <= g for g in groups)
    assert any({pip.memory.id, again.memory.id} <= g for g in groups)  # a true restatement is still grouped
    index.close()


@pytest.mark.model


def test_with_the_real_model_no_contradiction_is_suggested_as_a_merge_and_most_are_flagged(tmp_path: Path):
    index = empty_real_model_index(tmp_path)
    curator = default_curator(index)
    flagged = 0
    contradictions = [(a, b) for a, b, label in PAIRS if label == "contradiction"]
    for a, b in contradictions:
        first = curator.add(a, type="fact")
        second = curator.add(b, type="fact")
        assert first.memory.id not in [s.id for s in second.near_duplicates], (a, b)
        assert not any(len(c.ids) > 1 for c in curator.suggest_merges()), (a, b)
        flagged += first.memory.id in [s.id for s in second.possible_conflicts]
        curator.delete(first.memory.id)
        curator.delete(second.memory.id)
    assert flagged / len(contradictions) >= 0.8
    index.close()


@pytest.mark.parametrize("a, b, label", TUNE)
def test_a_tuning_pair_is_read_as_a_reversal_exactly_when_it_contradicts(a: str, b: str, label: str):
    # The held-out half of meaning_pairs.py is only measured (bench/meaning_pairs.py), never asserted.
    assert bool(reverses(a, b)) is (label == "contradiction"), reverses(a, b)


@pytest.mark.parametrize("a, b", [
    ("Prefer pytest rather than unittest for new tests.", "Prefer unittest over pytest for new tests."),
    ("Ship the API with rolling releases instead of blue-green releases.", "Ship the API with blue-green releases."),
    ("Use spaces, not tabs, in YAML files.", "Use tabs rather than spaces in YAML files."),
    ("Dana prefers Vim to Emacs.", "Dana prefers Emacs over Vim."),
])
def test_an_order_reversed_in_other_words_is_a_reversal_from_either_side(a: str, b: str):
    assert reverses(a, b) and reverses(b, a)


def test_a_merge_group_never_holds_a_reversed_pair_even_through_a_bridge(hashing_root: Path):
    index = open_index(hashing_root)
    curator = default_curator(index)
    uv = curator.add("Use uv over pip for Python projects.", type="preference").memory.id
    bridge = curator.add("Python projects: uv, pip.", type="preference").memory.id  # reverses neither
    pip = curator.add("Use pip over uv for Python projects.", type="preference").memory.id
    assert not reverses("Python projects: uv, pip.", "Use pip over uv for Python projects.")
    groups = [set(c.ids) for c in curator.suggest_merges(threshold=0.05)]
    assert any(bridge in g for g in groups), "the bridge is close enough to be grouped"
    assert not any({uv, pip} <= g for g in groups)
    index.close()


def test_the_review_queue_never_shows_a_pair_both_as_duplicates_and_as_a_contradiction(hashing_root: Path):
    from indexer.curator import Curator
    from indexer.review import Inbox
    from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

    index = open_index(hashing_root)
    # Thresholds low enough that the test embedder groups all three (the real model puts them above 0.8).
    curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings(merge_suggestion=0.05,
                                                                                   possible_conflict=0.05))
    for text in ("For Python projects, use uv over pip.", "For Python projects, use pip over uv.",
                 "For Python projects, always use uv rather than pip."):
        curator.add(text, type="preference")
    items = Inbox(curator).items()
    contradictions = [set(i.ids) for i in items if i.kind == "contradiction"]
    duplicates = [set(i.ids) for i in items if i.kind == "duplicates"]
    assert contradictions and duplicates
    assert not any(pair <= group for pair in contradictions for group in duplicates)
    index.close()


@pytest.mark.parametrize("a, b", [("The client is synchronous.", "The client is asynchronous."),
                                  ("The client is synchronous.", "The client is async."),
                                  ("The client is sync.", "The client is asynchronous.")])
def test_a_word_with_several_opposites_is_reversed_by_each_of_them(a: str, b: str):
    assert reverses(a, b)


def test_prefer_to_do_something_is_not_read_as_an_order():
    # "prefer X to Y" is an order; "prefers to deploy ... to avoid" is not, and no reason may call it one.
    assert not reverses("Dana prefers to deploy on Mondays.", "Dana deploys on Mondays.")
    assert "over" not in reverses("Dana prefers to deploy on Mondays to avoid pages.", "Dana prefers Mondays.")
    assert "over" in reverses("Dana prefers Mondays to Fridays for deploys.", "Dana prefers Fridays to Mondays for deploys.")
