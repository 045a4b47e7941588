"""The second hop (indexer/multihop.py): a memory reached through the one the first search found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from indexer.embed import make_embedder
from indexer.index import Index
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import EXAMPLE_VAULT, memory_text, write
from vault import Vault
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


@pytest.mark.model
def test_with_the_real_model_a_question_naming_one_person_reaches_the_memory_about_the_second_through_the_first(
        tmp_path: Path):
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".memdir"))
    write(root, "history/mentor.md", memory_text("mentor", "Mentoring", "Carlos mentored Dana through her first on-call rotation."))
    write(root, "history/dana.md", memory_text("dana", "Incident reviews", "Dana now leads the incident reviews every Thursday."))
    index = Index.open(Vault(root), make_embedder("all-MiniLM-L6-v2"))
    question = SearchRequest(query="What does the person Carlos mentored do now?", limit=10)
    plain = [h.memory.id for h in Searcher(index, SearchSettings()).search(question)]
    hopped = [h.memory.id for h in Searcher(index, SearchSettings(hop_seeds=1, hop_share=1.0)).search(question)]
    index.close()
    assert plain[0] == "mentor" and "dana" not in plain
    assert hopped[:2] == ["mentor", "dana"]
