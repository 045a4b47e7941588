"""A vault on a read-only file system (a read-only mount or share, a container's read-only checkout): a command that
needs the index says in one line what it could not write and why, instead of a traceback."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli
from tests.conftest import memory_text, write
from vault import lock


def _read_only(path: Path) -> int:
    raise OSError(errno.EROFS, "Read-only file system", str(path))


@pytest.mark.parametrize("command", [["search", "celery"], ["add", "a new note"], ["reindex"]])
def test_a_command_on_a_read_only_vault_names_the_folder_it_cannot_write_and_why(hashing_root: Path, monkeypatch,
                                                                               command: list[str]):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    (hashing_root / ".memdir").mkdir(exist_ok=True)
    monkeypatch.setattr(lock, "open_lock_file", _read_only)  # what the OS answers on a read-only mount
    result = CliRunner().invoke(cli, [*command, "--vault", str(hashing_root)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert f"cannot write {hashing_root / '.memdir'}" in result.output
    assert "read-only file system" in result.output
