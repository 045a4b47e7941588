"""A question in other words still gets its answer listed (issue 26): with no word in common, MiniLM puts a
fresh memory near cosine 0.15-0.19 to the question, a relevance under 0.05, and the old default threshold
dropped it, so memdir showed nothing (or only filler) where plain cosine ranked the answer first
(bench/served_fresh.py, the example vault: "how can partners trust that notifications we push really came
from us" listed nothing at all)."""

from __future__ import annotations

from pathlib import Path

from indexer.search import SearchRequest
from tests.conftest import memory_text, write
from tests.indexer.test_search import NOW, concept_index, searcher


def test_a_weak_but_real_match_is_listed_first_with_the_default_settings(hashing_root: Path):
    # One sentence, so no sentence unit scores it alone: the car concept is a small part of the memory.
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Postgres", "postgres sql database postgres sql with a sedan"))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "Espresso", "Grind finer for espresso"))
    index = concept_index(hashing_root)
    try:
        hits = searcher(index).search(SearchRequest(query="automobile", now=NOW))
        assert hits and hits[0].memory.id == "m-0000000a"
        assert 0.0 < hits[0].relevance < 0.05  # the weak band the old threshold cut off
    finally:
        index.close()


def test_a_keyword_only_answer_still_leaves_out_a_note_that_shares_one_word_of_many(hashing_root: Path):
    # While a served vault's vectors are still being filled in, it answers by keyword alone: a note that shares one
    # word of a long question is not evidence, and the threshold still cuts it there.
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Espresso", "Grind finer for espresso"))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "Backups", "Nightly backups of the ledger database"))
    index = concept_index(hashing_root)
    try:
        question = ("quarterly planning offsite agenda budget travel hotel catering speakers workshop venue "
                    "schedule invitations badges parking espresso")
        hits = searcher(index).search(SearchRequest(query=question, now=NOW, mode="keyword"))
        assert [h.memory.id for h in hits] == []
        assert [h.memory.id for h in searcher(index, score_threshold=0.0).search(
            SearchRequest(query=question, now=NOW, mode="keyword"))] == ["m-0000000a"]  # it was a candidate
    finally:
        index.close()
