"""A sync embeds and adds its units in bounded slices, and ends in the same index as one slice would."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import indexer.index as index_module
from indexer.embed import HashingEmbedder

from .helpers import open_index, state


class Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.sizes.append(len(texts))
        return super().embed(texts)


def test_a_build_embeds_in_slices_and_equals_a_build_in_one_slice(example_root: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch):
    copy = tmp_path / "copy"
    shutil.copytree(example_root, copy)
    whole = open_index(copy)
    expected, units = state(whole), whole.unit_count()
    whole.close()

    monkeypatch.setattr(index_module, "EMBED_SLICE", 7)
    recording = Recording()
    sliced = open_index(example_root, recording)
    try:
        assert units > 7 * 3 and max(recording.sizes) <= 7  # the model never sees more than a slice at once
        assert state(sliced) == expected
    finally:
        sliced.close()
