"""A full disk is named as such, leaves no half-built generation behind and never makes a done delete look failed."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from indexer.curator import Curator
from indexer.embed import HashingEmbedder
from indexer.index import Index
from indexer.keyword import KeywordIndex
from indexer.manifest import Manifest
from indexer.rebuild import reindex
from tests.conftest import memory_text, write
from tests.reliability.harness import index_litter, new_vault
from vault import Vault
from vault.errors import DiskFullError
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings


def sqlite_full(*args, **kwargs):
    raise sqlite3.OperationalError("database or disk is full")  # what SQLite raises on ENOSPC


def whoosh_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def opened(tmp_path: Path):
    root = new_vault(tmp_path / "v")
    for n in range(3):
        write(root, f"history/m{n}.md", memory_text(f"m-0000000{n}", f"Note {n}", f"body of note {n} about locks"))
    index = Index.open(Vault(root), HashingEmbedder())
    yield root, index, Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
    index.close()


@pytest.mark.parametrize("where, full", [(Manifest, sqlite_full), (KeywordIndex, whoosh_full)])
def test_a_reindex_that_meets_a_full_disk_says_so_and_leaves_no_partial_generation(opened, monkeypatch, where, full):
    root, index, _ = opened
    monkeypatch.setattr(where, "write" if where is Manifest else "replace", full)
    with pytest.raises(DiskFullError, match=r"disk full: could not write .*gen-"):
        reindex(index)
    monkeypatch.undo()
    assert index_litter(root) == []  # only the live generation is left
    assert len(list((root / ".memdir" / "index").glob("gen-*"))) == 1
    assert sorted(index.memory_ids()) == ["m-00000000", "m-00000001", "m-00000002"]  # still served


def test_an_add_on_a_full_disk_is_a_typed_error_that_names_the_saved_file(opened, monkeypatch):
    root, _, curator = opened
    monkeypatch.setattr(Manifest, "write", sqlite_full)
    with pytest.raises(DiskFullError) as refused:
        curator.add("Deploys need the release tag.", type="fact")
    message = str(refused.value)
    assert message.startswith("disk full: could not write ") and "/.memdir/index/gen-" in message
    assert "was saved to memory_bank/" in message
    saved = message.split("was saved to ")[1].split(";")[0]
    assert (root / saved).is_file()


def test_a_delete_whose_index_update_meets_a_full_disk_reports_the_delete_it_did(opened, monkeypatch):
    root, _, curator = opened
    monkeypatch.setattr(Manifest, "write", sqlite_full)
    destination = curator.delete("m-00000001")
    assert (root / destination).is_file() and not (root / "history/m1.md").exists()


def test_an_add_whose_embedding_cache_meets_a_full_disk_is_still_written_and_found(opened):
    # The cache is a speed-up: on a full disk its SQLite write failed every add with a raw OperationalError (a
    # ServerError through the server), before the memory's own write could say whether there was room for it.
    root, index, curator = opened
    cache = index.embedder._db
    pages = cache.execute("PRAGMA page_count").fetchone()[0]
    cache.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own SQLITE_FULL, as on a full disk
    memory = curator.add("Deploys need the release tag before the build.", type="fact").memory
    assert index.get(memory.id).title.startswith("Deploys need the release tag")


def test_a_rebuild_on_a_full_disk_names_it_without_a_traceback_from_the_embedding_cache(tmp_path: Path, monkeypatch):
    # On a full tmpfs `memdir reindex` died in `sqlite3.OperationalError: disk I/O error` from opening the embedding
    # cache (a speed-up), before the build could say the disk is full and keep the live index.
    import shutil
    from collections import namedtuple

    from indexer.rebuild import rebuild

    root = new_vault(tmp_path / "v")
    write(root, "history/m.md", memory_text("m-00000001", "Note", "body of a note about locks"))
    (root / ".memdir" / "cache" / "embeddings.sqlite").mkdir(parents=True)  # a cache SQLite cannot open
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(3 << 20, 3 << 20, 0))
    monkeypatch.setattr(Manifest, "write", sqlite_full)
    with pytest.raises(DiskFullError, match="disk full"):
        rebuild(Vault(root), HashingEmbedder())
