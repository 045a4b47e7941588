"""Queries first: while a prompt's query waits or runs in the embedding host, no new run of documents starts; the
documents go once it is done, or after a bounded wait, and none is dropped."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from indexer.embed import HashingEmbedder
from mcp_server.embedding import query_gate
from mcp_server.embedding.host import SharedEmbedder

from .test_embed_host import serving


class _Held(HashingEmbedder):
    """The test model: a query holds until told to go; the order of the model's calls is noted."""

    def __init__(self) -> None:
        super().__init__(384)
        self.query_running, self.query_go = threading.Event(), threading.Event()
        self.order: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.order.append("documents")
        return super().embed(texts)

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        self.query_running.set()
        assert self.query_go.wait(30)
        self.order.append("query")
        return super().embed([text])[0]


class _GatedRuns(HashingEmbedder):
    """A model that runs documents in several runs, as the real one does, and asks the host before each."""

    def __init__(self) -> None:
        super().__init__(384)
        self.runs = 0

    def embed_documents(self, texts, before_run):  # type: ignore[no-untyped-def]
        vectors = []
        for text in texts:
            before_run()
            self.runs += 1
            vectors.append(super().embed([text]))
        return np.concatenate(vectors)


def _serving_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    documents_held = threading.Event()
    monkeypatch.setattr(query_gate.QueryGate, "_documents_held", lambda self: documents_held.set())
    model = _Held()
    with serving(model):
        yield model, documents_held
        model.query_go.set()  # a query a failed test left holding lets the host stop


@pytest.fixture
def held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    yield from _serving_held(tmp_path, monkeypatch)


@pytest.fixture
def held_briefly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(query_gate, "MAX_WAIT", 0.05)  # documents wait for a query at most 50 ms
    yield from _serving_held(tmp_path, monkeypatch)


def _in_background(target, *args) -> tuple[threading.Thread, list]:  # type: ignore[no-untyped-def]
    out: list = []
    thread = threading.Thread(target=lambda: out.append(target(*args)), daemon=True)
    thread.start()
    return thread, out


def test_documents_wait_for_a_query_in_flight_and_then_are_all_embedded(held):
    model, documents_held = held
    query, _ = _in_background(SharedEmbedder().embed_query, "redis locks")
    assert model.query_running.wait(15)
    documents, vectors = _in_background(SharedEmbedder().embed, ["a captured exchange", "its reply"])
    assert documents_held.wait(15), "the documents reached the gate"
    assert model.order == [], "no run of documents started while the query was in flight"
    model.query_go.set()
    query.join(15)
    documents.join(15)
    assert not query.is_alive() and not documents.is_alive()
    assert model.order == ["query", "documents"]
    assert np.allclose(vectors[0], HashingEmbedder(384).embed(["a captured exchange", "its reply"]))


def test_documents_are_not_starved_by_a_query_that_never_ends(held_briefly):
    model, documents_held = held_briefly
    query, _ = _in_background(SharedEmbedder().embed_query, "a query stuck in the model")
    assert model.query_running.wait(15)
    documents, vectors = _in_background(SharedEmbedder().embed, ["a captured exchange"])
    documents.join(10)
    assert not documents.is_alive(), "the documents waited for the query beyond the bound"
    assert documents_held.is_set(), "the documents waited for the query first"
    assert model.order == ["documents"]
    assert np.allclose(vectors[0], HashingEmbedder(384).embed(["a captured exchange"]))
    model.query_go.set()
    query.join(15)
    assert not query.is_alive()


def test_a_model_that_runs_documents_in_several_runs_is_asked_before_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    asked: list[int] = []
    monkeypatch.setattr(query_gate.QueryGate, "before_documents", lambda self: asked.append(model.runs))
    model = _GatedRuns()
    with serving(model):
        vectors = SharedEmbedder().embed(["one", "two", "three"])
    assert asked == [0, 1, 2], "the gate is asked before every run, not once a request"
    assert np.allclose(vectors, HashingEmbedder(384).embed(["one", "two", "three"]))
