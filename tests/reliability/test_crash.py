"""kill -9 during writes, scoring, reindex and the generation swap; K scorers against an editor; full disks."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from indexer.curator import Curator
from tests.reliability.harness import crash_campaign, crash_vault, drift, open_index, race, temp_files
from vault import Change, Vault, atomic, parse
from vault.errors import VaultError
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

CI_CRASH_POINTS = 60


@pytest.mark.slow
def test_sigkill_at_60_random_points_of_writes_scores_reindex_swap_and_fold_tears_nothing_and_heals(tmp_path: Path):
    report = crash_campaign(tmp_path, CI_CRASH_POINTS, seed=20261122)
    assert report.crash_points == CI_CRASH_POINTS and set(report.by_mode) == {"write", "score", "reindex", "swap", "fold"}
    assert report.failures == []
    assert (report.torn_files, report.lost_increments, report.index_drift, report.stray_temp_files, report.litter) == (
        0, 0, 0, 0, 0)


def test_three_scorer_processes_and_an_editor_lose_no_increment_and_no_edit(tmp_path: Path):
    report = race(tmp_path, scorers=3, rounds=25, memories=3)
    assert report.increments == 3 * 25 * 3 and report.edits > 20
    assert (report.lost_increments, report.lost_edits) == (0, 0)


def test_an_editor_saving_between_the_writers_check_and_its_rename_keeps_its_edit(vault: Vault, monkeypatch):
    path = vault.root / "history" / "m-00000000.md"
    crash_vault(vault.root, 1)
    memory = vault.load("history/m-00000000.md")
    real_exchange = atomic._exchange
    saves = []

    def editor_saves_first(a: Path, b: Path) -> bool:
        if not saves:  # the editor's rename lands in the window after memdir's last check
            text = path.read_text().replace("the body must survive", "a human rewrote this")
            path.with_name("swap").write_text(text)
            os.replace(path.with_name("swap"), path)
            saves.append(text)
        return real_exchange(a, b)

    monkeypatch.setattr(atomic, "_exchange", editor_saves_first)
    if atomic._renameat2 is None:
        pytest.skip("no renameat2 on this system: the check-to-rename window remains")
    written = vault.edit(memory, Change(derive=lambda m: {"uses": m.uses + 1}))
    assert "a human rewrote this" in written.body and written.uses == 1
    assert parse(path.read_bytes(), "x.md").body == written.body and not temp_files(vault.root)


# --- disk full, I/O errors and permissions -----------------------------------------------------

def _failing(monkeypatch: pytest.MonkeyPatch, name: str, code: int) -> None:
    real = getattr(os, name)

    def fail(fd, *args):
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(atomic.TEMP_PREFIX):
            raise OSError(code, os.strerror(code))
        return real(fd, *args)

    monkeypatch.setattr(os, name, fail)


@pytest.mark.parametrize(("call", "code", "reason"), [
    ("write", errno.ENOSPC, "the disk is full"),
    ("write", errno.EDQUOT, "the disk quota is exhausted"),
    ("fsync", errno.EIO, "an I/O error occurred"),
])
def test_a_failing_disk_gives_a_clear_error_naming_the_file_and_leaves_it_intact(vault: Vault, monkeypatch, call,
                                                                                 code, reason):
    crash_vault(vault.root, 2)
    index = open_index(vault.root)
    curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
    path = vault.root / "history" / "m-00000000.md"
    before = path.read_bytes()
    with monkeypatch.context() as patched:
        _failing(patched, call, code)
        with pytest.raises(VaultError) as scored:
            curator.score({"m-00000000": "worked"})
        with pytest.raises(VaultError) as created:
            curator.add("a brand new memory about postgres", collection="history")
    assert str(path) in str(scored.value) and reason in str(scored.value) and "left unchanged" in str(scored.value)
    assert "history/" in str(created.value) and reason in str(created.value)
    assert path.read_bytes() == before and not temp_files(vault.root)
    assert sorted(p.name for p in (vault.root / "history").iterdir()) == ["m-00000000.md", "m-00000001.md"]
    assert curator.score({"m-00000000": "worked"})[0].changes["uses"] == 1  # the disk has room again
    assert drift(index) == []
    index.close()


def test_a_file_size_limit_in_a_child_process_is_a_clear_error_and_the_file_stays(vault: Vault):
    import subprocess
    import sys

    crash_vault(vault.root, 1)
    path = vault.root / "history" / "m-00000000.md"
    before = path.read_bytes()
    script = (
        "import resource, signal, sys\n"
        "from vault import Change, Vault\n"
        "from vault.errors import VaultError\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))\n"
        "vault = Vault(sys.argv[1])\n"
        "try:\n"
        "    vault.edit(vault.load('history/m-00000000.md'), Change(body='x' * 4000))\n"
        "except VaultError as exc:\n"
        "    print('error:', exc)\n"
    )
    child = subprocess.run([sys.executable, "-c", script, str(vault.root)], capture_output=True, text=True,
                           cwd=Path(__file__).resolve().parents[2], timeout=60)
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith("error: ") and "m-00000000.md" in child.stdout and "Traceback" not in child.stderr
    assert path.read_bytes() == before and not temp_files(vault.root)


def test_a_read_only_folder_is_a_clear_error_naming_the_file(vault: Vault, monkeypatch):
    crash_vault(vault.root, 1)
    folder = vault.root / "history"
    path = folder / "m-00000000.md"
    before = path.read_bytes()
    folder.chmod(0o555)
    real_open = os.open
    if os.geteuid() == 0:  # root ignores permission bits: refuse like the kernel would for a user

        def open_(file, flags, *args, **kwargs):
            if Path(file).parent == folder and flags & os.O_CREAT:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
            return real_open(file, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", open_)
    try:
        with pytest.raises(VaultError) as raised:
            vault.edit(vault.load("history/m-00000000.md"), Change(derive=lambda m: {"uses": m.uses + 1}))
        with pytest.raises(VaultError) as created:
            vault.add("a note that has nowhere to go", collection="history")
    finally:
        monkeypatch.undo()
        folder.chmod(0o755)
    assert str(path) in str(raised.value) and "permission denied" in str(raised.value)
    assert "history/" in str(created.value) and "permission denied" in str(created.value)
    assert path.read_bytes() == before and not temp_files(vault.root)


def test_a_read_only_file_is_refused_with_a_clear_error_and_keeps_its_bytes_and_mode(vault: Vault):
    crash_vault(vault.root, 1)
    path = vault.root / "history" / "m-00000000.md"
    before = path.read_bytes()
    path.chmod(0o444)
    with pytest.raises(VaultError) as raised:
        vault.edit(vault.load("history/m-00000000.md"), Change(derive=lambda m: {"uses": m.uses + 1}))
    assert str(path) in str(raised.value) and "read-only" in str(raised.value)
    assert path.read_bytes() == before and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert not temp_files(vault.root)
