"""A pull that creates folders is read by walking those folders, not the vault.

The watcher names a folder that was created, moved in, moved away or removed; the live index brings that folder's
subtree in line (what is found below it, and what was indexed below it) and walks nothing else. At 100k memories the
whole-vault walk a created folder used to ask for was most of a pull's time to keyword-searchable (issue 32 item 4).
Every test ends equal to a rebuild. Real git, real watchdog; waits are bounded waits on the live index's syncs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from indexer import index as index_module
from indexer.live import LiveIndex
from indexer.settings import WatchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import fresh_rebuild, open_index, rebuilt_state, state

# watchdog 7.1 warns on its reader thread when `mkdir -p` races its recursive walk (see test_watcher.py)
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

TIMEOUT = 20.0
FAST = WatchSettings(debounce_seconds=0.1, max_wait_seconds=1.0, rescan_seconds=0.0)
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=60)


def shared_with_a_teammate(root: Path, remote: Path, teammate: Path) -> None:
    """The vault as it is committed and pushed to a bare `remote`, and a teammate's clone of it."""
    git(remote.parent, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main")
    git(teammate.parent, "clone", "-q", str(remote), str(teammate))


def wait_until(live: LiveIndex, predicate) -> None:  # type: ignore[no-untyped-def]
    seen = live.syncs
    while not predicate():
        assert live.wait_for_sync(seen, TIMEOUT), "the change never reached the index"
        seen = live.syncs


@pytest.fixture
def vault_walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every whole-vault walk the index makes from now on (the read-ahead's and the lock's)."""
    walks: list[str] = []
    real_walk = index_module.walk

    def counted(root: Path):  # type: ignore[no-untyped-def]
        walks.append(str(root))
        return real_walk(root)

    monkeypatch.setattr(index_module, "walk", counted)
    return walks


def served(root: Path, walks: list[str]) -> LiveIndex:
    index = open_index(root)
    live = LiveIndex(index, FAST).start()
    walks.clear()  # opening and the live index's first reconcile walk the vault, as they should
    return live


def close(live: LiveIndex) -> None:
    live.stop()
    live.index.close()


def rebuilt_in_place(root: Path) -> dict:
    """`state` of a rebuild of the vault where it is (a copy would turn its folder symlinks into folders)."""
    rebuilt = fresh_rebuild(root)
    try:
        return {k: v for k, v in state(rebuilt).items() if k != "vectors"}
    finally:
        rebuilt.close()


def ids_below(live: LiveIndex, folder: str) -> set[str]:
    return {m.id for m in live.index.all_memories() if m.path.startswith(folder + "/")}


def test_a_git_pull_that_creates_nested_folders_is_indexed_without_walking_the_vault(
        hashing_root: Path, tmp_path: Path, vault_walks: list[str]):
    remote, teammate = tmp_path / "remote.git", tmp_path / "teammate"
    for i in range(30):
        write(hashing_root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"postgres lock {i}"))
    shared_with_a_teammate(hashing_root, remote, teammate)
    pulled = {}
    for i in range(120):  # three levels of new folders, each with files of its own
        rel = f"pulled/team{i % 3}/week{i % 4}/p{i}.md" if i % 5 else f"pulled/team{i % 3}/p{i}.md"
        pulled[f"m-p{i:07x}"] = rel
        write(teammate, rel, memory_text(f"m-p{i:07x}", f"Pulled {i}", f"kafka offset {i}"))
    write(teammate, "history/n0.md", memory_text("m-00000000", "Note 0", "changed by a teammate"))
    (teammate / "history" / "n1.md").unlink()
    git(teammate, "add", "-A")
    git(teammate, "commit", "-qm", "a teammate's memories")
    git(teammate, "push", "-q", "origin", "main")

    live = served(hashing_root, vault_walks)
    try:
        git(hashing_root, "pull", "-q", "--ff-only", "origin", "main")
        wait_until(live, lambda: ids_below(live, "pulled") == set(pulled)
                   and "m-00000001" not in live.index
                   and "teammate" in live.index.memory("m-00000000").body)  # type: ignore[union-attr]
        assert vault_walks == []
        assert {live.index.memory(i).path for i in pulled} == set(pulled.values())  # type: ignore[union-attr]
        live.index.compact()
        after = {k: v for k, v in state(live.index).items() if k != "vectors"}
    finally:
        close(live)
    assert after == rebuilt_state(hashing_root, tmp_path)


def test_a_folder_moved_in_and_one_moved_out_are_indexed_without_walking_the_vault(
        hashing_root: Path, tmp_path: Path, vault_walks: list[str]):
    for i in range(10):
        write(hashing_root, f"history/old/n{i}.md", memory_text(f"m-{i:08x}", f"Old {i}", f"leaving {i}"))
        write(hashing_root, f"history/stay/s{i}.md", memory_text(f"m-s{i:07x}", f"Stay {i}", f"staying {i}"))
    outside = tmp_path / "outside"
    for i in range(10):  # written before any watch could see them
        write(outside, f"deep/er/b{i}.md", memory_text(f"m-b{i:07x}", f"Brought {i}", f"arriving {i}"))
    live = served(hashing_root, vault_walks)
    try:
        os.rename(hashing_root / "history" / "old", tmp_path / "gone")
        os.rename(outside, hashing_root / "history" / "brought")
        wait_until(live, lambda: len(ids_below(live, "history/brought")) == 10 and not ids_below(live, "history/old"))
        assert vault_walks == []
        assert len(ids_below(live, "history/stay")) == 10
        live.index.compact()
        after = {k: v for k, v in state(live.index).items() if k != "vectors"}
    finally:
        close(live)
    assert after == rebuilt_state(hashing_root, tmp_path)


def test_a_synced_folder_reached_through_a_symlink_reads_nothing_outside_the_vault(hashing_root: Path,
                                                                                    tmp_path: Path):
    secret = tmp_path / "private"
    write(secret, "secret.md", memory_text("m-5ec2e700", "Secret", "not for the vault"))
    write(secret, "sub/deeper.md", memory_text("m-5ec2e701", "Deeper", "not for the vault either"))
    write(hashing_root, "history/n0.md", memory_text("m-00000000", "Note 0", "inside"))
    index = open_index(hashing_root)
    try:
        (hashing_root / "history" / "linked").symlink_to(secret, target_is_directory=True)
        index.sync([], folders=["history/linked", "history/linked/sub", hashing_root / "history" / "linked"])
        assert "m-5ec2e700" not in index and "m-5ec2e701" not in index
        assert [m.id for m in index.all_memories()] == ["m-00000000"]
        after = {k: v for k, v in state(index).items() if k != "vectors"}
    finally:
        index.close()
    assert after == rebuilt_in_place(hashing_root)


def test_a_folder_replaced_by_a_symlink_drops_what_was_indexed_below_it(hashing_root: Path, tmp_path: Path):
    for i in range(3):
        write(hashing_root, f"history/team/t{i}.md", memory_text(f"m-{i:08x}", f"Team {i}", f"team note {i}"))
    index = open_index(hashing_root)
    try:
        shutil.move(hashing_root / "history" / "team", tmp_path / "team")
        (hashing_root / "history" / "team").symlink_to(tmp_path / "team", target_is_directory=True)
        index.sync([hashing_root / "history" / "team" / "t0.md"], folders=["history/team"])
        assert index.memory_count() == 0  # still readable through the link, but a vault walk does not follow it
        after = {k: v for k, v in state(index).items() if k != "vectors"}
    finally:
        index.close()
    assert after == rebuilt_in_place(hashing_root)
