"""The relevance a result shows: its own match, lowered by how far it is behind the best hit.

A relevance alone says how strongly a memory matches, not whether it is the answer; how far behind the
best match it is says the rest. Thresholds keep reading the relevance itself, so what is listed does not
change, only the number it shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.ranking import shown_relevance
from indexer.search import SearchRequest
from indexer.settings import InvalidSetting, SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.test_search import NOW, concept_index, searcher


def test_a_hit_tied_with_the_best_shows_its_relevance_and_one_far_behind_the_floor_share_of_it():
    assert shown_relevance(0.8, 0.0, 0.05, 0.2) == pytest.approx(0.8)
    assert shown_relevance(0.8, 5.0, 0.05, 0.2) == pytest.approx(0.16)
    assert shown_relevance(0.8, 0.05, 0.05, 0.2) == pytest.approx(0.8 * (0.2 + 0.8 / 2.718281828), rel=1e-6)


def test_the_further_behind_the_lower_the_number_and_never_one_value_for_all_filler():
    shown = [shown_relevance(0.6, behind, 0.05, 0.2) for behind in (0.0, 0.02, 0.05, 0.1, 0.2)]
    assert shown == sorted(shown, reverse=True) and len({round(s, 2) for s in shown}) == len(shown)


def test_the_best_hit_shows_its_relevance_the_others_less_and_thresholds_read_the_relevance(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Postgres", "Postgres database backups run nightly"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Style", "SQL formatting, espresso and coffee breaks"))
    write(hashing_root, "patterns/c.md", memory_text("m-0000000c", "Fleet", "Sedan service and the sql export of the car log"))
    index = concept_index(hashing_root)
    hits = searcher(index, score_threshold=0.0).search(SearchRequest(query="how are database backups made", now=NOW))
    best, *rest = hits
    assert best.memory.id == "m-0000000a" and best.shown == pytest.approx(best.relevance)
    assert rest and all(h.shown < h.relevance for h in rest)
    # A threshold above what a hit shows but below its relevance still lists it.
    threshold = (rest[0].shown + rest[0].relevance) / 2
    listed = searcher(index, score_threshold=threshold).search(SearchRequest(query="how are database backups made", now=NOW))
    assert rest[0].memory.id in [h.memory.id for h in listed]
    index.close()


def test_a_lookup_and_a_timeline_show_no_gap_based_number(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Postgres", "Postgres database backups run nightly"))
    index = concept_index(hashing_root)
    s = searcher(index)
    assert s.search(SearchRequest(memory_id="m-0000000a"))[0].shown is None
    assert all(h.shown is None for h in s.search(SearchRequest(query="", days_back=30, now=NOW)))
    index.close()


@pytest.mark.parametrize("bad", [{"shown_gap_scale": 0.0}, {"shown_gap_floor": 1.5}])
def test_unusable_shown_relevance_settings_are_refused_by_name(bad):
    with pytest.raises(InvalidSetting) as refused:
        SearchSettings(**bad)
    assert refused.value.key in bad
