"""A fresh build reads, chunks, embeds and writes the vault a slice of files at a time, and ends where one
sync over the whole vault ends (issue 32 item 1: the build's peak grows with a slice, not the vault)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import indexer.index as index_module
from indexer.embed import CachedEmbedder, HashingEmbedder
from indexer.generations import Layout
from indexer.index import build_generation
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, plain_notes, state, top_ids
from vault import Vault

QUERIES = ("postgres advisory lock", "what did Dana paint", "ledger currency", "celery retry")


def _turn(memory_id: str, body: str, previous: str | None = None, extra: str = "") -> str:
    line = f"previous: {previous}\n" if previous else ""
    return memory_text(memory_id, f"Turn {memory_id[-2:]}", body, extra=line + extra)


def _mixed_vault(root: Path) -> Path:
    """The example vault (links, supersedes, books) and 20 captured turns in chains whose neighbours fall in
    other slices both ways (a follower sorted before and after the turn it names), a duplicate id in a later
    slice than its holder, a private turn and a broken file: ~60 files."""
    words = ["Dana: What did you paint?", "Sam: A sunset over the lake.", "Dana: Lovely colours, and the ledger?",
             "Sam: The currency import is retried by celery.", "Dana: Use a postgres advisory lock then."]
    for n in range(20):
        chain, step = divmod(n, 5)
        previous = f"m-c{chain}{step - 1:06x}" if step else None
        folder = "a-captures" if (n * 7) % 3 else "z-captures"  # the chain's turns spread over distant slices
        extra = "privacy: private\n" if n == 13 else ""
        write(root, f"{folder}/turn-{(n * 11) % 20:02d}.md", _turn(f"m-c{chain}{step:06x}", words[step], previous, extra))
    write(root, "zz/copy-of-a-turn.md", _turn("m-c0000002", "Sam: The same id, written later."))
    write(root, "history/broken.md", "---\ntitle: [unclosed\n---\nbroken\n")
    return root


@pytest.fixture
def vaults(hashing_example: Path, tmp_path: Path) -> tuple[Path, Path]:
    _mixed_vault(hashing_example)
    twin = tmp_path / "twin"
    shutil.copytree(hashing_example, twin, ignore=shutil.ignore_patterns(".memdir"))
    return hashing_example, twin


def test_a_build_in_slices_of_seven_files_equals_a_build_in_one(vaults: tuple[Path, Path], monkeypatch):
    sliced_root, whole_root = vaults
    files = len(list(sliced_root.rglob("*.md")))
    assert files > 50
    monkeypatch.setattr(index_module, "BUILD_SLICE", files + 1)
    whole = open_index(whole_root)
    monkeypatch.setattr(index_module, "BUILD_SLICE", 7)
    syncs = []
    original = index_module.Index.sync
    monkeypatch.setattr(index_module.Index, "sync", lambda self, *a, **k: syncs.append(a) or original(self, *a, **k))
    sliced = open_index(sliced_root)
    assert len(syncs) >= -(-files // 7)  # a sync per slice of files (and the owner's reconcile after)
    assert whole.previous_of("m-c1000003").id == "m-c1000002" and whole.problems()
    assert state(sliced) == state(whole)
    for query in QUERIES:
        assert top_ids(sliced, query, limit=8) == top_ids(whole, query, limit=8)
    sliced.close()
    whole.close()


def test_a_sliced_build_counts_the_vaults_files_and_texts_to_the_end(vaults: tuple[Path, Path], monkeypatch):
    root, _ = vaults
    files = len(list(root.rglob("*.md")))
    monkeypatch.setattr(index_module, "BUILD_SLICE", 7)
    seen: list[tuple[str, int, int]] = []
    build_generation(Vault(root), CachedEmbedder(HashingEmbedder(), None), Layout(root), lambda *step: seen.append(step))
    reading = [s for s in seen if s[0] == "reading"]
    embedding = [s for s in seen if s[0] == "embedding"]
    assert reading[-1] == ("reading", files, files) and all(total == files for _, _, total in reading)
    assert [done for _, done, _ in reading] == sorted(done for _, done, _ in reading)
    assert seen.index(embedding[0]) < seen.index(reading[-1])  # a slice is embedded before the next is read
    texts = embedding[-1][1]
    assert embedding[-1] == ("embedding", texts, texts) and texts > files
    assert [done for _, done, _ in embedding] == sorted(done for _, done, _ in embedding)
    assert all(done <= total for _, done, total in embedding)


def test_a_build_killed_between_slices_is_never_live_and_the_next_open_builds_it_whole(hashing_example: Path,
                                                                                       monkeypatch):
    _mixed_vault(hashing_example)
    monkeypatch.setattr(index_module, "BUILD_SLICE", 7)
    original = index_module.Index.sync
    calls = []

    def dies_on_the_third_slice(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the process killed between two slices
        return original(self, *args, **kwargs)

    monkeypatch.setattr(index_module.Index, "sync", dies_on_the_third_slice)
    with pytest.raises(KeyboardInterrupt):
        open_index(hashing_example)
    layout = Layout(hashing_example)
    assert layout.current() is None and not any(layout.base.glob("gen-*"))  # the half build went with it
    monkeypatch.setattr(index_module.Index, "sync", original)
    index = open_index(hashing_example)
    assert index.memory_count() == 36 + 20 and index.previous_of("m-c3000004").id == "m-c3000003"
    index.close()


def test_a_build_in_slices_keeps_the_garbage_collector_on(tmp_path: Path, monkeypatch):
    """A slice is many paths, as a pull is, but a pull's pause of the collector (every thread of the process) would
    last the whole build: slices of a build keep it on."""
    import gc

    root = tmp_path / "vault"
    plain_notes(root, 120)
    seen: list[bool] = []
    real = index_module.Index._sync

    def watched(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(index_module.Index, "_sync", watched)
    monkeypatch.setattr(index_module, "BUILD_SLICE", 60)  # two slices, each past READ_AHEAD_ABOVE (a pull's size)
    assert gc.isenabled()
    open_index(root).close()
    assert len(seen) >= 2 and all(seen), seen
