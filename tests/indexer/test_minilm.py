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


def test_a_batch_of_the_longest_texts_holds_one_so_its_attention_scores_stay_near_3_mb():
    """The host's peak while embedding follows its biggest tensor, a batch's attention scores (texts x 12 heads x
    tokens^2 floats): at most one 256-token text a batch, and no batch's scores above one such text's."""
    lengths = [256] * 4 + [200] * 3 + [64] * 9 + [30] * 20 + [8] * 70
    batches = token_batches(lengths)
    scores_mb = [len(batch) * 12 * max(lengths[i] for i in batch) ** 2 * 4 / 2**20 for batch in batches]
    assert max(scores_mb) <= 12 * 256**2 * 4 / 2**20 == 3.0
    assert all(len(batch) == 1 for batch in batches if max(lengths[i] for i in batch) > TOKEN_BUDGET // 2)
    assert max(len(batch) for batch in batches) == BATCH  # short texts still go 32 at a time


def test_the_vectors_do_not_depend_on_the_token_budget(models, monkeypatch):
    mine, _ = models
    texts = TEXTS + [f"Melanie: I painted the {w} again, session {n}." for n, w in enumerate(["lake"] * 40)]
    now = mine.embed(texts)
    monkeypatch.setattr("indexer.onnx_minilm.TOKEN_BUDGET", 1024)
    before = mine.embed(texts)
    assert (now * before).sum(axis=1).min() > 0.99999
