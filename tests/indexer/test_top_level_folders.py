"""A served vault follows its top-level folders as they come, go and are renamed.

The watcher watches the vault folder alone and each top-level folder that is not a dot-folder on its own, so a
folder's watch is added or dropped as the folder arrives or leaves (indexer/folder_watches.py). These tests hold
the index to what the files say through those changes. Real watchdog; waits are bounded waits on the syncs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer.live import LiveIndex
from indexer.settings import WatchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, rebuilt_state, state

# watchdog 7.1 warns on its reader thread when `mkdir -p` races its recursive walk (see test_watcher.py)
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

TIMEOUT = 20.0
FAST = WatchSettings(debounce_seconds=0.1, max_wait_seconds=1.0, rescan_seconds=0.0)


def wait_until(live: LiveIndex, predicate) -> None:  # type: ignore[no-untyped-def]
    seen = live.syncs
    while not predicate():
        assert live.wait_for_sync(seen, TIMEOUT), "the change never reached the index"
        seen = live.syncs


def paths(live: LiveIndex) -> set[str]:
    return {m.path for m in live.index.all_memories()}


def found(live: LiveIndex, word: str) -> bool:
    return bool(live.index.keyword_search(word, 5))


@pytest.fixture
def live(hashing_root: Path):  # type: ignore[no-untyped-def]
    for i in range(3):
        write(hashing_root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"postgres vacuum{i}"))
    served = LiveIndex(open_index(hashing_root), FAST).start()
    yield served
    served.stop()
    served.index.close()


def test_a_note_saved_in_a_top_level_folder_made_after_start_is_indexed(live: LiveIndex):
    root = live.index.root
    seen = live.watcher.batches_delivered
    os.mkdir(root / "later")
    assert live.watcher.wait_for_batch(seen, TIMEOUT)  # the batch naming the folder: its watch is up
    write(root, "later/deep/er/n.md", memory_text("m-1a7e0000", "Later", "zookeeper quorum"))
    wait_until(live, lambda: "later/deep/er/n.md" in paths(live))
    assert found(live, "zookeeper")


def test_a_renamed_top_level_folder_keeps_its_notes_searchable_and_its_old_paths_go(
        live: LiveIndex, tmp_path: Path):
    root = live.index.root
    os.rename(root / "history", root / "archive")
    wait_until(live, lambda: paths(live) == {f"archive/n{i}.md" for i in range(3)})
    # after the rename, a save below the new name is seen under the new name (the old watch named it the old way)
    write(root, "archive/n0.md", memory_text("m-00000000", "Note 0", "rewritten kestrel"))
    write(root, "archive/new.md", memory_text("m-0e000000", "New", "arrived after the rename"))
    wait_until(live, lambda: found(live, "kestrel") and "archive/new.md" in paths(live))
    assert not any(p.startswith("history/") for p in paths(live))
    assert found(live, "vacuum1")
    live.index.compact()
    assert {k: v for k, v in state(live.index).items() if k != "vectors"} == rebuilt_state(root, tmp_path)


def test_a_folder_renamed_to_a_dot_name_leaves_the_index_and_comes_back_when_renamed_back(live: LiveIndex):
    root = live.index.root
    os.rename(root / "history", root / ".history")
    wait_until(live, lambda: not paths(live))
    os.rename(root / ".history", root / "history")
    wait_until(live, lambda: paths(live) == {f"history/n{i}.md" for i in range(3)})
    write(root, "history/back.md", memory_text("m-bac00000", "Back", "osprey"))  # and it is watched again
    wait_until(live, lambda: found(live, "osprey"))
