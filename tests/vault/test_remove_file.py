"""vault.atomic.remove_file: a file is deleted only while it still holds what the caller read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vault import ConflictError, atomic


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(atomic.TEMP_PREFIX)]


def test_a_file_that_still_holds_what_was_read_is_removed(tmp_path: Path):
    path = tmp_path / ".mcp.json"
    path.write_bytes(b"{}\n")
    atomic.remove_file(path, b"{}\n")
    assert not path.exists() and not leftovers(tmp_path)


def test_a_file_someone_changed_is_kept_with_their_change(tmp_path: Path):
    path = tmp_path / ".mcp.json"
    path.write_bytes(b'{"mcpServers": {"github": {}}}\n')
    with pytest.raises(ConflictError, match="changed while memdir was removing it"):
        atomic.remove_file(path, b"{}\n")
    assert path.read_bytes() == b'{"mcpServers": {"github": {}}}\n' and not leftovers(tmp_path)


def test_a_file_already_gone_is_a_conflict_not_a_crash(tmp_path: Path):
    with pytest.raises(ConflictError, match="was deleted"):
        atomic.remove_file(tmp_path / ".mcp.json", b"{}\n")


def test_a_save_landing_just_after_the_file_was_set_aside_is_never_touched(tmp_path: Path, monkeypatch):
    path = tmp_path / ".mcp.json"
    path.write_bytes(b"{}\n")
    real_rename = os.rename

    def editor_saves_right_after(source, destination):
        real_rename(source, destination)
        path.write_bytes(b'{"new": true}\n')

    monkeypatch.setattr(atomic.os, "rename", editor_saves_right_after)
    atomic.remove_file(path, b"{}\n")
    assert path.read_bytes() == b'{"new": true}\n' and not leftovers(tmp_path)


def test_when_two_saves_race_the_removal_the_newer_one_stays(tmp_path: Path, monkeypatch):
    path = tmp_path / ".mcp.json"
    path.write_bytes(b'{"first": true}\n')  # saved after memdir read {}
    real_rename = os.rename

    def second_save_right_after(source, destination):
        real_rename(source, destination)
        path.write_bytes(b'{"second": true}\n')

    monkeypatch.setattr(atomic.os, "rename", second_save_right_after)
    with pytest.raises(ConflictError):
        atomic.remove_file(path, b"{}\n")
    assert path.read_bytes() == b'{"second": true}\n' and not leftovers(tmp_path)


def test_a_scan_skips_a_file_removed_after_the_walk_listed_it(vault_root):
    """The server's lifecycle, git or a person may remove a file while a scan runs; the scan goes on."""
    from vault import Vault

    vault = Vault(vault_root)
    kept = vault_root / "history" / "kept.md"
    kept.write_text("---\nid: m-0000aaaa\ntitle: Kept\n---\nstill here\n")
    gone = vault_root / "history" / "gone.md"
    scan = vault.scan([gone, kept])
    assert [m.id for m in scan.memories] == ["m-0000aaaa"] and scan.problems == ()
