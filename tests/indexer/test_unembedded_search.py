"""A prompt's search in a fresh vault, before the backfill has embedded most units: little the vector channel could find,
so the model is not asked for the query's vector (nor waited for: 0.25 s of each cold prompt's 0.9 s budget, for a
model host that was itself starting, or busy embedding the rest)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexer.embed import HashingEmbedder
from indexer.index import Index
from indexer.search import MIN_VECTOR_SHARE, SearchRequest, Searcher
from indexer.settings import SearchSettings
from vault import Vault

PROMPT = "how do we make celery retries safe"


class CountedQueries(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries = 0

    def embed_query(self, text: str) -> np.ndarray:
        self.queries += 1
        return super().embed_query(text)


def test_a_prompt_before_most_units_have_vectors_is_answered_by_keyword_without_asking_the_model(hashing_example: Path):
    embedder = CountedQueries()
    index = Index.open(Vault(hashing_example), embedder, defer_embedding=True)
    try:
        searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
        assert index.vector_share() == 0 and index.waiting_units() > 0
        hits = searcher.search(SearchRequest(query=PROMPT, limit=10, vector_wait=0.25))
        assert "m-a4c81f63" in [h.memory.id for h in hits] and {h.channel for h in hits} <= {"keyword", "graph", "hop"}
        assert embedder.queries == 0
        index.backfill(limit=8)  # the first vectors (a first capture's): a sliver of the vault, still by keyword
        assert 0 < index.vector_share() < MIN_VECTOR_SHARE
        searcher.search(SearchRequest(query=PROMPT, limit=10, vector_wait=0.25))
        assert embedder.queries == 0
        while index.vector_share() < MIN_VECTOR_SHARE:
            index.backfill(limit=8)  # most of the vault has its vectors: the vector channel is asked from here on
        searcher.search(SearchRequest(query=PROMPT, limit=10, vector_wait=0.25))
        assert embedder.queries == 1
    finally:
        index.close()


def test_a_search_that_waits_for_its_vector_still_asks_the_model_in_a_vault_without_vectors(hashing_example: Path):
    embedder = CountedQueries()
    index = Index.open(Vault(hashing_example), embedder, defer_embedding=True)
    try:
        Searcher(index, SearchSettings(embedder="hashing-256")).search(SearchRequest(query=PROMPT, limit=10))
        assert embedder.queries == 1  # a tool's search is not the hook's: its mode is as asked
    finally:
        index.close()
