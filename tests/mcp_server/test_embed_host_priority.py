"""The prompt's query ahead of the captures: the embedding host runs batches of documents at a lower CPU priority
than queries, so a prompt hook's query does not wait for a core behind nine sessions' captured exchanges."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from indexer.embed import HashingEmbedder
from mcp_server.embedding import host as embed_host
from mcp_server.embedding.host import SharedEmbedder

from .test_embed_host import serving

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


class _Recording(HashingEmbedder):
    """The test model, noting the priority of the thread each call ran in; documents hold until told to go."""

    def __init__(self) -> None:
        super().__init__(384)
        self.busy, self.go = threading.Event(), threading.Event()
        self.documents_nice: list[int] = []
        self.queries_nice: list[int] = []
        self.model_thread_nice: list[int] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.documents_nice.append(_nice())
        seen: list[int] = []
        started = threading.Thread(target=lambda: seen.append(_nice()))  # as the real model's batch threads start
        started.start()
        started.join()
        self.model_thread_nice += seen
        self.busy.set()
        assert self.go.wait(15)
        return super().embed(texts)

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        self.queries_nice.append(_nice())
        return super().embed([text])[0]


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    model = _Recording()
    with serving(model):
        yield model
        model.go.set()  # a batch a failed test left holding lets the host stop


def test_documents_are_embedded_at_a_lower_priority_than_queries_and_a_query_does_not_wait_for_them(served):
    own = _nice()
    documents = threading.Thread(target=SharedEmbedder().embed, args=(["a captured exchange"] * 64,), daemon=True)
    documents.start()
    assert served.busy.wait(30)
    vector = SharedEmbedder().embed_query("redis locks")  # answered while the captures' batch is still in the model
    assert np.allclose(vector, HashingEmbedder(384).embed_query("redis locks"))
    served.go.set()
    documents.join(30)
    assert not documents.is_alive()
    expected = min(19, own + embed_host.DOCUMENTS_NICE)
    assert served.documents_nice == [expected], "the batch ran in the documents' lane"
    assert served.model_thread_nice == [expected], "threads the model starts for a batch inherit the lane's priority"
    assert served.queries_nice == [own], "the query ran at the host's own priority"


def test_a_second_batch_of_documents_runs_in_the_same_lower_lane(served):
    served.go.set()
    shared = SharedEmbedder()
    for n in range(2):
        assert shared.embed([f"exchange {n}"]).shape == (1, 384)
    assert served.documents_nice == [min(19, _nice() + embed_host.DOCUMENTS_NICE)] * 2
