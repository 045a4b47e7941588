"""The second hop (indexer/multihop.py): a memory reached through the one the first search found."""

from __future__ import annotations

from pathlib import Path

from indexer.search import SearchRequest
from tests.conftest import memory_text, write
from tests.indexer.test_search import concept_index, searcher


def _two_step_vault(root: Path) -> None:
    # The question is about cars; the first memory links cars to coffee, the second speaks of coffee alone.
    write(root, "history/trip.md", memory_text("trip", "Road trip", "The car stopped at an espresso bar."))
    write(root, "history/beans.md", memory_text("beans", "Beans", "Espresso beans come from the roaster on Elm."))
    write(root, "history/db.md", memory_text("db", "Database", "Postgres runs the sql backups."))


def test_a_memory_sharing_nothing_with_the_question_is_reached_through_the_first_hit(tmp_path: Path):
    _two_step_vault(tmp_path)
    index = concept_index(tmp_path)
    hits = searcher(index, hop_seeds=1).search(SearchRequest(query="automobile"))
    found = {h.memory.id: h for h in hits}
    assert hits[0].memory.id == "trip"
    assert found["beans"].channel == "hop" and found["beans"].via == "trip"
    assert "db" not in found
    index.close()


def test_without_the_second_hop_that_memory_is_not_found(tmp_path: Path):
    _two_step_vault(tmp_path)
    index = concept_index(tmp_path)
    hits = searcher(index).search(SearchRequest(query="automobile"))
    assert [h.memory.id for h in hits] == ["trip"]
    index.close()


def test_the_second_hop_never_lifts_a_memory_above_the_hit_that_led_to_it(tmp_path: Path):
    _two_step_vault(tmp_path)
    index = concept_index(tmp_path)
    hits = searcher(index, hop_seeds=3, hop_share=0.5).search(SearchRequest(query="automobile"))
    order = [h.memory.id for h in hits]
    assert order.index("trip") < order.index("beans")
    index.close()


def test_a_keyword_search_takes_no_second_hop(tmp_path: Path):
    _two_step_vault(tmp_path)
    index = concept_index(tmp_path)
    hits = searcher(index, hop_seeds=3).search(SearchRequest(query="car", mode="keyword"))
    assert [h.memory.id for h in hits] == ["trip"]
    index.close()
