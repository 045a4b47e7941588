"""The second stage measured in bench/second_stage.py re-orders only what the first stage found, and never
moves the hit that holds the query's exact token (issue 26's must-keep), whatever the model prefers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import second_stage  # noqa: E402

TEXTS = {"a": "deploy notes", "b": "ERR_4711 means the ledger lock timed out", "c": "on-call rota"}
QUERY = np.array([1.0, 0.0])
# The model likes c most, a next, b (the exact hit) least.
VECTORS = {"a": np.array([0.8, 0.6]), "b": np.array([0.0, 1.0]), "c": np.array([1.0, 0.0])}
FIRST = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
SCORES = np.array([float(VECTORS[i] @ QUERY) for i, _ in FIRST])  # the model's score of each candidate, in order


def test_the_model_reorders_the_candidates_when_it_has_the_whole_say():
    assert second_stage.second_stage(FIRST, "ledger timeouts", TEXTS, SCORES, 1.0) == ["c", "a", "b"]


def test_without_a_share_the_first_stage_order_stays():
    assert second_stage.second_stage(FIRST, "ledger timeouts", TEXTS, SCORES, 0.0) == ["a", "b", "c"]


def test_the_hit_holding_the_exact_token_keeps_its_place():
    ranked = second_stage.second_stage(FIRST, "what is ERR_4711", TEXTS, SCORES, 1.0)
    assert ranked.index("b") == 1
    assert set(ranked) == {"a", "b", "c"}


def test_nothing_found_stays_nothing():
    assert second_stage.second_stage([], "anything", TEXTS, np.zeros(0), 0.5) == []
