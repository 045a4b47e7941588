"""A question in other words gets no order from the keyword channel (issue 26 item 1, session 8): when no keyword hit
covers more than `keyword_question_low` (0.5) of the question's idf weight, the words it shares with some notes are the
user's own ("git", "change"), and BM25 standing them out among candidates that share nothing put them above the answer
the vector channel had. The relevance shown is absolute and does not move; code-like terms keep their weight; a
question whose words a note covers keeps the keyword channel's order. Measured in bench/results/search.md, issue 26
session 8."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from indexer.search import SearchRequest, Searcher
from indexer.settings import InvalidSetting, SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import example_with_fresh
from tests.indexer.test_search import NOW, concept_index, searcher

OFF = SearchSettings(keyword_question_low=0.0)  # before: every keyword hit weighed by its own coverage
# ... and before session 10's section_standout, which alone puts n21 3rd (tests/indexer/test_section_standout.py)
BEFORE = SearchSettings(keyword_question_low=0.0, section_standout_share=0.0)
BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
from served_notes_set import FRESH as NOTES, QUESTIONS  # noqa: E402  the third served hold-out (bench/served_notes_set.py)

FRESH = [(f"m-{key.encode().hex():0<8}"[:10], *rest) for key, *rest in NOTES]  # written hours ago into the example vault
CASES = [(text, f"m-{wanted[0].encode().hex():0<8}"[:10]) for text, wanted in QUESTIONS if wanted[0] in ("n10", "n21")]


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    index = example_with_fresh(tmp_path_factory.mktemp("keyword-question") / "example", FRESH)
    yield index
    index.close()


@pytest.mark.model
@pytest.mark.parametrize(("asked", "answer"), CASES)
def test_notes_sharing_only_the_users_own_words_do_not_outrank_the_answer_the_vectors_found(example, asked, answer):
    # "git refused my change description": three notes that say "git" or "change"; "how can I query live customer
    # data safely": notes and book sections that say "live", "data", "query".
    hits = Searcher(example, SearchSettings()).search(SearchRequest(query=asked, limit=10))
    found = [h.memory.id for h in hits]
    assert answer in found[:3], found
    was = Searcher(example, BEFORE).search(SearchRequest(query=asked, limit=10))
    assert [h.memory.id for h in was].index(answer) >= 3  # what it was
    before = Searcher(example, OFF).search(SearchRequest(query=asked, limit=10))
    # The relevance is what both channels found, as before: only the order changed.
    relevance = {h.memory.id: h.relevance for h in before}
    assert {h.memory.id: h.relevance for h in hits if h.memory.id in relevance} == pytest.approx(
        {i: relevance[i] for i in found if i in relevance})


def _filler(root: Path) -> None:
    for n, text in enumerate(["Grind finer for espresso", "Ship the release on Friday", "Postgres vacuum settings",
                              "Deploy with the script", "Coffee beans from the market"]):
        write(root, f"patterns/f{n}.md", memory_text(f"m-f000000{n}", "Note", text))


def test_a_question_a_note_covers_keeps_the_keyword_channels_order(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Zebra crossing", "Zebra crossing paint schedule"))
    _filler(hashing_root)
    index = concept_index(hashing_root)
    try:
        hits = {h.memory.id: h for h in searcher(index).search(SearchRequest(query="zebra crossing paint", now=NOW))}
        assert hits["m-0000000a"].explain["keyword_mix"] > 0.0
    finally:
        index.close()


def test_a_code_like_term_keeps_its_weight_when_the_rest_of_the_question_is_in_other_words(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Billing", "The importer raised ERR_4711 at night"))
    _filler(hashing_root)
    index = concept_index(hashing_root)
    question = SearchRequest(query="why does ERR_4711 show up when customers upload their monthly spreadsheet", now=NOW)
    try:
        hits = {h.memory.id: h for h in searcher(index, score_threshold=0.0).search(question)}
        assert hits["m-0000000a"].explain["keyword_mix"] > 0.0
    finally:
        index.close()


def test_a_share_outside_zero_to_one_is_refused_by_name():
    with pytest.raises(InvalidSetting) as refused:
        SearchSettings(keyword_question_low=1.0)
    assert refused.value.key == "keyword_question_low"
