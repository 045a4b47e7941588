"""The live index follows every way a file can change on disk and ends equal to a rebuild."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from indexer.live import LiveIndex
from indexer.settings import WatchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, state

TIMEOUT = 20.0
FAST = WatchSettings(debounce_seconds=0.1, max_wait_seconds=1.0, rescan_seconds=0.0)


@pytest.fixture
def live(hashing_root: Path):
    write(hashing_root, "history/note.md", memory_text("m-00000001", "Note", "original words"))
    index = open_index(hashing_root)
    with LiveIndex(index, FAST) as running:
        yield running
    index.close()


def wait_until(live: LiveIndex, predicate) -> None:
    seen = live.syncs
    while not predicate():
        assert live.wait_for_sync(seen, TIMEOUT), "the change never reached the index"
        seen = live.syncs


def equals_rebuild(live: LiveIndex) -> None:
    live.index.compact()
    current = state(live.index)
    scratch = live.index.root.parent / "rebuild"
    shutil.copytree(live.index.root, scratch, ignore=shutil.ignore_patterns(".memdir"))
    fresh = open_index(scratch)
    assert state(fresh) == current
    fresh.close()


def body_of(live: LiveIndex) -> str:
    memory = live.index.memory("m-00000001")
    return memory.body if memory else ""


def test_an_atomic_save_by_rename_is_indexed(live: LiveIndex):
    note = live.index.root / "history" / "note.md"
    temp = note.with_name(".note.md.tmp")
    temp.write_text(memory_text("m-00000001", "Note", "saved atomically"))
    os.replace(temp, note)
    wait_until(live, lambda: "saved atomically" in body_of(live))
    equals_rebuild(live)


def test_vims_backup_rename_dance_is_indexed(live: LiveIndex):
    note = live.index.root / "history" / "note.md"
    os.rename(note, note.with_name("note.md~"))
    note.write_text(memory_text("m-00000001", "Note", "saved by vim"))
    probe = note.with_name("4913")
    probe.write_text("")
    probe.unlink()
    note.with_name("note.md~").unlink()
    wait_until(live, lambda: "saved by vim" in body_of(live))
    equals_rebuild(live)


def test_an_in_place_write_is_indexed(live: LiveIndex):
    note = live.index.root / "history" / "note.md"
    with open(note, "w") as handle:
        handle.write(memory_text("m-00000001", "Note", "written in place"))
    wait_until(live, lambda: "written in place" in body_of(live))
    equals_rebuild(live)


def test_a_delete_and_a_move_out_of_the_vault_are_indexed(live: LiveIndex):
    (live.index.root / "history" / "note.md").unlink()
    wait_until(live, lambda: "m-00000001" not in live.index)
    equals_rebuild(live)


def test_a_200_file_git_checkout_ends_equal_to_a_rebuild(hashing_root: Path):
    root = hashing_root
    git = lambda *a: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=root,  # noqa: E731
                                    check=True, capture_output=True, text=True)
    for i in range(200):
        write(root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"postgres lock {i}"))
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "other")
    for i in range(200):
        write(root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"celery retry {i}"))
    git("commit", "-qam", "other")
    git("checkout", "-q", "main")
    index = open_index(root)
    with LiveIndex(index, FAST) as live:
        git("checkout", "-q", "other")
        wait_until(live, lambda: all("celery" in m.body for m in index.all_memories()))
        assert live.syncs <= 3
        equals_rebuild(live)
    index.close()


def test_a_saved_file_becomes_searchable(live: LiveIndex):
    from tests.indexer.helpers import top_ids

    write(live.index.root, "history/fresh.md", memory_text("m-000000fe", "Fresh", "zebra crossing protocol"))
    wait_until(live, lambda: "m-000000fe" in live.index)
    assert top_ids(live.index, "zebra crossing", limit=1) == ["m-000000fe"]
