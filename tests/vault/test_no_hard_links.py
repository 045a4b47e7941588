"""A file system without hard links (link() refused): files are still created whole, never overwritten,
and `memdir init` works there."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli
from vault import ConflictError
from vault.atomic import create_file, move


@pytest.fixture(params=[errno.EPERM, errno.ENOTSUP, errno.ENOSYS])  # what FUSE, SMB and 9p mounts answer
def no_hard_links(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    def refuse(*args, **kwargs):
        raise OSError(request.param, os.strerror(request.param))

    monkeypatch.setattr(os, "link", refuse)


def test_a_file_is_created_whole_with_its_mode_and_an_existing_one_is_refused(tmp_path: Path, no_hard_links):
    path = tmp_path / "note.md"
    create_file(path, b"hello", mode=0o600)
    assert path.read_bytes() == b"hello" and (path.stat().st_mode & 0o777) == 0o600
    with pytest.raises(ConflictError):
        create_file(path, b"other")
    assert path.read_bytes() == b"hello" and [p.name for p in tmp_path.iterdir()] == ["note.md"]


@pytest.mark.parametrize("client", ["claude-code", "codex", "gemini", "opencode"])
def test_init_works_on_a_file_system_without_hard_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         no_hard_links, client: str):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "--client", client])
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".memories" / "memdir.toml").is_file()
    written = {"claude-code": ".claude/settings.local.json", "codex": ".codex/hooks.json",
               "gemini": ".gemini/settings.json", "opencode": ".opencode/plugins/memdir.js"}[client]
    assert (tmp_path / written).is_file()


def test_a_move_renames_without_overwriting(tmp_path: Path, no_hard_links):
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "taken.md").write_text("taken")
    with pytest.raises(ConflictError):
        move(tmp_path / "a.md", tmp_path / "taken.md")
    move(tmp_path / "a.md", tmp_path / "sub" / "b.md")
    assert (tmp_path / "sub" / "b.md").read_text() == "a" and not (tmp_path / "a.md").exists()
    assert (tmp_path / "taken.md").read_text() == "taken"
