"""A fresh memory nobody has used yet is ranked on what it says, not under another memory's outcome lift (issue 26
items 1 and 5; bench/results/s9-served9.md). When one of two neighbouring results has a record and the other is unused
and written within `fresh_unscored_days`, they are compared without positive lifts; every other pair keeps the final
score's order. The rule is in `order_hits`, so the server's merge of its vaults orders by it too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from indexer.search import Hit, SearchRequest, Searcher, order_hits, returned
from indexer.settings import InvalidSetting, SearchSettings
from tests.indexer.helpers import example_with_fresh
from vault.model import Memory

BENCH = Path(__file__).resolve().parents[2] / "bench"
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)
DAYS = SearchSettings().fresh_unscored_days


def hit(memory_id: str, order: float, quality: float, uses: int = 0, collection: str = "patterns",
        stale_factor: float = 1.0, age_days: float = 0.2, recency: float = 0.0) -> Hit:
    memory = Memory(id=memory_id, path=f"{collection}/{memory_id}.md", collection=collection, type="learning",
                    title=memory_id, body="b", uses=uses, outcomes=("helpful",) * min(uses, 3))
    final = (order * quality + recency) * stale_factor
    return Hit(memory, 0.5, final, "vector", written=NOW - timedelta(days=age_days),
               explain={"order": order, "quality": quality, "recency": recency, "stale_factor": stale_factor,
                        "weighed": 0.5, "time_match": 0.0})


def ids(hits: list[Hit], days: float = DAYS) -> list[str]:
    return [h.memory.id for h in order_hits(hits, "relevance", NOW, days)]


def test_a_used_memorys_lift_does_not_put_it_over_a_new_one_that_matches_better():
    used, new = hit("m-used", order=0.600, quality=1.03, uses=6), hit("m-new", order=0.610, quality=1.003)
    assert used.final > new.final  # what decided before
    assert ids([used, new]) == ["m-new", "m-used"]
    assert ids([used, new], days=0) == ["m-used", "m-new"]  # the rule off


def test_a_new_notes_recency_bonus_does_not_put_it_over_a_used_memory_that_matches_better():
    # Coding dev, "how long do we cache slot search results": a working note from this morning (recency +0.047) sat
    # above the used answer whose match was clearly better. Compared on the match alone, neither prior counts.
    used = hit("m-used", order=0.999, quality=1.021, uses=2)
    new = hit("m-new", order=0.977, quality=1.003, recency=0.047)
    assert new.final > used.final  # what decided before
    assert ids([new, used]) == ["m-used", "m-new"]


def test_an_unused_memory_that_had_its_chances_does_not_get_past_a_used_one():
    # Eleven days unused (the example vault's outage review against the locking decision used three times).
    used, old = hit("m-used", order=0.600, quality=1.03, uses=3), hit("m-old", order=0.610, quality=1.003, age_days=11)
    assert ids([used, old]) == ["m-used", "m-old"]


def test_a_used_memory_that_matches_better_stays_ahead():
    used, new = hit("m-used", order=0.700, quality=1.03, uses=6), hit("m-new", order=0.610, quality=1.003)
    assert ids([new, used]) == ["m-used", "m-new"]


def test_between_two_used_memories_the_record_still_breaks_the_near_tie():
    proven, once = hit("m-proven", order=0.600, quality=1.05, uses=12), hit("m-once", order=0.610, quality=1.0, uses=1)
    assert ids([once, proven]) == ["m-proven", "m-once"]


def test_between_two_new_memories_the_final_score_decides_as_before():
    fact, note = hit("m-fact", order=0.600, quality=1.03, collection="memory_bank"), hit("m-note", order=0.610, quality=1.003)
    assert ids([note, fact]) == ["m-fact", "m-note"]


def test_a_bad_record_still_takes_a_used_memory_down():
    demoted, new = hit("m-misled", order=0.700, quality=0.6, uses=6), hit("m-new", order=0.610, quality=1.003)
    assert ids([demoted, new]) == ["m-new", "m-misled"]


def test_a_book_with_counters_in_its_file_is_not_a_record():
    # The quality model never scores a book (test_book_quality.py): its counters lift nothing to take off.
    book, note = hit("m-book", order=0.600, quality=1.03, uses=9, collection="books"), hit("m-note", order=0.610, quality=1.003)
    assert ids([note, book]) == ["m-book", "m-note"]


def test_a_negative_window_is_refused_by_name():
    with pytest.raises(InvalidSetting) as refused:
        SearchSettings(fresh_unscored_days=-1.0)
    assert refused.value.key == "fresh_unscored_days"


def test_other_orders_are_untouched():
    used, new = hit("m-used", order=0.600, quality=1.03, uses=6), hit("m-new", order=0.610, quality=1.003)
    assert [h.memory.id for h in order_hits([new, used], "score")] == [h.memory.id for h in sorted(
        [new, used], key=lambda h: (h.memory.score, h.final, h.memory.id), reverse=True)]


@pytest.mark.model
def test_a_fresh_note_asked_in_other_words_is_not_buried_by_a_used_note_it_is_nearer_than(tmp_path: Path):
    # The third served hold-out's n03, beside the coding set's c044 (one "worked" outcome): the fresh note is nearer the
    # question, and c044's record lift put it second.
    sys.path.insert(0, str(BENCH))
    from coding import NOW, build_vault
    from coding_set import MEMORIES
    from served_notes_set import FRESH, QUESTIONS

    key = "n03"
    question = next(text for text, wanted in QUESTIONS if key in wanted)
    fresh = [(f"m-{key.encode().hex()}"[:10], *next(m for m in FRESH if m[0] == key)[1:])]
    root = tmp_path / "example"
    index = example_with_fresh(root, fresh)
    try:
        build_vault(root, NOW, [m for m in MEMORIES if m[0] == "c044"])
        index.sync()
        found = [h.memory.id for h in Searcher(index, SearchSettings()).search(SearchRequest(query=question, limit=10))]
        assert found[0] == fresh[0][0], found
        # Without the rule (and without the recency lift a learning written five hours ago now gets as a fact would,
        # which alone also puts it first here), c044's record lift puts it first.
        # On the hand-made order, where the rule was measured (the learned order alone also puts it first).
        off = Searcher(index, SearchSettings(fresh_unscored_days=0.0, recency_weight=0.0, learned_order=False)).search(
            SearchRequest(query=question, limit=10))
        assert [h.memory.id for h in off][:2] == ["c044", fresh[0][0]]  # what c044's lift did
    finally:
        index.close()


@pytest.mark.model
def test_a_fresh_learning_is_not_put_under_a_fresh_fact_it_matches_better_for_the_facts_type(tmp_path: Path):
    # Served hold-out 4's h02: the answer (a learning) leads "Chart of accounts numbering" (a fact written the same
    # minute) on the vector channel; only facts had a recency rule, and that lift put the fact above it.
    sys.path.insert(0, str(BENCH))
    from served_holdout_set import FRESH, QUESTIONS

    question = next(text for text, wanted in QUESTIONS if "h02" in wanted)
    index = example_with_fresh(tmp_path / "example", [(f"m-{key}", *rest) for key, *rest in FRESH])
    try:
        def ranked(settings: SearchSettings) -> list[str]:
            return [h.memory.id for h in Searcher(index, settings).search(SearchRequest(query=question, limit=10))]

        found = ranked(SearchSettings())
        assert found.index("m-h02") < found.index("m-h23"), found
        typed = {kind: rule for kind, rule in SearchSettings().recency.items()
                 if kind not in ("decision", "learning", "preference", "constraint")}
        before = ranked(SearchSettings(recency=typed, learned_order=False))  # the hand-made order, as measured
        assert before.index("m-h02") == before.index("m-h23") + 1, before  # what the learning's missing rule did
    finally:
        index.close()


class _Side:
    """A vault as privacy.search sees it: its searcher's hits in the order Searcher.search gives them."""

    def __init__(self, hits: list[Hit]) -> None:
        self.hits, self.searcher = hits, self

    def search(self, request: SearchRequest, merged: bool = False) -> list[Hit]:
        return returned(self.hits, "relevance", NOW, DAYS, request.limit or 10, merged)


def test_the_servers_merge_of_two_vaults_gives_the_order_of_their_union():
    """Each vault swapped and cut to the limit, then merged and swapped again: a used hit the first swap moved below
    the cut was lost, and the merge undid the swap (review of session 9)."""
    from types import SimpleNamespace

    from mcp_server.service import privacy

    u1 = hit("m-used1", order=0.870, quality=1.05, uses=5)  # final 0.9135, match 0.870
    u2 = hit("m-used2", order=0.850, quality=1.05, uses=5)  # final 0.8925, match 0.850
    fresh = hit("m-fresh", order=0.880, quality=1.0)  # final 0.88, match 0.880: written today, unused
    old = hit("m-old", order=0.885, quality=1.0, age_days=40)  # the user vault's: unused for weeks
    sides = [_Side([u1, u2, fresh]), _Side([old])]
    app = SimpleNamespace(sides=lambda include_user: sides, config=SimpleNamespace(search=SearchSettings()))
    merged = privacy.search(app, SearchRequest(query="q", limit=2, now=NOW))  # type: ignore[arg-type]
    assert [h.memory.id for h in merged] == ids([u1, u2, fresh, old])[:2]


def test_a_fresh_memory_below_a_vaults_cut_by_final_score_still_climbs_in_the_merge():
    """Seven used memories a little behind it on match and above it by their lift: the fresh memory is eighth by final
    score, first in its vault's own order, and first in the merge with another vault's weak hit (review of session 9:
    a vault that gave only its top by final score cut it before the merge's order saw it)."""
    from types import SimpleNamespace

    from mcp_server.service import privacy

    used = [hit(f"m-used{n}", order=0.600 + n / 1000, quality=1.04, uses=4) for n in range(7)]
    fresh = hit("m-fresh", order=0.610, quality=1.0)
    weak = hit("m-weak", order=0.2, quality=1.0, age_days=40)
    alone = ids([*used, fresh])[:3]
    assert alone[0] == "m-fresh"
    sides = [_Side([*used, fresh]), _Side([weak])]
    app = SimpleNamespace(sides=lambda include_user: sides, config=SimpleNamespace(search=SearchSettings()))
    merged = privacy.search(app, SearchRequest(query="q", limit=3, now=NOW))  # type: ignore[arg-type]
    assert [h.memory.id for h in merged] == alone


class _Chain:
    """An index as the thread lift reads it: one captured session, each turn's `previous:` the one before."""

    def __init__(self, turns: list[Hit]) -> None:
        self.turns = [h.memory for h in turns]

    def _step(self, memory_id: str, by: int) -> Memory | None:
        at = next(i for i, m in enumerate(self.turns) if m.id == memory_id) + by
        return self.turns[at] if 0 <= at < len(self.turns) else None

    def previous_of(self, memory_id: str) -> Memory | None:
        return self._step(memory_id, -1)

    def next_of(self, memory_id: str) -> Memory | None:
        return self._step(memory_id, 1)


def test_a_fresh_turn_keeps_the_thread_lift_it_got_beside_the_best_hit():
    """The thread lift follows the question (the turn beside the one that matched rises with it): part of the match,
    not a prior. Left out of the comparison, a used note one point nearer took back the place the lift gave the fresh
    turn, which it would have kept against an unused note (review of session 9)."""
    from indexer import multihop

    best = hit("m-best", order=0.900, quality=1.0, age_days=40)  # the captured turn that matched, unused for weeks
    turn = hit("m-turn", order=0.580, quality=1.0)  # the next turn of its session, captured today
    used = hit("m-used", order=0.600, quality=1.03, uses=4)
    lifted = multihop.lift_thread(_Chain([best, turn]), [best, turn, used], 1, 0.15)  # type: ignore[arg-type]
    assert ids(lifted, days=0) == ["m-best", "m-turn", "m-used"]  # what the final score says
    assert ids(lifted) == ["m-best", "m-turn", "m-used"]


def test_a_used_turn_keeps_the_conversation_lift_against_a_fresh_note():
    used_turn = hit("m-turn", order=0.580, quality=1.03, uses=2)
    note = hit("m-note", order=0.600, quality=1.0)
    lifted = replace(used_turn, final=used_turn.final * 1.1, explain={**(used_turn.explain or {}), "conversation_factor": 1.1})
    assert ids([lifted, note], days=0) == ["m-turn", "m-note"]
    assert ids([lifted, note]) == ["m-turn", "m-note"]
