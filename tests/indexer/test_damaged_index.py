"""An index file that does not load (a truncated FAISS file or Whoosh segment) is moved aside and rebuilt
from the files; a failed open never keeps the index lock, so `memdir reindex` is never refused for it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from indexer.generations import Layout
from indexer.index import Index, IndexUnusable
from indexer.rebuild import rebuild
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import HashingEmbedder, open_index
from vault import Vault
from vault.errors import DiskFullError


def _vault_with_an_index(root: Path) -> Path:
    write(root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    write(root, "history/b.md", memory_text("m-0000000b", "Beta", "beta: pin the uv version in CI"))
    open_index(root).close()
    return Layout(root).current()


def _on_a_full_disk(patch: pytest.MonkeyPatch) -> None:
    """As on a full 3 MB tmpfs: no free space, and SQLite cannot grow the manifest's -shm ("disk I/O error")."""
    import shutil
    import sqlite3
    from collections import namedtuple

    from indexer import index as index_module

    real = index_module.Manifest

    def no_shm(path, owner=True, shared_memory=True):
        if shared_memory:
            raise sqlite3.OperationalError("disk I/O error")
        return real(path, owner=owner, shared_memory=shared_memory)

    usage = namedtuple("usage", "total used free")
    patch.setattr(shutil, "disk_usage", lambda path: usage(3 << 20, 3 << 20, 0))
    patch.setattr(index_module, "Manifest", no_shm)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 3)])


def _segments(generation: Path) -> list[Path]:
    return sorted(p for p in (generation / "keyword").iterdir() if p.suffix in (".seg", ".toc") or "_" in p.name)


# Whoosh leaves the file of a segment it cannot read unclosed; the collector closes it later, with a warning.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("damage", ["vectors", "keyword"])
def test_a_damaged_index_file_is_quarantined_and_the_vault_is_rebuilt_from_its_files(hashing_root: Path, damage: str):
    generation = _vault_with_an_index(hashing_root)
    targets = [generation / "vectors.faiss"] if damage == "vectors" else _segments(generation)
    assert targets
    for path in targets:
        _truncate(path)
    index = open_index(hashing_root)
    try:
        hits = Searcher(index, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="celery"))
        assert hits and hits[0].memory.id == "m-0000000a"
        assert Layout(hashing_root).current() != generation
    finally:
        index.close()
    quarantined = list((hashing_root / ".memdir" / "quarantine").iterdir())
    assert [p.name.startswith(generation.name) for p in quarantined] == [True]
    gc.collect()  # that file's warning here, where it is expected, not in whichever test the collector next runs in


def test_a_failed_open_leaves_the_index_lock_free_for_reindex(hashing_root: Path, monkeypatch):
    generation = _vault_with_an_index(hashing_root)
    _truncate(generation / "vectors.faiss")

    def no_rebuild(*args, **kwargs):
        raise OSError("the rebuild failed too")

    monkeypatch.setattr("indexer.index.build_index", no_rebuild)
    with pytest.raises(OSError):
        Index.open(Vault(hashing_root), HashingEmbedder())
    owner = Layout(hashing_root).try_own()
    assert owner is not None  # before: held by the failed open until the process ended
    owner.release()
    monkeypatch.undo()
    assert rebuild(Vault(hashing_root), HashingEmbedder()).memories == 2


def test_a_reader_that_meets_a_damaged_index_says_what_to_do(hashing_root: Path):
    generation = _vault_with_an_index(hashing_root)
    _truncate(generation / "vectors.faiss")
    owner = Layout(hashing_root).try_own()  # another process owns the index
    try:
        with pytest.raises(IndexUnusable, match="does not load"):
            Index.open(Vault(hashing_root), HashingEmbedder())
    finally:
        owner.release()


def _written_after_deleting(root: Path, folder: str) -> Index:
    """A running index whose `folder` was deleted under it, after a memory was written and synced."""
    import shutil

    _vault_with_an_index(root)
    index = open_index(root)
    try:
        shutil.rmtree(root / folder)
        write(root, "history/c.md", memory_text("m-0000000c", "Gamma", "gamma: the nightly export runs at three"))
        index.sync(["history/c.md"])
    except BaseException:
        index.close()
        raise
    return index


def test_an_index_folder_deleted_under_a_running_index_is_rebuilt_on_the_next_write(hashing_root: Path):
    # `rm -rf .memdir/index` or `git clean -fdX` while a server runs: every add failed (FileNotFoundError on
    # Whoosh's write lock) while its file was written, until the server was restarted.
    index = _written_after_deleting(hashing_root, ".memdir/index")
    try:
        hits = Searcher(index, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="nightly export"))
        assert hits and hits[0].memory.id == "m-0000000c"
        assert index.generation.is_dir() and Layout(hashing_root).current() == index.generation
    finally:
        index.close()


def test_a_running_index_whose_lock_file_was_deleted_with_its_folder_keeps_the_index_its_own(hashing_root: Path):
    # `git clean -fdX` deletes .memdir/index.lock too: the running owner's flock then held a file nobody else could
    # see, and the next process to open the vault owned the index beside it, both writing one generation.
    index = _written_after_deleting(hashing_root, ".memdir")
    try:
        assert Layout(hashing_root).try_own() is None, "a second process would own the index too"
        assert index.memory("m-0000000c") is not None
    finally:
        index.close()
    assert Layout(hashing_root).try_own() is not None, "closed: the index is free again"


def test_an_index_that_does_not_open_on_a_full_disk_is_kept_and_the_full_disk_named(hashing_root: Path, monkeypatch):
    # On a full tmpfs SQLite opens the manifest with "disk I/O error" (its -shm file cannot grow): the open took the
    # sound index for damage, moved it to quarantine and then could not build another; after space was freed the
    # whole vault had to be indexed (embedded) again.
    import shutil
    import sqlite3
    from collections import namedtuple

    generation = _vault_with_an_index(hashing_root)

    def no_shm(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(3 << 20, 3 << 20, 0))
    monkeypatch.setattr("indexer.index.Manifest", no_shm)
    with pytest.raises(DiskFullError, match="disk full"):
        open_index(hashing_root)
    assert Layout(hashing_root).current() == generation and not (hashing_root / ".memdir" / "quarantine").exists()
    monkeypatch.undo()
    index = open_index(hashing_root)  # once there is room, the same index opens
    try:
        assert index.generation == generation and index.memory_count() == 2
    finally:
        index.close()


def test_a_command_on_a_full_disk_searches_the_index_read_only_and_a_server_is_still_told(hashing_root: Path,
                                                                                        monkeypatch):
    # A search on a full disk failed too (s19): SQLite maps a -shm file into every WAL connection, and cannot grow
    # it. Copied into memory (Manifest, shared_memory=False) the manifest reads; a server does not open that way.
    generation = _vault_with_an_index(hashing_root)
    _on_a_full_disk(monkeypatch)
    with pytest.raises(DiskFullError, match="disk full"):
        open_index(hashing_root)
    index = Index.open(Vault(hashing_root), HashingEmbedder(), read_when_full=True)
    try:
        hits = Searcher(index, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="celery retries"))
        assert [hit.memory.id for hit in hits][:1] == ["m-0000000a"]
        assert not index.writable and index.generation == generation
        assert Layout(hashing_root).try_own() is None, "the command keeps the index's ownership meanwhile"
    finally:
        index.close()
    assert not (hashing_root / ".memdir" / "quarantine").exists()


def test_while_a_command_reads_the_index_on_a_full_disk_another_process_reader_still_reads_it(hashing_root: Path,
                                                                                              monkeypatch):
    # The command's manifest in exclusive locking mode held its file lock till the command ended: a second server
    # reading the same vault met "database is locked" and reported the index unusable meanwhile (s20's leftover 4).
    _vault_with_an_index(hashing_root)
    with monkeypatch.context() as full:
        _on_a_full_disk(full)
        command = Index.open(Vault(hashing_root), HashingEmbedder(), read_when_full=True)
    try:
        assert not command.writable
        reader = Index.open(Vault(hashing_root), HashingEmbedder(), writable=False)
        try:
            hits = Searcher(reader, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="celery retries"))
            assert [hit.memory.id for hit in hits][:1] == ["m-0000000a"]
        finally:
            reader.close()
        hits = Searcher(command, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="pin uv"))
        assert [hit.memory.id for hit in hits][:1] == ["m-0000000b"]
    finally:
        command.close()
