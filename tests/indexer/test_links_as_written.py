"""A short memory's vectors read its [[links]] as written; its keyword document reads them as words.

Rendered as words, a link to another memory put that memory's topic into the linking note's vector: served question
s36 ("why did faking the date make coroutine specs stall") lost a 0.004 tie to "Flaky test root cause", whose link
to timezone-bug-statement-dates read as "timezone bug statement dates" (bench/results/s11-book11.md)."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pytest

from indexer.chunking import SENTENCE, WHOLE, chunks_for
from indexer.generations import Layout
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.indexer.helpers import example_with_fresh, open_index
from vault.model import Memory

BODY = ("The query ordered by date only, so ties came back in any order. ^root-cause\n"
        "The other date-related trap is [[timezone-bug-statement-dates]], fixed in [[src/ledger/queries.py|the query]].")


def note(body: str = BODY, collection: str = "patterns") -> Memory:
    return Memory(id="m-0000000b", path=f"{collection}/m-0000000b.md", collection=collection, type="learning",
                  title="Flaky test root cause", body=body, frontmatter=MappingProxyType({}))


def test_a_short_notes_whole_and_sentence_units_read_its_links_as_written_and_drop_block_ids():
    [chunk] = chunks_for(note())
    whole = [u.text for u in chunk.units if u.role == WHOLE]
    sentences = [u.text for u in chunk.units if u.role == SENTENCE]
    assert whole == ["Flaky test root cause\nThe query ordered by date only, so ties came back in any order.\n"
                     "The other date-related trap is [[timezone-bug-statement-dates]], fixed in "
                     "[[src/ledger/queries.py|the query]]."]
    assert sentences == ["The query ordered by date only, so ties came back in any order.",
                         "The other date-related trap is [[timezone-bug-statement-dates]], fixed in "
                         "[[src/ledger/queries.py|the query]]."]


def test_the_keyword_document_still_reads_a_link_as_the_words_a_reader_sees():
    [chunk] = chunks_for(note())
    assert "timezone bug statement dates" in chunk.text and "the query" in chunk.text
    assert "[[" not in chunk.text and "^root-cause" not in chunk.text


def test_a_note_without_links_embeds_the_text_its_keyword_document_reads():
    [chunk] = chunks_for(note("Ties came back in any order.\nAdd the id as a tiebreaker."))
    assert chunk.units[0].text == f"Flaky test root cause\n{chunk.text}"


def test_book_sections_still_read_links_as_words():
    sections = chunks_for(note("# Runbook\n\n## Locking\n\nHow we got here: [[job-locking-v1-redis-setnx]].",
                               collection="books"))
    assert [u.text for c in sections for u in c.units] == ["Runbook > Locking\nHow we got here: job locking v1 redis setnx."]


def test_an_index_built_when_links_were_embedded_as_words_is_rebuilt_on_open(hashing_example: Path):
    """Its vectors were of the texts before: reused, they would differ from a rebuild's (the schema says so)."""
    open_index(hashing_example).close()
    layout = Layout(hashing_example)
    before = layout.current()
    assert before is not None
    meta = json.loads((before / "meta.json").read_text())
    (before / "meta.json").write_text(json.dumps({**meta, "schema_version": 10}))  # as the schema before this change
    index = open_index(hashing_example)
    try:
        assert layout.current() != before
        entry = index.entry("patterns/flaky-test-unordered-ledger-query.md")
        assert entry is not None and entry.embed_hash
    finally:
        index.close()


# -- the real model ---------------------------------------------------------------------------------

S36 = ("s36", "patterns", "learning", "freezegun hung the async tests",
       "freezegun froze the event loop's clock too and hung async tests forever; switched to `time-machine`, which "
       "leaves the monotonic clock alone.")


@pytest.mark.model
def test_a_fresh_answer_is_not_outranked_by_a_note_whose_link_names_its_topic(tmp_path: Path):
    index = example_with_fresh(tmp_path / "example", [S36])
    try:
        hits = Searcher(index, SearchSettings()).search(
            SearchRequest(query="why did faking the date make coroutine specs stall", limit=10))
        found = [h.memory.id if h.memory.id == "s36" else h.memory.path for h in hits]
        assert "s36" in found[:3], found
        assert found.index("s36") < found.index("patterns/flaky-test-unordered-ledger-query.md"), found
    finally:
        index.close()
