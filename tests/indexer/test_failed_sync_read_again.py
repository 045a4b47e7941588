"""A sync that fails after it read its files (a keyword stage or commit, the model, a full disk) leaves them to the next
sync, whatever paths that one is given: its new memory, its edit and its delete are in every index after the next
sync, without reopening it (review of session 8: they were unsearchable until the next owner's heal)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from indexer.embed import HashingEmbedder
from indexer.group_sync import GroupSync
from indexer.index import Index
from indexer.keyword import KeywordIndex
from indexer.manifest import Manifest
from tests.conftest import memory_text, write
from tests.reliability.harness import new_vault
from vault import Vault

from .helpers import rebuilt_state, state, top_ids


class Failed(Exception):
    pass


def fail_once(monkeypatch, owner: object, name: str, error: Exception) -> list[int]:
    """`owner.name` raises `error` on its first call, then works; returns the calls made."""
    real = getattr(owner, name)
    calls: list[int] = []

    def once(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 1:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, once)
    return calls


def stage_fails(index: Index, monkeypatch) -> list[int]:
    """Staging the batch's keyword documents fails while an earlier sync commits its big keyword write."""
    index._keyword_writing = True  # the earlier write under way: the batch is staged before it waits
    calls = fail_once(monkeypatch, KeywordIndex, "stage_ahead", Failed("stage"))
    real = KeywordIndex.stage_ahead

    def staged_once(*args, **kwargs):  # type: ignore[no-untyped-def]
        index._keyword_writing = False  # the earlier write is done once this batch has been staged
        return real(*args, **kwargs)

    monkeypatch.setattr(KeywordIndex, "stage_ahead", staged_once)
    return calls


FAILURES = {
    "keyword stage": stage_fails,
    "keyword commit": lambda index, mp: fail_once(mp, KeywordIndex, "replace", Failed("commit")),
    "model": lambda index, mp: fail_once(mp, HashingEmbedder, "embed", Failed("model")),
    "full disk": lambda index, mp: fail_once(mp, Manifest, "write", sqlite3.OperationalError("database or disk is full")),
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = new_vault(tmp_path / "vault")
    for n in range(4):
        write(folder, f"history/m{n}.md", memory_text(f"m-0000000{n}", f"Note {n}", f"body of note {n} about locks"))
    return folder


@pytest.mark.parametrize("failure", FAILURES)
def test_a_sync_that_failed_after_reading_its_files_leaves_them_to_the_next_sync(root: Path, tmp_path: Path,
                                                                                 monkeypatch, failure: str):
    index = Index.open(Vault(root), HashingEmbedder())
    write(root, "history/heron.md", memory_text("m-heron", "Heron cache", "The heron cache is warmed before deploys."))
    write(root, "history/m1.md", memory_text("m-00000001", "Note 1", "body of note 1 about the osprey queue"))
    (root / "history/m2.md").unlink()
    changed = ["history/heron.md", "history/m1.md", "history/m2.md"]
    calls = FAILURES[failure](index, monkeypatch)
    with pytest.raises(Exception):
        index.sync(changed)
    assert calls  # it failed where it was meant to
    write(root, "history/later.md", memory_text("m-later", "Later", "A later note about lunch."))
    index.sync(["history/later.md"])  # the watcher's next batch: another file
    assert top_ids(index, "heron cache warmed")[0] == "m-heron"
    assert top_ids(index, "osprey queue")[0] == "m-00000001"
    assert "m-00000002" not in index
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    assert set(index._vectors.ids()) == {unit for unit, _ in index.unit_owners()}
    index.close()


def test_captures_whose_group_sync_failed_are_searchable_after_the_next_capture(root: Path, monkeypatch):
    index = Index.open(Vault(root), HashingEmbedder(), defer_embedding=True)
    group = GroupSync(index)
    fail_once(monkeypatch, KeywordIndex, "replace", Failed("commit"))
    write(root, "history/heron.md", memory_text("m-heron", "Heron cache", "The heron cache is warmed before deploys."))
    with pytest.raises(Failed):
        group.sync(["history/heron.md"])
    write(root, "history/later.md", memory_text("m-later", "Later", "A later note about lunch."))
    group.sync(["history/later.md"])
    hits = index.keyword_search("heron cache warmed", 3)
    assert hits and index.chunk_owner(hits[0].chunk_id)[0] == "m-heron"  # type: ignore[index]
    index.close()
