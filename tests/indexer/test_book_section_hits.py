"""A search hit on a book names a section that has text: a heading with none is no section (issue 26, session 5)."""

from __future__ import annotations

from pathlib import Path

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index

SCHEMA = ("# Schema\n\nThe ledger, as of step 3.\n\n## Tables\n\n### accounts\n\nOne row per account: code, name and kind.\n\n"
          "### postings\n\nOne row per debit or credit of an entry.\n")


def test_a_book_is_shown_with_a_section_that_has_text_never_with_a_bare_heading(hashing_root: Path):
    write(hashing_root, "books/schema.md", memory_text("m-0000000b", "Schema", SCHEMA, collection="books", type="fact"))
    index = open_index(hashing_root)
    try:
        [hit] = Searcher(index, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="tables", limit=1))
        assert hit.memory.id == "m-0000000b"
        assert hit.heading.startswith("Schema > Tables > ") and hit.excerpt
    finally:
        index.close()
