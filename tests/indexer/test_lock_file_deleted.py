"""At most one process owns an index, even after its lock file was deleted under the owner (`rm -rf .memdir`,
`git clean -fdX` while a server runs): the owner's flock stayed on the deleted file, the next write made a new
lock file nobody held, and a second process (a CLI write, a second server) took the index beside the first."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from indexer.index import IndexUnusable
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index

REPO = Path(__file__).resolve().parents[2]
# Another memdir process asking for the index, the way every opening process does (Layout.try_own); it keeps what it
# got until its stdin closes.
ASK = """
import sys
from pathlib import Path
from indexer.generations import Layout
owner = Layout(Path(sys.argv[1])).try_own()
print("owns" if owner is not None else "refused", flush=True)
sys.stdin.read()
"""


class OtherProcess:
    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", ASK, str(root)], cwd=REPO, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)
        assert self.process.stdout is not None and self.process.stdin is not None
        self.answer = self.process.stdout.readline().decode().strip()

    def exit(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


@pytest.fixture
def other():
    started: list[OtherProcess] = []
    yield lambda root: started.append(OtherProcess(root)) or started[-1]
    for process in started:
        if process.process.poll() is None:
            process.exit()


def test_after_memdir_is_deleted_a_second_process_is_refused_the_index_before_and_after_the_owner_writes_again(
        hashing_root: Path, other):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    index = open_index(hashing_root)
    try:
        shutil.rmtree(hashing_root / ".memdir")
        assert other(hashing_root).answer == "refused"  # before: "owns", beside this process (the vault folder's flock)
        write(hashing_root, "history/b.md", memory_text("m-0000000b", "Beta", "beta: written after the rm"))
        index.sync(["history/b.md"])
        assert other(hashing_root).answer == "refused"
        assert index.writable and (hashing_root / ".memdir" / "index.lock").exists()  # made again, for older memdirs
    finally:
        index.close()


def test_where_a_folder_cannot_be_locked_an_owner_whose_new_lock_file_another_took_lets_go_and_takes_it_back(
        hashing_root: Path, other, monkeypatch):
    def no_folder_locks(folder):
        raise OSError("flock on a folder: not supported here")

    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    monkeypatch.setattr("vault.lock.try_lock_folder", no_folder_locks)  # in this process only: the owner
    index = open_index(hashing_root)
    try:
        shutil.rmtree(hashing_root / ".memdir")
        second = other(hashing_root)
        assert second.answer == "owns"  # it came first, through the new lock file
        write(hashing_root, "history/b.md", memory_text("m-0000000b", "Beta", "beta: written after the rm"))
        with pytest.raises(IndexUnusable, match="another process"):
            index.sync(["history/b.md"])  # before: written, two owners of one index
        assert not index.writable
        second.exit()
        assert index.keep_ownership()  # the server's tick: the index is free again, and this process takes it back
        index.sync(["history/b.md"])
        assert index.get("m-0000000b").title == "Beta"
    finally:
        index.close()


def test_a_vault_folder_deleted_whole_under_its_index_is_not_made_again(hashing_root: Path):
    # The rebuild of a deleted index folder (session 18) made the deleted vault's folder again, with an index and
    # its lock files in it, at the next sync (the watcher's, the backfill's).
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    index = open_index(hashing_root)
    try:
        shutil.rmtree(hashing_root)
        with pytest.raises(IndexUnusable, match="vault folder .* was deleted"):
            index.sync(["history/a.md"])
        assert not hashing_root.exists()
    finally:
        index.close()
