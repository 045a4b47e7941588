"""A book is never scored (reference documents take no outcomes), so on the record alone it must stand where a
memory nobody has scored yet stands: at 1.0 it lost every near tie to a note written that morning (issue 26,
bench/results/search.md session 8)."""

from __future__ import annotations

from datetime import datetime, timezone

from indexer.learner import QualityModel
from vault.model import Memory

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def memory(collection: str) -> Memory:
    return Memory(id="m-1", path=f"{collection}/m-1.md", collection=collection, type="fact", title="t", body="b")


def test_a_book_is_lifted_as_a_memory_nobody_has_scored():
    model = QualityModel()
    assert model(memory("books"), NOW) == model(memory("history"), NOW) > 1.0


def test_a_book_keeps_that_factor_whatever_counters_its_file_claims():
    claimed = Memory(id="m-1", path="books/m-1.md", collection="books", type="fact", title="t", body="b",
                     uses=9, success_count=0.0, outcomes=("failed",) * 9)
    model = QualityModel()
    assert model(claimed, NOW) == model(memory("history"), NOW)
