"""The number a result shows is how likely it is the answer (issue 26 item 4), read off the development sets from the
relevance that ranked it, how far its order score is ahead of (or behind) the best other hit's, and its place. It is
never more than that relevance, and filler far down the list keeps a value of its own. Thresholds keep reading the
relevance itself, so what is listed or injected does not change, only the number it shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.ranking import never_rising, shown_relevance
from indexer.search import SearchRequest, shown_inputs
from tests.conftest import memory_text, write
from tests.indexer.test_search import NOW, concept_index, searcher


def test_a_hit_far_ahead_of_the_runner_up_shows_more_than_one_tied_with_it_and_one_behind_less():
    ahead, tied, behind = shown_relevance(0.9, 0.3, 0), shown_relevance(0.9, 0.0, 0), shown_relevance(0.9, -0.1, 1)
    assert ahead > tied > behind


def test_a_hit_never_shows_more_than_the_relevance_that_ranked_it():
    assert shown_relevance(0.3, 1.0, 0) <= 0.3
    assert shown_relevance(0.0, 1.0, 0) == 0.0


def test_filler_at_nine_places_shows_nine_values_as_printed():
    shown = [shown_relevance(0.5, -0.3 - 0.02 * place, place) for place in range(1, 10)]
    assert shown == sorted(shown, reverse=True) and len({round(s, 2) for s in shown}) == len(shown)


def test_the_best_hit_shows_no_more_than_its_relevance_and_thresholds_read_the_relevance(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Postgres", "Postgres database backups run nightly"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Style", "SQL formatting, espresso and coffee breaks"))
    write(hashing_root, "patterns/c.md", memory_text("m-0000000c", "Fleet", "Sedan service and the sql export of the car log"))
    index = concept_index(hashing_root)
    hits = searcher(index, score_threshold=0.0).search(SearchRequest(query="how are database backups made", now=NOW))
    best, *rest = hits
    assert best.memory.id == "m-0000000a" and best.shown <= best.relevance
    assert rest and all(h.shown < best.shown for h in rest)
    # A threshold above what a hit shows but below its relevance still lists it.
    assert rest[0].shown < rest[0].relevance
    threshold = (rest[0].shown + rest[0].relevance) / 2
    listed = searcher(index, score_threshold=threshold).search(SearchRequest(query="how are database backups made", now=NOW))
    assert rest[0].memory.id in [h.memory.id for h in listed]
    index.close()


def test_a_lookup_and_a_timeline_show_no_number(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Postgres", "Postgres database backups run nightly"))
    index = concept_index(hashing_root)
    s = searcher(index)
    assert s.search(SearchRequest(memory_id="m-0000000a"))[0].shown is None
    assert all(h.shown is None for h in s.search(SearchRequest(query="", days_back=30, now=NOW)))
    index.close()


def test_a_number_that_would_rise_down_the_list_is_shown_one_printed_step_under_the_one_above_it():
    assert never_rising([0.6, 0.1, 0.3, 0.05]) == pytest.approx([0.6, 0.1, 0.09, 0.05])
    assert never_rising([0.2, 0.4, 0.3]) == pytest.approx([0.2, 0.19, 0.18])
    assert never_rising([0.015, 0.03]) == pytest.approx([0.015, 0.0075])  # near 0: half of the one above
    assert never_rising([0.5, 0.4, 0.4, 0.1]) == [0.5, 0.4, 0.4, 0.1]
    assert never_rising([]) == []


MISLED = "uses: 4\nsuccess_count: 0.0\noutcomes: [failed, failed, failed, failed]\n"


def test_a_best_match_its_failures_put_second_shows_no_more_than_the_hit_above_it_when_listed_by_relevance(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Postgres backups",
                                                     "Postgres database backups run nightly", extra=MISLED))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Backups", "Database backups are kept a week"))
    write(hashing_root, "patterns/c.md", memory_text("m-0000000c", "Fleet", "Sedan service and the car log"))
    index = concept_index(hashing_root)
    s = searcher(index, score_threshold=0.0)
    hits = s.search(SearchRequest(query="postgres database backups nightly", now=NOW))
    assert [h.memory.id for h in hits][:2] == ["m-0000000b", "m-0000000a"]  # its failures put the best match second
    shown = [h.shown for h in hits]
    assert shown == sorted(shown, reverse=True)
    by_time = s.search(SearchRequest(query="postgres database backups nightly", now=NOW, sort_by="recency"))
    # By time the list's order is not the match's: each hit shows its own number.
    assert [h.shown for h in by_time] == [shown_relevance(*read) for read in shown_inputs(by_time)]
    index.close()
