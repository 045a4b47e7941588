"""A pasted log or traceback (a long question) is ranked by how near each note is, not by a tie at "full evidence".

Read whole to whole, a long question sits at cosine 0.6-0.75 from several notes at once. At the short
questions' `cosine_full` (0.65) they all count as full evidence, and a 3 % outcome lift or one file path the
log shares with the wrong note decided between them (coding dev, long prompts: MRR@10 0.896 against plain
cosine's 0.932; bench/results/search.md, issue 26 session 5b). The relevance shown, which thresholds read, is
unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.search import SearchRequest, Searcher, _Candidate, keyword_confidence
from indexer.settings import InvalidSetting, SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.test_search import NOW, concept_index

FILLER = ["Grind finer for espresso", "Coffee beans from the market", "Espresso cups on the shelf",
          "Coffee at nine", "The espresso machine descaling", "Coffee filter sizes"]
# 40 words: read whole to whole. Its meaning: car, database and deploy, once each (cosine 0.82 to the
# nearer note, 0.67 to the other: both past the short questions' full evidence).
LOG = ("worker crashed again overnight: car database deploy " + "lorem ipsum dolor sit amet " * 7).strip()


def _vault(root: Path) -> None:
    write(root, "patterns/near.md", memory_text("m-0000000a", "Fleet", "car database"))
    write(root, "patterns/half.md", memory_text("m-0000000b", "Fleet notes", "car database coffee"))
    for n, text in enumerate(FILLER):
        write(root, f"patterns/f{n}.md", memory_text(f"m-f000000{n}", "Note", text))


def _lift_half(memory, now) -> float:
    return 1.05 if memory.id == "m-0000000b" else 1.0  # the most a good outcome record lifts (quality_lift_cap)


def test_a_long_question_puts_the_nearer_note_first_though_the_other_has_a_better_record(hashing_root: Path):
    _vault(hashing_root)
    index = concept_index(hashing_root)
    request = SearchRequest(query=LOG, mode="vector", now=NOW)
    hits = Searcher(index, SearchSettings(), quality=_lift_half).search(request)
    assert [h.memory.id for h in hits[:2]] == ["m-0000000a", "m-0000000b"]
    tied = Searcher(index, SearchSettings(long_query_cosine_full=0.65), quality=_lift_half).search(request)
    assert tied[0].memory.id == "m-0000000b"  # both at full evidence: the record decided (the old order)
    index.close()


def test_the_relevance_a_long_question_shows_does_not_depend_on_the_order_s_scale(hashing_root: Path):
    _vault(hashing_root)
    index = concept_index(hashing_root)
    request = SearchRequest(query=LOG, mode="vector", now=NOW)
    shown = {h.memory.id: h.relevance for h in Searcher(index, SearchSettings()).search(request)}
    old = {h.memory.id: h.relevance for h in Searcher(index, SearchSettings(long_query_cosine_full=0.65)).search(request)}
    assert shown == pytest.approx(old)
    index.close()


def test_a_short_question_keeps_the_short_scale(hashing_root: Path):
    _vault(hashing_root)
    index = concept_index(hashing_root)
    request = SearchRequest(query="car database deploy", mode="vector", now=NOW)
    ours = [(h.memory.id, h.final) for h in Searcher(index, SearchSettings(), quality=_lift_half).search(request)]
    old = [(h.memory.id, h.final) for h in Searcher(index, SearchSettings(long_query_cosine_full=0.65),
                                                     quality=_lift_half).search(request)]
    assert ours == old
    index.close()


@pytest.mark.parametrize(("held", "weight"), [(1.0, 1.0), (1 / 6, 1 / 6), (0.0, 0.0)])
def test_a_hit_holding_one_of_a_pasted_logs_six_code_like_terms_gets_a_sixth_of_the_keyword_weight(held, weight):
    # "billing/webhooks.py" in a traceback is not the answer's name; ERR_4711 asked alone still counts in full.
    candidate = _Candidate("m-0000000a", keyword_rank=0, keyword_coverage=0.1, keyword_exact=held)
    assert keyword_confidence(candidate, SearchSettings()) == pytest.approx(weight)


def test_a_long_question_scale_at_or_below_the_cosine_floor_is_refused_naming_the_setting():
    with pytest.raises(InvalidSetting) as refused:
        SearchSettings(long_query_cosine_full=0.1)
    assert refused.value.key == "long_query_cosine_full"
