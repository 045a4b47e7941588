"""memdir's torch-only MiniLM gives sentence-transformers' vectors (a test dependency, the reference)."""

from __future__ import annotations

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from indexer.embed import model_dir
from indexer.minilm import MiniLM

pytestmark = pytest.mark.model

TEXTS = [
    "Local development uses docker compose with the postgres:16 image.",
    "Deploys of the billing service go through the blue-green switch.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "x",
    "A long memory. " * 200,  # past the 256-token limit: truncated the same way
]


@pytest.fixture(scope="module")
def models() -> tuple[MiniLM, SentenceTransformer]:
    return MiniLM(), SentenceTransformer(str(model_dir()), device="cpu")


def reference(model: SentenceTransformer, texts: list[str]) -> np.ndarray:
    return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


def test_document_vectors_equal_sentence_transformers(models):
    mine, theirs = models
    cosines = (mine.embed(TEXTS) * reference(theirs, TEXTS)).sum(axis=1)
    assert cosines.min() > 0.99999


def test_query_vectors_are_the_same_direction_in_either_precision(models):
    mine, theirs = models
    for text in TEXTS[:3]:
        assert float(mine.embed_query(text) @ reference(theirs, [text])[0]) > 0.9999
    assert mine.embed([]).shape == (0, 384)
    assert np.allclose(np.linalg.norm(mine.embed(TEXTS), axis=1), 1.0, atol=1e-5)
