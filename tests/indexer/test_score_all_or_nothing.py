"""A multi-id score is one decision: all of its ids are counted or none, so a retried call never counts twice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer.curator import Curator
from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.conftest import memory_text, write
from tests.reliability.attacks import partial_score
from tests.reliability.harness import new_vault
from vault import Vault, atomic
from vault.errors import ConflictError
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

A, B = "m-0000000a", "m-0000000b"


@pytest.fixture
def two(tmp_path: Path):
    root = new_vault(tmp_path / "v")
    write(root, "history/a.md", memory_text(A, "Alpha", "alpha body"))
    write(root, "history/b.md", memory_text(B, "Beta", "beta body"))
    index = Index.open(Vault(root), HashingEmbedder())
    yield root, index, Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
    index.close()


def uses(root: Path, name: str) -> int:
    return Vault(root).writer.read(f"history/{name}").uses


def test_an_id_renamed_after_the_first_write_undoes_the_whole_call(two, monkeypatch):
    root, _, curator = two
    real = atomic.replace_file
    renamed = []

    def write_then_rename_b(path, data, expected):
        real(path, data, expected)
        if not renamed:  # git checks B out under another name right after A was written
            renamed.append(os.rename(root / "history/b.md", root / "history/b2.md"))

    monkeypatch.setattr(atomic, "replace_file", write_then_rename_b)
    with pytest.raises(ConflictError):
        curator.score({A: "worked", B: "worked"})
    assert uses(root, "a.md") == 0 and uses(root, "b2.md") == 0  # nothing of the refused call stays


def test_scoring_two_ids_while_one_is_renamed_back_and_forth_counts_exactly_the_calls_reported_done(tmp_path: Path):
    assert partial_score(tmp_path, calls=150) == {"score_counted_beyond_reported": 0}  # the attack of issue 28
