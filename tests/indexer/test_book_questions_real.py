"""With the real model, a question a book section answers, asked in other words, finds that book shown with that
section (bench/book_questions_set.py has 37 such questions; these are three of them, on the example vault)."""

from __future__ import annotations

import shutil

import pytest

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import EXAMPLE_VAULT

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def example_index(tmp_path_factory):
    from indexer.embed import make_embedder
    from indexer.index import Index
    from vault import Vault

    root = tmp_path_factory.mktemp("books") / "example"
    shutil.copytree(EXAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".memdir"))
    index = Index.open(Vault(root), make_embedder("all-MiniLM-L6-v2"))
    yield index
    index.close()


@pytest.mark.parametrize("question, book, section", [
    ("an upload has been in progress for an hour and never finishes", "m-d2e9f4a0", "Stuck imports"),
    ("how do I kill a runaway connection without restarting the server", "p-3a9973c4", "Cancel or terminate"),
    ("what rule guarantees that debits equal credits in every booking", "m-81a5c6e3", "Invariants"),
])
def test_a_book_question_in_other_words_finds_its_section_among_the_first_three(example_index, question, book,
                                                                                 section):
    hits = Searcher(example_index, SearchSettings()).search(SearchRequest(query=question, limit=3))
    shown = [(h.memory.id, h.heading.rsplit(" > ", 1)[-1]) for h in hits]
    assert (book, section) in shown, shown
    assert all(h.excerpt for h in hits if h.memory.collection == "books")
