"""The embedder lets go of the model file's pages each call reads, and the vectors stay the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.onnx_minilm import OnnxMiniLM

TEXTS = [f"Caroline: session {n} was about the {word} at the lake, and the {word} again." for n, word in
         enumerate("adoption painting pottery camping concert bracelet library marathon violin sunrise".split())] * 8


def mapped_model_kb(model: OnnxMiniLM) -> int:
    """Resident kB of the model's own mapping of its file (linux: /proc/self/smaps). Only that one mapping: a
    sentence-transformers model in the same test process maps the same file."""
    address = model._mapped.__array_interface__["data"][0]
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5:  # a mapping's header line
            start, end = (int(part, 16) for part in head[0].split("-"))
            inside = start <= address < end
        elif inside and line.startswith("Rss:"):
            return int(head[1])
    raise AssertionError("the model file is not mapped")


@pytest.fixture(scope="module")
def model() -> OnnxMiniLM:
    return OnnxMiniLM()


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads linux's /proc/self/smaps")
def test_documents_and_queries_leave_no_page_of_the_model_file_resident(model: OnnxMiniLM):
    documents = model.embed(TEXTS)
    assert mapped_model_kb(model) == 0
    query = model.embed_query("What did Caroline paint?")
    assert mapped_model_kb(model) == 0
    # the next calls read the rows back from the page cache and give the same vectors, bit for bit
    assert np.array_equal(model.embed(TEXTS), documents)
    assert np.array_equal(model.embed_query("What did Caroline paint?"), query)


def test_the_same_vectors_with_the_pages_kept(model: OnnxMiniLM, monkeypatch: pytest.MonkeyPatch):
    dropped, query = model.embed(TEXTS[:20]), model.embed_query("Where is the lake?")
    monkeypatch.setattr(model, "_let_go_of_read_rows", lambda: None)
    assert np.array_equal(model.embed(TEXTS[:20]), dropped)
    assert np.array_equal(model.embed_query("Where is the lake?"), query)
    assert mapped_model_kb(model) > 0  # what the drop removes: the rows these calls read
