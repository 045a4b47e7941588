"""A team vault in git: two clones score the same memory and pull each other's work without conflicts."""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.curator import Curator
from mcp_server.cli.commands import cli
from tests.indexer.helpers import open_index
from vault import Vault
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done


def memdir(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def clone(remote: Path, target: Path) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(target))
    for key, value in (("user.name", "Dana"), ("user.email", "dana@example.com"), ("pull.rebase", "false")):
        git(target, "config", key, value)
    return target


def curator(root: Path) -> Curator:
    return Curator(open_index(root), ScoringSettings(), LifecycleSettings(), DedupSettings())


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, Path, str]:
    """A bare remote and two clones of a project whose vault holds one memory (committed by the first)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    first = clone(remote, tmp_path / "first")
    assert memdir("init", str(first / ".memories")).exit_code == 0
    memory = Vault(first / ".memories").add("Make Celery tasks idempotent before adding retries.",
                                           collection="patterns", title="Idempotent Celery tasks")
    git(first, "add", "-A")
    git(first, "commit", "-q", "-m", "vault")
    git(first, "push", "-q", "origin", "main")
    second = clone(remote, tmp_path / "second")
    return first, second, memory.id


def test_init_in_a_fresh_clone_registers_the_driver_and_changes_no_file(team):
    _, second, _ = team
    assert git(second, "config", "--get", "merge.memdir.driver", check=False).returncode == 1  # config is not cloned
    result = memdir("init", str(second / ".memories"))
    assert result.exit_code == 0 and "git merge driver in" in result.output
    assert "merge-driver %O %A %B %P" in git(second, "config", "--get", "merge.memdir.driver").stdout
    assert git(second, "status", "--porcelain").stdout == ""
    again = memdir("init", str(second / ".memories"))
    assert "nothing to do" in again.output
    assert (second / ".memories" / ".gitattributes").read_text().splitlines()[-1] == "*.md merge=memdir"


def test_two_clones_scoring_the_same_memory_merge_without_conflict(team):
    first, second, memory_id = team
    memdir("init", str(second / ".memories"))
    scores = []
    for clone_root, outcome in ((first, "worked"), (second, "failed")):
        scorer = curator(clone_root / ".memories")
        scorer.score({memory_id: outcome}, now=NOW)
        scores.append(scorer.index.get(memory_id).score)
        scorer.index.close()
        git(clone_root, "commit", "-q", "-am", f"scored {outcome}")
    git(first, "push", "-q", "origin", "main")
    pulled = git(second, "pull", "-q", "origin", "main", check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    memory = Vault(second / ".memories").find(memory_id)
    assert memory.uses == 2 and memory.success_count == 1.0
    assert sorted(memory.outcomes) == ["failed", "worked"]
    assert scores[0] > 0.5 > scores[1]
    assert memory.score == pytest.approx(0.5 + (scores[0] - 0.5) + (scores[1] - 0.5))  # both changes, once each
    assert git(second, "status", "--porcelain").stdout == ""


def test_both_clones_renaming_the_memory_differently_is_a_reported_conflict(team):
    first, second, memory_id = team
    memdir("init", str(second / ".memories"))
    for clone_root, title in ((first, "Celery: idempotency first"), (second, "Idempotent tasks before retries")):
        editor = curator(clone_root / ".memories")
        editor.update(memory_id, fields={"title": title}, now=NOW)
        editor.score({memory_id: "worked"}, now=NOW)
        editor.index.close()
        git(clone_root, "commit", "-q", "-am", f"retitled {title}")
    git(first, "push", "-q", "origin", "main")
    pulled = git(second, "pull", "origin", "main", check=False)
    assert pulled.returncode != 0
    assert "CONFLICT (memdir)" in pulled.stderr + pulled.stdout and "'title' was changed on both sides" in pulled.stderr
    path = next((second / ".memories" / "patterns").glob("*.md"))
    text = path.read_text()
    assert "<<<<<<< ours\ntitle: Idempotent tasks before retries\n=======\n" in text and "uses: 2\n" in text
    doctor = memdir("doctor", "--vault", str(second / ".memories"))
    assert doctor.exit_code == 1
    assert f"patterns/{path.name}:5: unresolved git conflict marker '<<<<<<<'" in doctor.output
