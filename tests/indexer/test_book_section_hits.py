"""How a book's sections compete with each other and with notes (issue 26, session 5): a hit names a section that
has text; a section's vector reads its own heading path, not the book's title; a book whose best section barely
leads the next scores below one whose best section stands out."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.ranking import section_score
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from vault.config import InvalidSetting

SCHEMA = ("# Schema\n\nThe ledger, as of step 3.\n\n## Tables\n\n### accounts\n\nOne row per account: code, name and kind.\n\n"
          "### postings\n\nOne row per debit or credit of an entry.\n")


def search(root: Path, query: str, limit: int = 2) -> list:
    index = open_index(root)
    try:
        return Searcher(index, SearchSettings(embedder="hashing-256")).search(SearchRequest(query=query, limit=limit))
    finally:
        index.close()


def test_a_book_is_shown_with_a_section_that_has_text_never_with_a_bare_heading(hashing_root: Path):
    write(hashing_root, "books/schema.md", memory_text("m-0000000b", "Schema", SCHEMA, collection="books", type="fact"))
    [hit] = search(hashing_root, "tables", limit=1)
    assert hit.memory.id == "m-0000000b"
    assert hit.heading.startswith("Schema > Tables > ") and hit.excerpt


def test_a_book_whose_best_section_stands_out_comes_before_one_whose_sections_are_all_alike(hashing_root: Path):
    alike = "# Guide\n\n## One\n\nrotate the signing keys\n\n## Two\n\nrotate the signing keys\n"
    standout = "# Guide\n\n## One\n\nrotate the signing keys\n\n## Two\n\nwater the office plants\n"
    # Equal best sections and equal everything else: without the rule the tie goes to the larger id, "alike".
    write(hashing_root, "books/alike.md", memory_text("m-000000bb", "Guide", alike, collection="books", type="fact"))
    write(hashing_root, "books/standout.md", memory_text("m-000000aa", "Guide", standout, collection="books", type="fact"))
    assert [h.memory.id for h in search(hashing_root, "rotate the signing keys")] == ["m-000000aa", "m-000000bb"]


def test_the_best_section_loses_half_of_what_it_lacks_of_a_clear_lead_and_one_chunk_loses_nothing():
    assert section_score(0.40, 0.40, 0.05, 0.5) == pytest.approx(0.375)
    assert section_score(0.40, 0.37, 0.05, 0.5) == pytest.approx(0.39)
    assert section_score(0.40, 0.30, 0.05, 0.5) == 0.40
    assert section_score(0.40, None, 0.05, 0.5) == 0.40
    assert section_score(0.40, 0.40, 0.05, 0.0) == 0.40


@pytest.mark.parametrize("bad", [{"section_lead_share": 1.5}, {"section_lead_share": -0.1}, {"section_lead": -0.01}])
def test_unusable_section_settings_are_refused_by_name(bad):
    with pytest.raises(InvalidSetting) as refused:
        SearchSettings(**bad)
    assert refused.value.key in bad


def test_a_hits_excerpt_is_cut_with_the_index_lock_let_go_so_other_searches_do_not_wait_for_it(
        hashing_root: Path, monkeypatch: pytest.MonkeyPatch):
    from indexer import search as search_module

    write(hashing_root, "books/schema.md", memory_text("m-0000000b", "Schema", SCHEMA, collection="books", type="fact"))
    index = open_index(hashing_root)
    cut_under_lock: list[bool] = []
    excerpt = search_module._excerpt
    monkeypatch.setattr(search_module, "_excerpt", lambda memory, heading: (
        cut_under_lock.append(index.lock._is_owned()), excerpt(memory, heading))[1])
    try:
        [hit] = Searcher(index, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="tables", limit=1))
    finally:
        index.close()
    assert hit.heading.startswith("Schema > Tables > ") and hit.excerpt
    assert cut_under_lock == [False]
