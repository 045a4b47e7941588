"""A prompt hook's search (`vector_wait`) does its keyword work while the model computes its query's vector, without
holding the index lock through the wait, and answers as a search that waited for the vector first would
(bench/results/s20-hook20.md: at 10k on the AVX2 machine the two were done one after the other; tried in session 20,
measured again and kept in s23-hook23.md)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings

from .helpers import default_curator
from .test_capture_batches import BOUND, HeldQueries, opened

QUESTION = "why does the walrus7 deploy fail"
NOW = datetime.now(timezone.utc)  # both searches rank at the same moment


def keyword_work_seen(index) -> threading.Event:
    """Set when the index's keyword channel is asked."""
    seen = threading.Event()
    real = index.keyword_search
    index.keyword_search = lambda *args, **kw: (seen.set(), real(*args, **kw))[1]
    return seen


def ranked(hits) -> list[tuple]:
    return [(h.memory.id, h.channel, round(h.relevance, 9), round(h.final, 9), h.vector_score, h.keyword_score) for h in hits]


def vectors_in(index):  # type: ignore[no-untyped-def]
    """The backfill done: a prompt's search asks for its query's vector (a vault with none answers by keyword)."""
    while index.backfill(limit=256):
        pass
    return index


def test_a_prompts_keyword_work_runs_while_its_vector_is_computed_and_the_answer_is_the_same(hashing_example: Path):
    embedder = HeldQueries()
    index = vectors_in(opened(hashing_example, embedder))
    default_curator(index).add("User: why does the walrus7 deploy fail\n\nAssistant: a stale image.", title="walrus7",
                               type="history", collection="working", compare=False)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    keyword = keyword_work_seen(index)
    try:
        with ThreadPoolExecutor(1) as pool:
            asked = pool.submit(searcher.search, SearchRequest(query=QUESTION, limit=10, vector_wait=BOUND, now=NOW))
            assert embedder.asked.wait(BOUND)
            assert keyword.wait(BOUND)  # the keyword channel ran before the vector came
            assert index.lock.acquire(timeout=BOUND)  # and the lock is free while the search waits for it
            index.lock.release()
            embedder.answer.set()
            answered = asked.result(BOUND)
        assert answered and ranked(answered) == ranked(searcher.search(SearchRequest(query=QUESTION, limit=10, now=NOW)))
    finally:
        embedder.answer.set()
        index.close()


def test_a_memory_indexed_while_the_vector_is_computed_is_in_that_prompts_answer(hashing_example: Path):
    embedder = HeldQueries()
    index = vectors_in(opened(hashing_example, embedder))
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    keyword = keyword_work_seen(index)
    try:
        with ThreadPoolExecutor(1) as pool:
            asked = pool.submit(searcher.search, SearchRequest(query=QUESTION, limit=10, vector_wait=BOUND, now=NOW))
            assert embedder.asked.wait(BOUND) and keyword.wait(BOUND)
            # Found by keyword alone: its vectors come with the backfill (defer_embedding), after this search.
            added = default_curator(index).add("User: why does the walrus7 deploy fail\n\nAssistant: a stale image.",
                                               title="walrus7", type="history", collection="working",
                                               compare=False).memory.id
            embedder.answer.set()
            answered = asked.result(BOUND)
        assert added in {h.memory.id for h in answered}  # the keyword work was done again for the changed index
    finally:
        embedder.answer.set()
        index.close()
