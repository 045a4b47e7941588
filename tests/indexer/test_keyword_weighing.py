"""Each keyword hit is weighed by how much of the question it covers, not by how much the best hit covers.

One memory that names what the question names must not lend the keyword channel's weight to the others
that share a single word with it: those words are the user's own, and meaning decides between them."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.search import SearchRequest, _Candidate, keyword_confidence
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.test_search import NOW, concept_index, searcher

FILLER = ["Grind finer for espresso", "Ship the release on Friday", "Postgres vacuum settings",
          "Deploy with the script", "Coffee beans from the market"]


def test_a_hit_sharing_one_word_gets_no_keyword_weight_though_another_hit_covers_the_question(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Zebra crossing", "Zebra crossing paint schedule for the depot"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Logo", "Zebra stripes on the espresso cups"))
    write(hashing_root, "patterns/c.md", memory_text("m-0000000c", "Fleet", "The sedan is serviced every spring"))
    for n, text in enumerate(FILLER):
        write(hashing_root, f"patterns/f{n}.md", memory_text(f"m-f000000{n}", "Note", text))
    index = concept_index(hashing_root)
    question = SearchRequest(query="zebra crossing paint schedule, and the car", now=NOW)
    alone = {h.memory.id: h for h in searcher(index, score_threshold=0.0, keyword_confidence_lent=0.0).search(question)}
    assert alone["m-0000000a"].explain["keyword_mix"] > 0.0  # it names what the question names
    assert alone["m-0000000b"].explain["keyword_mix"] == 0.0  # "zebra" alone: a word shared by chance
    hits = {h.memory.id: h for h in searcher(index, score_threshold=0.0).search(question)}  # half of a's lent
    assert hits["m-0000000c"].final > hits["m-0000000b"].final  # meaning decides between the others
    index.close()


@pytest.mark.parametrize(("coverage", "exact", "weight"), [
    (0.1, False, 0.0), (0.3, False, 0.0), (0.5, False, 0.5), (0.7, False, 1.0), (0.9, False, 1.0), (0.05, True, 1.0)])
def test_a_hits_keyword_weight_ramps_with_its_own_coverage_and_a_code_like_term_counts_in_full(coverage, exact, weight):
    candidate = _Candidate("m-0000000a", keyword_rank=0, keyword_coverage=coverage, keyword_exact=exact)
    assert keyword_confidence(candidate, SearchSettings()) == pytest.approx(weight)


@pytest.mark.parametrize(("own", "best", "lent", "weight"), [
    (0.2, 0.9, 0.0, 0.0),    # by its own coverage alone: a word shared by chance
    (0.2, 0.9, 0.5, 0.375),  # half the best hit's 0.9 is lent: (0.45 - 0.3) / 0.4
    (0.2, 0.9, 1.0, 1.0),    # all of it: the best hit's coverage for every hit
    (0.6, 0.9, 0.5, 0.75),   # its own coverage is more than what is lent
    (0.2, 0.5, 0.5, 0.0)])   # a best hit that covers half the question lends too little to count
def test_a_hit_is_lent_part_of_the_best_hits_coverage_when_that_is_more_than_its_own(own, best, lent, weight):
    candidate = _Candidate("m-0000000a", keyword_rank=1, keyword_coverage=own)
    settings = SearchSettings(keyword_confidence_lent=lent)
    assert keyword_confidence(candidate, settings, settings.keyword_confidence_lent * best) == pytest.approx(weight)


def test_a_lent_share_outside_0_to_1_is_refused_naming_the_setting():
    from indexer.settings import InvalidSetting
    with pytest.raises(InvalidSetting, match="1.5 is not in") as refused:
        SearchSettings(keyword_confidence_lent=1.5)
    assert refused.value.key == "keyword_confidence_lent"
