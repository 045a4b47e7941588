"""A fresh build ends with its vectors in the snapshot, not in a log every later open replays."""

from __future__ import annotations

from pathlib import Path

from indexer import index as index_module
from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.conftest import memory_text, write
from tests.reliability.harness import new_vault
from vault import Vault

from .helpers import state


def test_a_sliced_build_leaves_no_vector_log_and_a_reader_sees_what_the_builder_has(tmp_path: Path, monkeypatch):
    root = new_vault(tmp_path / "vault")
    for n in range(30):
        write(root, f"history/m{n:02d}.md", memory_text(f"m-000000{n:02d}", f"Note {n}", f"body {n} about the heron queue"))
    monkeypatch.setattr(index_module, "BUILD_SLICE", 7)  # five slices: the later ones' vectors were logged
    index = Index.open(Vault(root), HashingEmbedder())
    log = index.generation / "vectors.log"
    assert not log.exists() or log.stat().st_size == 0
    reader = Index(index.vault, HashingEmbedder(), index.generation, writable=False)
    assert state(reader) == state(index)
    reader.close()
    index.close()
