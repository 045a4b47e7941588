"""Files whose mtime changed but whose content did not (a copy without -p, a restore, a checkout back and forth): a
whole-vault sync records their new stat and parses none of them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer import index as index_module
from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.conftest import memory_text, write
from tests.reliability.harness import new_vault
from vault import Vault

from .helpers import rebuilt_state, state

COUNT = 60  # past READ_AHEAD_ABOVE, as a vault's reconcile is


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = new_vault(tmp_path / "vault")
    for n in range(COUNT):
        write(folder, f"history/m{n:02}.md", memory_text(f"m-000000{n:02}", f"Note {n}", f"body of note {n} about locks"))
    return folder


def touch_every_file(root: Path) -> int:
    """A new mtime for every memory file, two seconds on (past the racy window), content unchanged."""
    later = max(path.stat().st_mtime_ns for path in root.rglob("*.md")) + 2_000_000_000
    for path in root.rglob("*.md"):
        os.utime(path, ns=(later, later))
    return later


def counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = index_module._parse

    def parse(vault, data, rel):  # type: ignore[no-untyped-def]
        parsed.append(rel)
        return real(vault, data, rel)

    monkeypatch.setattr(index_module, "_parse", parse)
    return parsed


def test_a_reconcile_after_every_file_was_touched_parses_none_and_records_the_new_stats(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    index = Index.open(Vault(root), HashingEmbedder())
    before = state(index)
    later = touch_every_file(root)
    parsed = counting_parses(monkeypatch)
    index.sync()
    assert parsed == []  # read and hashed ahead of the lock: the manifest's content, so nothing to parse or keep
    assert {index._entries[f"history/m{n:02}.md"].mtime_ns for n in range(COUNT)} == {later}
    assert state(index) == before
    assert {k: v for k, v in before.items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


def test_a_touched_file_that_also_changed_is_parsed_and_indexed_as_it_is_now(root: Path, monkeypatch: pytest.MonkeyPatch):
    index = Index.open(Vault(root), HashingEmbedder())
    write(root, "history/m07.md", memory_text("m-00000007", "Note 7", "body of note 7 about the heron queue"))
    touch_every_file(root)
    parsed = counting_parses(monkeypatch)
    index.sync()
    assert parsed == ["history/m07.md"]
    assert "heron queue" in index.memory("m-00000007").body
    index.close()


def test_a_reopened_index_records_touched_files_without_decoding_a_row_or_building_the_graph(
        root: Path, tmp_path: Path):
    Index.open(Vault(root), HashingEmbedder()).close()
    index = Index.open(Vault(root), HashingEmbedder())  # its rows held undecoded, its links read from the table
    undecoded = index._entries._undecoded
    later = touch_every_file(root)
    index.sync()
    assert index._entries._undecoded == undecoded == COUNT  # each row patched where it lies
    assert index._graph is None
    assert {index._entries.recorded(f"history/m{n:02}.md")[1] for n in range(COUNT)} == {later}
    memory = index.memory("m-00000003")  # one decoding still serves both tables
    assert memory is index._entries["history/m03.md"].memory
    assert index._entries["history/m03.md"].mtime_ns == later
    index.close()
    reopened = Index.open(Vault(root), HashingEmbedder())
    assert {entry.mtime_ns for entry in reopened.manifest.entries()} == {later}  # written, so not looked at again
    assert {k: v for k, v in state(reopened).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    reopened.close()


def test_a_reopened_index_with_touched_files_and_one_changed_link_indexes_the_change_and_its_links(
        root: Path, tmp_path: Path):
    Index.open(Vault(root), HashingEmbedder()).close()
    index = Index.open(Vault(root), HashingEmbedder())
    write(root, "history/m07.md", memory_text("m-00000007", "Note 7", "body of note 7, see [[m-00000011]]"))
    touch_every_file(root)
    index.sync()
    assert index._graph is not None  # built before the change, from the memories as they were
    assert index._entries._undecoded < COUNT
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


def test_the_read_ahead_keeps_each_touched_files_digest_not_its_bytes(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    index = Index.open(Vault(root), HashingEmbedder())
    write(root, "history/m07.md", memory_text("m-00000007", "Note 7", "body of note 7 about the heron queue"))
    touch_every_file(root)
    reads: list[dict] = []
    real = Index._read_ahead

    def read_ahead(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        found = real(self, *args, **kwargs)
        reads.append(dict(found))  # the sync pops each as it looks at its file
        return found

    monkeypatch.setattr(Index, "_read_ahead", read_ahead)
    index.sync()
    held = [getattr(read, name) for found in reads for read in found.values() for name in read.__dataclass_fields__]
    assert [len(found) for found in reads] == [COUNT]  # every touched file was read ahead of the lock
    assert not any(isinstance(value, bytes) for value in held)  # until the lock: a digest each, not the file again
    assert "heron queue" in index.memory("m-00000007").body
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()
