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
from vault.atomic import create_file


@pytest.fixture
def no_hard_links(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)


def test_a_file_is_created_whole_with_its_mode_and_an_existing_one_is_refused(tmp_path: Path, no_hard_links):
    path = tmp_path / "note.md"
    create_file(path, b"hello", mode=0o600)
    assert path.read_bytes() == b"hello" and (path.stat().st_mode & 0o777) == 0o600
    with pytest.raises(ConflictError):
        create_file(path, b"other")
    assert path.read_bytes() == b"hello" and [p.name for p in tmp_path.iterdir()] == ["note.md"]


def test_init_works_on_a_file_system_without_hard_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         no_hard_links):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "--client", "opencode"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".memories" / "memdir.toml").is_file()
    assert (tmp_path / ".opencode" / "plugins" / "memdir.js").is_file()
