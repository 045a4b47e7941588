"""Reversed statements are conflicts, never duplicates or merge suggestions."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.reversal import reverses
from tests.indexer.helpers import default_curator, empty_real_model_index, open_index
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
