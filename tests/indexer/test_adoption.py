"""An index built by a memdir from before stamps is checked and adopted, not rebuilt; one whose files are not what
memdir writes is rebuilt, and no read of a keyword index runs code a pickle names (indexer/adoption.py,
indexer/safe_pickle.py)."""

from __future__ import annotations

import os
import pickle
import sqlite3
from pathlib import Path

import faiss
import numpy as np
import pytest

from indexer.generations import Layout
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, rebuilt_state, state, top_ids
from tests.test_carried_state import Planted, plant_in_toc
from vault import state_stamp


def _built_before_stamps(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vault indexed by a memdir that kept no stamp key (as every memdir before stamps), then the upgraded memdir's
    key made: the live generation, older than the key."""
    write(root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    write(root, "history/b.md", memory_text("m-0000000b", "Beta", "beta: pin the uv version in CI [[m-0000000a]]"))
    with monkeypatch.context() as before:
        before.setattr(state_stamp, "_key_at", None)
        open_index(root).close()
    generation = Layout(root).current()
    assert generation is not None and not (generation / state_stamp.STAMP_NAME).exists()
    key = root.parent / "upgraded-state" / "index-stamp.key"
    _after(generation / "meta.json", key.parent)
    monkeypatch.setattr(state_stamp, "_key_at", key)
    assert state_stamp.user_key() is not None and state_stamp.older_than_key(generation / "meta.json")
    return generation


def _after(made: Path, folder: Path) -> None:
    """Wait, bounded, until the file system's clock (coarse: a few ms a tick) is past `made`'s change time, so that a
    file made now is later than it."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / ".clock"
    for _ in range(100_000):
        probe.write_bytes(b"")
        if os.stat(probe).st_ctime_ns > os.stat(made).st_ctime_ns:
            probe.unlink()
            return
    pytest.fail("the file system's clock did not move")


@pytest.mark.parametrize("older_server_running", [False, True])
def test_an_index_built_before_stamps_is_adopted_and_stamped_not_rebuilt(
        hashing_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, older_server_running: bool):
    generation = _built_before_stamps(hashing_root, monkeypatch)
    if older_server_running:  # it owns the index as the upgraded memdir opens, and lets go while that one waits
        held, asked = Layout(hashing_root).try_own(), []
        real = Layout.try_own

        def try_own(layout: Layout):
            asked.append(layout)
            if len(asked) == 2:  # the wait's first look
                held.release()
            return real(layout)

        monkeypatch.setattr(Layout, "try_own", try_own)
    index = open_index(hashing_root)
    try:
        assert index.generation == generation and Layout(hashing_root).current() == generation
        assert (generation / state_stamp.STAMP_NAME).exists()
        assert top_ids(index, "celery")[0] == "m-0000000a"
        write(hashing_root, "history/c.md", memory_text("m-0000000c", "Gamma", "gamma: celery beat schedules"))
        index.sync(["history/c.md"])
        assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(hashing_root, tmp_path)
    finally:
        index.close()
    again = open_index(hashing_root)  # its own from then on
    try:
        assert again.generation == generation
    finally:
        again.close()


def test_an_unstamped_index_that_came_after_the_users_key_is_rebuilt_though_its_files_are_memdirs(
        hashing_root: Path, monkeypatch: pytest.MonkeyPatch):
    """An index unpacked or copied in after this user's key was made is not this user's from before stamps: its files
    may be memdir's shape and still hold vectors planted for other text (s23-attack23), so it is rebuilt."""
    assert state_stamp.user_key() is not None
    _after(state_stamp._key_at, hashing_root.parent)  # type: ignore[arg-type]
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    with monkeypatch.context() as elsewhere:  # built by a memdir without this user's key: another user's, an archive's
        elsewhere.setattr(state_stamp, "_key_at", None)
        open_index(hashing_root).close()
    generation = Layout(hashing_root).current()
    assert generation is not None and not state_stamp.older_than_key(generation / "meta.json")
    index = open_index(hashing_root)
    try:
        assert index.generation != generation and not generation.exists()
        assert top_ids(index, "celery")[0] == "m-0000000a"
    finally:
        index.close()


def _extra_trigger(generation: Path, marker: Path) -> None:
    db = sqlite3.connect(generation / "manifest.sqlite")
    db.execute("CREATE TRIGGER planted AFTER INSERT ON files BEGIN DELETE FROM files; END")
    db.commit()
    db.close()


def _another_faiss_index(generation: Path, marker: Path) -> None:
    other = faiss.IndexIDMap2(faiss.IndexFlatL2(256))
    other.add_with_ids(np.ones((2, 256), dtype=np.float32), np.array([1, 2], dtype=np.int64))
    faiss.write_index(other, str(generation / "vectors.faiss"))


def _faiss_with_bytes_after(generation: Path, marker: Path) -> None:
    with (generation / "vectors.faiss").open("ab") as handle:
        handle.write(b"\0" * 8)


def _symlinked_faiss(generation: Path, marker: Path) -> None:
    target = generation.parent / "elsewhere.faiss"
    os.replace(generation / "vectors.faiss", target)
    os.symlink(target, generation / "vectors.faiss")


@pytest.mark.parametrize("change", [plant_in_toc, _extra_trigger, _another_faiss_index, _faiss_with_bytes_after,
                                    _symlinked_faiss])
def test_an_unstamped_index_whose_files_are_not_what_memdir_writes_is_rebuilt_and_runs_nothing(
        hashing_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change):
    generation = _built_before_stamps(hashing_root, monkeypatch)
    marker = tmp_path / "RAN"
    change(generation, marker)
    index = open_index(hashing_root)
    try:
        assert not marker.exists()
        assert index.generation != generation and not generation.exists()
        assert top_ids(index, "celery")[0] == "m-0000000a"
    finally:
        index.close()


# Whoosh leaves the table of contents it could not read unclosed; the collector closes it later, with a warning.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_keyword_index_whose_pickle_names_other_code_does_not_load_even_when_stamped(
        hashing_root: Path, tmp_path: Path):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    open_index(hashing_root).close()
    generation = Layout(hashing_root).current()
    marker = tmp_path / "RAN"
    plant_in_toc(generation, marker)  # the stamp still checks: it covers the meta, not every file
    index = open_index(hashing_root)
    try:
        assert not marker.exists(), "a pickle in the keyword index ran"
        assert index.generation != generation  # did not load: moved aside, rebuilt
        assert top_ids(index, "celery")[0] == "m-0000000a"
    finally:
        index.close()


def test_every_pickle_reader_whoosh_binds_is_the_restricted_one():
    """Whoosh copies `pickle.loads` into its modules at import: a copy left unreplaced would read unrestricted."""
    import _pickle
    import importlib
    import pkgutil
    import warnings

    import whoosh

    from indexer import keyword  # noqa: F401  (installs the restricted readers)
    from indexer import safe_pickle

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Whoosh's bundled pyparsing imports deprecated modules
        for found in pkgutil.walk_packages(whoosh.__path__, "whoosh."):
            try:
                importlib.import_module(found.name)
            except ImportError:  # Python 2 or App Engine modules this Whoosh ships but cannot import
                continue
    safe_pickle.install()
    unrestricted = [(name, attribute) for name, module in list(__import__("sys").modules.items())
                    if name.startswith("whoosh") and module is not None
                    for attribute, value in vars(module).items()
                    if value is pickle or value in (pickle.loads, pickle.load, _pickle.loads, _pickle.load)]
    assert unrestricted == []
    assert not importlib.import_module("whoosh.index").toc_loaders  # older TOCs: a renaming unpickler of their own
    with pytest.raises(safe_pickle.RefusedPickle):
        safe_pickle.loads(pickle.dumps(Planted(Path("/nonexistent/RAN"))))
