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
    hits = {h.memory.id: h for h in searcher(index, score_threshold=0.0).search(
        SearchRequest(query="zebra crossing paint schedule, and the car", now=NOW))}
    assert hits["m-0000000a"].explain["keyword_mix"] > 0.0  # it names what the question names
    assert hits["m-0000000b"].explain["keyword_mix"] == 0.0  # "zebra" alone: a word shared by chance
    assert hits["m-0000000c"].final > hits["m-0000000b"].final  # meaning decides between the others
    index.close()


@pytest.mark.parametrize(("coverage", "exact", "weight"), [
    (0.1, False, 0.0), (0.3, False, 0.0), (0.5, False, 0.5), (0.7, False, 1.0), (0.9, False, 1.0), (0.05, True, 1.0)])
def test_a_hits_keyword_weight_ramps_with_its_own_coverage_and_a_code_like_term_counts_in_full(coverage, exact, weight):
    candidate = _Candidate("m-0000000a", keyword_rank=0, keyword_coverage=coverage, keyword_exact=exact)
    assert keyword_confidence(candidate, SearchSettings()) == pytest.approx(weight)
