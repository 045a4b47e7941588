"""A first open that builds the index serves from the index that filled it, and catches up with the files changed
while it was built without reading the others again (issue 32 item 1: at 100k memories, opening the built generation
again rose 264 MB above the build's own peak, and reading every file again took 65 s)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import indexer.index as index_module
from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.indexer.helpers import plain_notes, state
from vault import Vault, atomic


def calls_to(monkeypatch, method: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    """The arguments of every call to Index.<method> from now on (each call still goes through)."""
    seen: list[tuple] = []
    real = getattr(Index, method)
    monkeypatch.setattr(Index, method, lambda self, *args: seen.append(args) or real(self, *args))
    return seen


def test_a_fresh_build_is_served_by_the_index_that_filled_it_and_equals_its_generation_read_from_disk(
        tmp_path: Path, monkeypatch):
    root = tmp_path / "vault"
    plain_notes(root, 70, ", about the ledger")
    loads = calls_to(monkeypatch, "_load")
    monkeypatch.setattr(index_module, "BUILD_SLICE", 30)
    built = Index.open(Vault(root), HashingEmbedder())
    try:
        assert len(loads) == 1, loads  # the empty generation it filled; the built one is not read again
        reread = Index(Vault(root), HashingEmbedder(), built.generation, writable=False)
        assert state(built) == state(reread)
        assert built.memory_count() == 70 and built.keyword_search("ledger", 5)
        reread.close()
    finally:
        built.close()


def test_the_open_after_a_fresh_build_reads_again_only_the_files_changed_while_it_built(tmp_path: Path, monkeypatch):
    root = tmp_path / "vault"
    plain_notes(root, 60)
    an_hour_ago = time.time() - 3600  # past the racy window: a file saved this second is read again anyway
    for file in root.rglob("*.md"):
        os.utime(file, (an_hour_ago, an_hour_ago))
    edited, added = root / "notes" / "n0.md", root / "notes" / "zz-new.md"
    reads: dict[str, int] = {}
    real_read = atomic.read_bytes

    def counted(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        reads[Path(path).name] = reads.get(Path(path).name, 0) + 1
        return real_read(path, *args, **kwargs)

    def edits_during_the_second_slice(stage: str, done: int, total: int) -> None:
        if stage == "reading" and done > 20 and not added.exists():  # n0.md was read and indexed by the first slice
            edited.write_text("---\nid: m-00000000\ntitle: note 0\n---\nrewritten while the build ran, about a kiln\n")
            added.write_text("---\nid: m-new\ntitle: new\n---\nwritten while the build ran, about a glaze\n")

    monkeypatch.setattr(atomic, "read_bytes", counted)
    monkeypatch.setattr(index_module, "BUILD_SLICE", 20)
    index = Index.open(Vault(root), HashingEmbedder(), progress=edits_during_the_second_slice)
    try:
        assert [index.chunk_owner(hit.chunk_id)[0] for hit in index.keyword_search("kiln", 5)] == ["m-00000000"]
        assert [index.chunk_owner(hit.chunk_id)[0] for hit in index.keyword_search("glaze", 5)] == ["m-new"]
        assert index.memory_count() == 61
        assert reads["n0.md"] == 2 and reads["zz-new.md"] == 1
        again = sorted(name for name, count in reads.items() if count > 1 and name != "n0.md")
        assert not again, f"read again after the build: {again[:5]} ({len(again)} files)"
    finally:
        index.close()


def test_a_reindex_without_a_server_counts_the_index_it_filled_without_loading_it_again(tmp_path: Path, monkeypatch):
    from indexer.rebuild import rebuild

    root = tmp_path / "vault"
    plain_notes(root, 40)
    Index.open(Vault(root), HashingEmbedder()).close()  # an index to rebuild
    loads = calls_to(monkeypatch, "_load")
    report = rebuild(Vault(root), HashingEmbedder())
    assert len(loads) == 1, loads  # the empty generation it filled
    assert (report.memories, report.chunks, report.problems) == (40, 40, 0)


def test_the_open_after_a_fresh_build_has_nothing_to_heal_and_leaves_its_deferred_vectors_to_the_backfill(
        tmp_path: Path, monkeypatch):
    root = tmp_path / "vault"
    plain_notes(root, 120, ", about the ledger")
    heals = calls_to(monkeypatch, "heal")
    monkeypatch.setattr(index_module, "BUILD_SLICE", 100)  # a slice past DEFER_ABOVE units, and a small one
    index = Index.open(Vault(root), HashingEmbedder(), defer_embedding=True)
    try:
        assert heals == []  # nothing crashed between the fill and the open
        waiting = index.waiting_units()
        assert waiting > 0  # slices past DEFER_ABOVE units left their vectors for the backfill, queued by the syncs
        while index.backfill(limit=64):
            pass
        assert index.waiting_units() == 0 and index.unit_count() == len(index._vectors.ids())
    finally:
        index.close()
    Index.open(Vault(root), HashingEmbedder()).close()
    assert len(heals) == 1  # an open of a generation built earlier heals what a crash may have left
