"""memdir's embedder (all-MiniLM-L6-v2 on ONNX Runtime) gives sentence-transformers' vectors (a test
dependency, the reference)."""

from __future__ import annotations

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from indexer.model_files import model_dir
from indexer.onnx_minilm import BATCH, TOKEN_BUDGET, OnnxMiniLM, token_batches

pytestmark = pytest.mark.model

TEXTS = [
    "Local development uses docker compose with the postgres:16 image.",
    "Deploys of the billing service go through the blue-green switch.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "x",
    "A long memory. " * 200,  # past the 256-token limit: truncated the same way
    "Ünïcödé, emoji 🚀 and 中文 go through the same word pieces",
]


@pytest.fixture(scope="module")
def models() -> tuple[OnnxMiniLM, SentenceTransformer]:
    return OnnxMiniLM(), SentenceTransformer(str(model_dir()), device="cpu")


def reference(model: SentenceTransformer, texts: list[str]) -> np.ndarray:
    return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


def test_document_vectors_equal_sentence_transformers(models):
    mine, theirs = models
    cosines = (mine.embed(TEXTS) * reference(theirs, TEXTS)).sum(axis=1)
    assert cosines.min() > 0.99999


def test_query_vectors_equal_sentence_transformers(models):
    mine, theirs = models
    expected = reference(theirs, TEXTS)
    for text, vector in zip(TEXTS, expected):
        assert float(mine.embed_query(text) @ vector) > 0.99999
    assert mine.embed([]).shape == (0, 384)
    assert np.allclose(np.linalg.norm(mine.embed(TEXTS), axis=1), 1.0, atol=1e-5)



def test_documents_are_batched_shortest_first_within_the_token_budget():
    lengths = [256, 3, 40, 256, 12, 100, 7, 256, 256, 256] + [20] * 80
    batches = token_batches(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= BATCH and (len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= TOKEN_BUDGET)
    flat = [lengths[i] for batch in batches for i in batch]
    assert flat == sorted(flat)
