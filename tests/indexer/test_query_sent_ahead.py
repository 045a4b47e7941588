"""A search's query can be sent to the model before the search runs (Searcher.send_query): a prompt's vault server
knows its text before it claims the event, takes the session's lock and opens the turn, and the model computes the
vector meanwhile (bench/results/s23-hook23.md). The search then reads that vector: the model is asked once."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from indexer.embed import SENT_QUERIES, CachedEmbedder, HashingEmbedder, Ready
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings

from .test_capture_batches import BOUND, opened

NOW = datetime.now(timezone.utc)  # both searches rank at the same moment


class CountedQueries(HashingEmbedder):
    """The test model, counting the query texts it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: Counter[str] = Counter()

    def embed_query(self, text: str) -> np.ndarray:
        self.queries[text] += 1
        return super().embed_query(text)


class SentQueries(CountedQueries):
    """A model that takes a query's request on the calling thread, as the embedding host does (start_query)."""

    def start_query(self, text: str) -> Ready:
        return Ready(self.embed_query(text))


def test_a_query_sent_ahead_is_the_vector_its_search_reads_and_the_model_is_asked_once():
    for model in (CountedQueries(), SentQueries()):  # embedded in a thread; a request sent on the calling thread
        embedder = CachedEmbedder(model, None)
        with ThreadPoolExecutor(1) as threads:
            embedder.send_query("why does the walrus7 deploy fail", threads)
            started = embedder.start_query("why does the walrus7 deploy fail")
            assert started is not None
            vector = started.result(BOUND)
        assert np.array_equal(vector, HashingEmbedder().embed_query("why does the walrus7 deploy fail"))
        assert np.array_equal(embedder.embed_query("why does the walrus7 deploy fail"), vector)  # kept as read
        assert model.queries == Counter({"why does the walrus7 deploy fail": 1})


def test_a_query_sent_ahead_that_no_search_asks_for_is_dropped_after_others():
    model = SentQueries()
    embedder = CachedEmbedder(model, None)
    with ThreadPoolExecutor(1) as threads:
        for n in range(SENT_QUERIES + 1):
            embedder.send_query(f"question {n}", threads)
    assert len(embedder._sent) == SENT_QUERIES  # noqa: SLF001 - what is held is what this test is about
    embedder.embed_query(f"question {SENT_QUERIES}")
    embedder.embed_query("question 0")
    assert model.queries[f"question {SENT_QUERIES}"] == 1  # held until asked
    assert model.queries["question 0"] == 2  # the oldest was let go: asked again


def test_a_long_pastes_texts_sent_ahead_are_the_ones_its_search_reads_and_its_answer_is_the_same(hashing_example: Path,
                                                                                                  monkeypatch):
    # A long paste's vector pools the whole prompt's and its salient lines' (two texts); one cut to its salient lines
    # is asked by them: the texts sent ahead are the search's own reading of the request, and the paste is read once
    # for both (reading 64,000 characters costs ~34 ms of CPU: read twice, two hook tests missed their 0.9 s).
    from indexer import search

    readings: list[str] = []
    real = search.salient_text
    monkeypatch.setattr(search, "salient_text", lambda text, **kw: (readings.append(text), real(text, **kw))[1])
    model = SentQueries()  # asked on the sending thread: what was sent is counted when send_query returns
    index = opened(hashing_example, model)
    while index.backfill(limit=256):
        pass
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    log = "\n".join(f"2024-05-0{n % 9 + 1} 12:00:0{n % 10} INFO worker {n} polled the ledger queue" for n in range(60))
    pastes = [f"{log}\nERROR: ledger import failed: advisory lock timeout\nwhy does the ledger import fail?",
              f"why does the ledger import fail? here is the log:\n{log[:600]}\nERROR: advisory lock timeout"]
    try:
        for paste, texts in zip(pastes, (1, 2)):  # cut to its lines; the whole and its lines pooled
            request = SearchRequest(query=paste, limit=10, vector_wait=BOUND, now=NOW)
            model.queries.clear()
            readings.clear()
            searcher.send_query(request)
            sent = model.queries.copy()
            hits = searcher.search(request)
            assert sent and model.queries == sent  # the search asked the model for nothing more
            assert len(sent) == texts and set(sent.values()) == {1}
            assert readings == [paste]  # read once, for the query sent ahead and for the search
            index.embedder.forget_queries()
            again = searcher.search(SearchRequest(query=paste, limit=10, now=NOW))
            assert hits and [(h.memory.id, round(h.final, 9)) for h in hits] == \
                [(h.memory.id, round(h.final, 9)) for h in again]
    finally:
        index.close()
