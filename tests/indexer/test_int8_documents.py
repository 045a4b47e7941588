"""Documents embedded by the int8 graph ([search] int8_documents): within cosine 0.998 of float32's, padding does not
move them, and a vault embedded in float32 before is neither embedded again nor different from a rebuild after."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from indexer.embed import CachedEmbedder
from indexer.index import Index
from indexer.onnx_minilm import OnnxMiniLM
from indexer.weights import padded
from vault import Vault

from tests.conftest import memory_text

from .helpers import state

DOCUMENTS = [
    "Local development uses docker compose with the postgres:16 image; run `make db` before the tests.",
    "Decision: the nightly export holds no transaction open longer than 30 s; it reads in pages of 5,000 rows.",
    "2026-11-02 14:03:55,201 INFO http.access 10.2.0.17 \"GET /api/v2/appointments?clinic=44 HTTP/1.1\" 200 5123",
    "def retry(fn, attempts=3):\n    for n in range(attempts):\n        try:\n            return fn()\n"
    "        except TimeoutError:\n            time.sleep(2 ** n)\n    raise",
    "Priya told Tomasz about the adoption agencies she has been researching and the support group she went to.",
    "Deploys go blue-green.",
]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> OnnxMiniLM:
    return OnnxMiniLM(int8_cache=tmp_path_factory.mktemp("int8"), int8_documents=True)


@pytest.mark.model
def test_documents_take_the_int8_graph_within_cosine_0998_of_float32(model: OnnxMiniLM):
    int8, exact = model.embed(DOCUMENTS), model.embed(DOCUMENTS, int8=False)
    assert not np.array_equal(int8, exact), "the documents took the int8 graph"
    assert np.einsum("ij,ij->i", int8, exact).min() >= 0.998
    assert np.allclose(np.linalg.norm(int8, axis=1), 1, atol=1e-5)
    assert np.array_equal(exact, OnnxMiniLM().embed(DOCUMENTS)), "int8=False is today's float32 exactly"


@pytest.mark.model
def test_padding_in_a_batch_does_not_move_a_texts_int8_vector(model: OnnxMiniLM):
    """One scale for a whole batch's activations: padding tokens, which nothing reads, must not set it."""
    graph = model._int8_session()
    for text in DOCUMENTS:
        ids, mask = padded([model.tokenizer.encode(text)])
        alone = graph.run(None, {"ids": ids, "mask": mask})[0][0]
        pad = np.zeros((1, 40), dtype=ids.dtype)
        beside = graph.run(None, {"ids": np.hstack([ids, pad]), "mask": np.hstack([mask, pad])})[0][0]
        assert np.allclose(alone, beside, atol=1e-6), text


def _vault(root: Path, count: int) -> None:
    for n in range(count):
        path = root / "notes" / f"note-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory_text(f"m-{n:04d}", f"Note {n}", DOCUMENTS[n % len(DOCUMENTS)] + f" (case {n})"))


@pytest.mark.model
def test_a_vault_embedded_in_float32_is_not_embedded_again_and_still_equals_a_rebuild(model: OnnxMiniLM,
                                                                                          tmp_path: Path):
    root = tmp_path / "vault"
    _vault(root, 8)
    cache = root / ".memdir" / "cache" / "embeddings.sqlite"
    before = CachedEmbedder(OnnxMiniLM(), cache)
    Index.open(Vault(root), before).close()
    before.close()

    upgraded = CachedEmbedder(model, cache)
    index = Index.open(Vault(root), upgraded)
    index.sync()
    assert upgraded.misses == 0, "the float32 vectors serve the int8 embedder: nothing embedded on upgrade"
    _vault(root, 11)  # three new memories, embedded in int8
    index.sync()
    assert upgraded.misses > 0
    incremental = state(index)
    index.close()
    upgraded.close()

    shutil.rmtree(root / ".memdir" / "index")
    again = CachedEmbedder(model, cache)
    rebuilt = Index.open(Vault(root), again)
    try:
        assert state(rebuilt) == incremental, "old float32 and new int8 vectors alike, as the incremental index"
        assert again.misses == 0
    finally:
        rebuilt.close()
        again.close()
