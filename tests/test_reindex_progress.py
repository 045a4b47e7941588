"""`memdir reindex` shows a progress bar on a terminal, and nothing of it anywhere else (issue 32 item 3)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import memory_text

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def reindex(vault: Path, stderr_on_terminal: bool) -> tuple[int, str, str]:
    """Run `memdir reindex` as a user does, its stderr a pseudo-terminal or a pipe: (exit code, stdout, stderr)."""
    command = [sys.executable, "-c", "from mcp_server.cli.commands import cli; cli()", "reindex", "--vault", str(vault)]
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"}
    if not stderr_on_terminal:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, text=True, env=env)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed its end: all it wrote has been read
            break
        if not data:
            break
        seen += data
    os.close(leader)
    stdout = process.communicate(timeout=max(1.0, deadline - time.monotonic()))[0]
    return process.returncode, stdout, ANSI.sub("", seen.decode("utf-8", "replace"))


def vault_of(root: Path, count: int) -> Path:
    (root / "memdir.toml").parent.mkdir(parents=True, exist_ok=True)
    (root / "memdir.toml").write_text('[search]\nembedder = "hashing-256"\n')
    for n in range(count):
        path = root / "history" / f"m{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory_text(f"m{n}", f"Note {n}", f"The deploy step {n} failed. It was retried {n} times and passed."))
    return root


def test_on_a_terminal_the_bar_names_each_stage_and_counts_to_the_end(tmp_path: Path):
    code, stdout, terminal = reindex(vault_of(tmp_path / "vault", 40), stderr_on_terminal=True)
    assert code == 0, terminal
    assert "indexed 40 memories" in stdout
    assert "indexing: embedding" in terminal  # the stage the bar was left at, drawn before it was cleared
    embedded = int(re.search(r"(\d+) texts embedded", stdout).group(1))
    assert f"{embedded}/{embedded}" in terminal  # counted texts, up to all of them


def test_without_a_terminal_neither_stream_carries_the_bar(tmp_path: Path):
    code, stdout, stderr = reindex(vault_of(tmp_path / "vault", 40), stderr_on_terminal=False)
    assert code == 0
    assert "indexed 40 memories" in stdout
    assert "indexing" not in stderr and "\x1b[" not in stderr + stdout
