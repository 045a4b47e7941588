"""Serving the bundled example vault (the README's first commands, `memdir serve`, a session in the checkout)
leaves memdir's own git checkout clean: its working notes are older than a day, so a lifecycle run would
trash them and archive a history note."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from indexer.embed import make_embedder
from mcp_server.server.served import open_vault

from ..conftest import EXAMPLE_VAULT


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True,
                          timeout=30).stdout


def test_serving_the_example_vault_changes_no_tracked_file(tmp_path: Path):
    checkout = tmp_path / "memdir"
    example = checkout / ".memories-example"
    shutil.copytree(EXAMPLE_VAULT, example, ignore=shutil.ignore_patterns(".memdir"))
    (checkout / ".gitignore").write_text(".memdir/\n")
    toml = example / "memdir.toml"  # the example's own settings, only with the test embedder
    toml.write_text(toml.read_text().replace('embedder = "all-MiniLM-L6-v2"', 'embedder = "hashing-256"'))
    git(checkout, "init", "-q")
    git(checkout, "add", "-A")
    git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "example")
    served = open_vault(example, lambda config: make_embedder(config.search.embedder))
    try:
        if served.lifecycle is not None and served.lifecycle.interval is not None:
            assert served.lifecycle.ran.wait(60), "the lifecycle's run at start did not finish"
    finally:
        served.close()
    assert git(checkout, "status", "--porcelain") == ""
