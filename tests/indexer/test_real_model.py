"""The real all-MiniLM-L6-v2 model, loaded offline from the installed package, behind every embedding path."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from indexer.embed import CachedEmbedder, make_embedder
from indexer.index import Index
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import EXAMPLE_VAULT
from vault import Change, Vault

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def model():  # -> OnnxMiniLM
    return make_embedder("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def example_index(model, tmp_path_factory):
    root = tmp_path_factory.mktemp("real") / "example"
    shutil.copytree(EXAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".memdir"))
    index = Index.open(Vault(root), model)
    yield index
    index.close()


def test_the_model_loads_offline_and_gives_unit_vectors(model):
    vectors = model.embed(["FAISS IndexIDMap2 supports remove_ids", "How do I delete vectors from a faiss index?",
                           "My cat sleeps all afternoon"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_a_single_text_gets_the_same_vector_as_it_gets_in_a_batch(model):
    texts = ["how do we stop two workers importing the same statement", "Caroline: I went to a support group",
             "x" * 3000]  # the last one is longer than the model reads: truncated alike on both paths
    batch = model.embed(texts)
    singles = np.stack([model.embed([text])[0] for text in texts])
    assert singles.shape == (3, 384) and singles.dtype == np.float32
    assert np.abs(singles - batch).max() < 1e-5


def test_a_query_gets_the_vector_its_text_gets_as_a_document(model):
    texts = ["how do we stop two workers importing the same statement", "When did Caroline go to the support group?",
             "deploy", "x" * 3000]
    documents = model.embed(texts + ["a longer text in the same batch, so the others are padded " * 5])[:4]
    queries = np.stack([model.embed_query(text) for text in texts])
    assert queries.shape == (4, 384) and queries.dtype == np.float32
    assert np.abs(queries - documents).max() < 1e-5


def test_many_documents_embedded_on_two_threads_land_in_their_own_rows(model):
    texts = [f"memory number {i}: " + "word " * (i % 40) for i in range(100)]  # several batches, two at a time
    together = model.embed(texts)
    for i in (0, 37, 64, 99):
        assert np.abs(together[i] - model.embed([texts[i]])[0]).max() < 1e-5


def test_embedding_with_the_real_model_never_imports_torch():
    import subprocess
    import sys

    script = ("import sys; from indexer.embed import make_embedder; m = make_embedder('all-MiniLM-L6-v2'); "
              "m.embed(['a document']); m.embed_query('a query'); print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "False"


def test_the_cache_returns_the_models_vectors_without_calling_it_again(model, tmp_path: Path):
    cached = CachedEmbedder(model, tmp_path / "cache.sqlite")
    first = cached.embed(["advisory locks in postgres"])
    again = CachedEmbedder(model, tmp_path / "cache.sqlite").embed(["advisory locks in postgres"])
    assert cached.misses == 1 and np.array_equal(first, again)


@pytest.mark.parametrize(
    "question, expected",
    [
        ("which Python version can the deploy image run", "m-9a17e3b5"),
        ("how do we stop two workers importing the same statement at once", "m-8e2c4b07"),
        ("bank statement booking dates shifted by a timezone", "m-36a7e1c9"),
        ("is it safe to add retries to celery tasks", "m-a4c81f63"),
        ("when is multi-currency due", "m-e7a05c31"),
    ],
)
def test_real_questions_find_the_memory_that_answers_them(example_index, question, expected):
    hits = Searcher(example_index, SearchSettings()).search(SearchRequest(query=question, limit=3))
    assert expected in [h.memory.id for h in hits], [h.memory.title for h in hits]


def test_superseded_decisions_stay_hidden_with_the_real_model(example_index):
    hits = Searcher(example_index, SearchSettings()).search(SearchRequest(query="Redis SET NX lock for imports", limit=10))
    found = [h.memory.id for h in hits]
    assert "m-1b6e2d90" not in found and "m-5d3f7a18" not in found and "m-8e2c4b07" in found


def test_a_score_rewrite_does_not_reach_the_model(example_index):
    embedder = example_index.embedder
    before = embedder.misses
    memory = example_index.get("m-a4c81f63")
    Vault(example_index.root).edit(memory, Change(derive=lambda m: {"uses": m.uses + 1}))
    report = example_index.sync()
    assert report.updated == 1 and embedder.misses == before


@pytest.fixture
def real_curator(model, tmp_path: Path):
    from indexer.curator import Curator
    from vault import init_vault
    from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

    root = tmp_path / "vault"
    init_vault(root, "")
    index = Index.open(Vault(root), model)
    yield Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
    index.close()


def test_a_paraphrase_is_reported_as_a_near_duplicate_with_the_real_model(real_curator):
    first = real_curator.add("Dana prefers uv over pip for Python projects.", type="preference")
    second = real_curator.add("Dana prefers using uv instead of pip in Python projects.", type="preference")
    assert [s.id for s in second.near_duplicates] == [first.memory.id]


@pytest.mark.parametrize(
    "old, new",
    [
        ("Squash-merge every pull request into main.", "Always rebase-merge pull requests; never squash them."),
        ("The production database is PostgreSQL 15.", "Production runs PostgreSQL 16."),
        ("Use tabs for indentation in Python files.", "Use four spaces for indentation in Python files."),
    ],
)
def test_contradicting_statements_of_one_type_are_possible_conflicts_with_the_real_model(real_curator, old, new):
    first = real_curator.add(old, type="preference")
    second = real_curator.add(new, type="preference")
    assert [s.id for s in second.possible_conflicts] == [first.memory.id]
    unrelated = real_curator.add("Dana likes espresso in the morning.", type="preference")
    assert unrelated.possible_conflicts == () and unrelated.near_duplicates == ()
