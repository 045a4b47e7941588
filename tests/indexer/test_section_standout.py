"""A book on the question's topic does not put its luckiest section over the note that answers (issue 26, session 10).

A book is many chances at one result. Its best section is scored down by what it lacks of standing
`section_standout` standard deviations above the mean of all its sections (`section_standout_share` of it; faded out
for a long question as it is read whole), and a section of a long document lends none of its keyword coverage to
notes that share a word with the question. Measured in bench/results/s10-served10.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from indexer.ranking import standout_shortfall
from indexer.search import SearchRequest, Searcher
from indexer.settings import InvalidSetting, SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import example_with_fresh
from tests.indexer.test_search import NOW, concept_index, searcher

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import served_fresh_set  # noqa: E402  bench/served_fresh_set.py: the served example set
import served_notes_set  # noqa: E402  bench/served_notes_set.py: the third served hold-out

OFF = SearchSettings(section_standout_share=0.0)
KEYS = ("s01", "s24", "n21")


def key(name: str) -> str:
    return f"m-{name.encode().hex():0<8}"[:10]


NOTES = [(key(k), *rest) for k, *rest in served_fresh_set.FRESH + served_notes_set.FRESH if k in KEYS]
ASKED = {w[0]: text for text, w in served_fresh_set.QUESTIONS + served_notes_set.QUESTIONS if w[0] in KEYS}


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    index = example_with_fresh(tmp_path_factory.mktemp("section-standout") / "example", NOTES)
    yield index
    index.close()


def ranked(index, asked: str, settings: SearchSettings = SearchSettings()) -> list[str]:
    return [h.memory.id for h in Searcher(index, settings).search(SearchRequest(query=asked, limit=10))]


@pytest.mark.model
@pytest.mark.parametrize("wanted", ["s24", "n21"])
def test_a_note_that_answers_comes_before_a_book_whose_sections_are_all_near_the_question(example, wanted):
    # "did switching processor architecture for the pipeline machines pay off": the runbook's two best sections at
    # 0.255 and 0.253; "how can I query live customer data safely": the Postgres cheatsheet's best section 1.3
    # standard deviations above its six others. Plain cosine has both answers 2nd or 1st.
    assert ranked(example, ASKED[wanted])[:2].count(key(wanted)) == 1
    assert ranked(example, ASKED[wanted], OFF).index(key(wanted)) == 2  # what it was


@pytest.mark.model
def test_a_runbook_section_covering_the_questions_words_lends_nothing_to_notes_that_share_one(example):
    # "how do I get a database going on my own machine": the runbook's "Database migrations" section covers
    # "database", "get" and "machine"; lent to every note saying "database" or "get", it put five of them over
    # the answer, which was not listed at all. The runbook keeps its own keyword weight; notes below the answer that
    # cover two of the words keep theirs.
    hits = Searcher(example, SearchSettings()).search(SearchRequest(query=ASKED["s01"], limit=10))
    found = [h.memory.id for h in hits]
    assert key("s01") in found[:5], found
    assert hits[0].memory.collection == "books" and hits[0].explain["keyword_mix"] > 0.0
    above = hits[:found.index(key("s01"))]
    assert all(h.explain["keyword_mix"] <= 0.0 for h in above if h.memory.collection != "books")


def _filler(root: Path) -> None:
    for n, text in enumerate(["Grind finer for espresso", "Ship the release on Friday", "Coffee beans from the market",
                              "Deploy with the script", "Lunch menu for the offsite"]):
        write(root, f"patterns/f{n}.md", memory_text(f"m-f000000{n}", "Note", text))


GUIDE = ("# Guide\n\n## Setup\n\nzebra crossing paint schedule for the yard\n\n## Other\n\nwater the office plants\n\n"
         "## More\n\norder printer toner\n")


@pytest.mark.parametrize(("where", "lends"), [("books/guide.md", False), ("patterns/guide.md", True)])
def test_only_a_memory_of_one_section_lends_its_coverage_to_a_note_sharing_one_word(hashing_root: Path, where, lends):
    collection = where.split("/")[0]
    body = GUIDE if lends is False else "zebra crossing paint schedule for the yard"
    write(hashing_root, where, memory_text("m-0000000a", "Guide", body, collection=collection))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Paint", "We bought paint for the fence"))
    _filler(hashing_root)
    index = concept_index(hashing_root)
    try:
        hits = {h.memory.id: h for h in searcher(index, score_threshold=0.0).search(
            SearchRequest(query="zebra crossing paint schedule", now=NOW))}
        assert hits["m-0000000a"].explain["keyword_mix"] > 0.0  # the section itself keeps its weight
        assert (hits["m-0000000b"].explain["keyword_mix"] > 0.0) is lends
    finally:
        index.close()


def test_a_best_section_short_of_standing_out_loses_the_shortfall_and_one_that_stands_out_nothing():
    assert standout_shortfall([0.30, 0.29, 0.28, 0.27], 2.0) == pytest.approx(2.0 * 0.0111803 - 0.015, abs=1e-6)
    assert standout_shortfall([0.50, 0.10, 0.10, 0.10, 0.10], 2.0) == 0.0
    assert standout_shortfall([0.30, 0.30], 2.0) == 0.0  # two sections: no spread to read
    assert standout_shortfall([0.30], 2.0) == 0.0


@pytest.mark.parametrize("bad", [{"section_standout_share": 1.5}, {"section_standout_share": -0.1},
                                 {"section_standout": -1.0}])
def test_unusable_standout_settings_are_refused_by_name(bad):
    with pytest.raises(InvalidSetting) as refused:
        SearchSettings(**bad)
    assert refused.value.key in bad
