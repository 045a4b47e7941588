"""Answers as of a past date from the vault's git history, and a memory's versions, without touching git."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.service.app import App
from mcp_server.cli.commands import cli
from mcp_server.service.memory_service import MemoryService
from mcp_server.views.results import SearchResult
from tests.conftest import HASHING_TOML, write
from vault import ValidationError, init_vault
from mcp_server.service import operations as ops

OLD_LOCK = ("---\nid: m-000000a1\ncollection: patterns\ntype: decision\ntitle: Lock imports with Redis SETNX\n"
            "created_at: 2026-09-20T10:00:00Z\n---\nStatement imports take a Redis SETNX lock with a 120 s TTL.\n")
NEW_LOCK = ("---\nid: m-000000a2\ncollection: patterns\ntype: decision\ntitle: Lock imports with Postgres advisory locks\n"
            "created_at: 2026-10-14T10:00:00Z\nsupersedes: [m-000000a1]\n---\n"
            "Statement imports take pg_advisory_xact_lock inside the import transaction; Redis is no longer involved.\n")
TIP = ("---\nid: m-000000b1\ncollection: patterns\ntype: learning\ntitle: Decimal for money\n"
       "created_at: 2026-09-20T10:00:00Z\n---\nUse Decimal, never float, for amounts.\n")


def git(root: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Dana", "GIT_AUTHOR_EMAIL": "dana@example.com",
           "GIT_COMMITTER_NAME": "Dana", "GIT_COMMITTER_EMAIL": "dana@example.com"}
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose vault has three commits: a Redis lock decision, its Postgres successor, a score."""
    project = tmp_path / "project"
    vault = project / ".memories"
    init_vault(vault, HASHING_TOML)
    git(project, "init", "-q", "-b", "main")
    write(vault, "patterns/redis-lock.md", OLD_LOCK)
    write(vault, "patterns/decimal.md", TIP)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "Redis lock for imports", date="2026-09-20T12:00:00Z")
    write(vault, "patterns/redis-lock.md", OLD_LOCK.replace("type: decision\n", "type: decision\nstatus: superseded\n"))
    write(vault, "patterns/postgres-lock.md", NEW_LOCK)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "Postgres advisory locks replace Redis", date="2026-10-14T12:00:00Z")
    write(vault, "patterns/decimal.md", TIP.replace("created_at: 2026-09-20T10:00:00Z\n",
                                                      "created_at: 2026-09-20T10:00:00Z\nscore: 0.7\nuses: 1\n"
                                                      "success_count: 1.0\noutcomes: [worked]\n"))
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "score", date="2026-10-20T12:00:00Z")
    return vault


@pytest.fixture
def service(project: Path):
    app = App(project)
    yield MemoryService(app)
    app.close()


def ids(answer: SearchResult) -> list[str]:
    return [r.id for r in answer.results]


def git_state(project: Path) -> dict[str, int]:
    dot_git = project.parent / ".git"
    return {str(p.relative_to(dot_git)): p.stat().st_size for p in dot_git.rglob("*") if p.is_file()}


def test_a_search_as_of_a_date_answers_from_the_vault_as_it_was_then(service: MemoryService, project: Path):
    before = git_state(project)
    today = service.search(ops.Search(query="how do we lock statement imports"))
    then = service.search(ops.Search(query="how do we lock statement imports", as_of="2026-10-01"))
    assert ids(today)[0] == "m-000000a2" and "m-000000a1" not in ids(today), "today: the successor, old one hidden"
    assert ids(then)[0] == "m-000000a1" and "m-000000a2" not in ids(then), "then: only the Redis decision existed"
    assert then.as_of["subject"] == "Redis lock for imports" and then.as_of["date"].startswith("2026-09-20")
    by_commit = service.search(ops.Search(query="how do we lock statement imports", as_of=then.as_of["commit"]))
    assert ids(by_commit) == ids(then)
    assert git_state(project) == before, "nothing was written to .git"
    assert git(project.parent, "status", "--porcelain") == "", "nor to the working tree"


def test_counters_are_as_committed_then(service: MemoryService):
    then = service.search(ops.Search(query="decimal money", as_of="2026-10-15"))
    later = service.search(ops.Search(query="decimal money", as_of="2026-10-21"))
    assert then.results[0].uses == 0 and later.results[0].uses == 1


def test_a_memorys_log_lists_its_versions_newest_first_with_what_changed(service: MemoryService):
    log = service.log(ops.Log(ref="m-000000a1"))
    assert [v["subject"] for v in log.versions] == ["Postgres advisory locks replace Redis", "Redis lock for imports"]
    newest, first = log.versions
    assert first["created"] and newest["keys_changed"] == ["status"] and not newest["body_changed"]
    assert newest["status"] == "superseded" and not log.uncommitted_changes
    scored = service.log(ops.Log(ref="m-000000b1")).versions[0]
    assert scored["counters_changed"] == ["outcomes", "score", "success_count", "uses"] and not scored["body_changed"]


def test_read_takes_a_version(service: MemoryService):
    old = service.read(ops.Read(ref="m-000000a1", version="2026-09-30"))
    assert old.status == "active" and old.version["subject"] == "Redis lock for imports"
    with pytest.raises(Exception, match="not committed yet"):
        service.read(ops.Read(ref="m-000000a2", version="2026-09-30"))


@pytest.mark.parametrize("as_of, message", [
    ("2020-01-01", r"before the vault's first commit \(2026-09-20"),
    ("2026-13-45", "not a date"),
    ("deadbeef42", "no such commit, and not a date"),
    ("HEAD; rm -rf /", "expected a date"),
])
def test_a_bad_as_of_says_what_was_expected(service: MemoryService, as_of: str, message: str):
    with pytest.raises(ValidationError, match=message):
        service.search(ops.Search(query="lock", as_of=as_of))


def test_a_vault_outside_git_says_why_it_has_no_past(tmp_path: Path):
    root = tmp_path / "plain"
    init_vault(root, HASHING_TOML)
    app = App(root)
    try:
        with pytest.raises(ValidationError, match="not in a git repository"):
            MemoryService(app).search(ops.Search(query="x", as_of="2026-10-01"))
    finally:
        app.close()


def test_the_cli_answers_as_of_and_prints_the_log(project: Path):
    runner = CliRunner()
    result = runner.invoke(cli, ["search", "how do we lock statement imports", "--as-of", "2026-10-01", "--json",
                                 "--vault", str(project)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["results"][0]["id"] == "m-000000a1" and answer["as_of"]["subject"] == "Redis lock for imports"
    log = runner.invoke(cli, ["log", "m-000000a1", "--vault", str(project)], catch_exceptions=False)
    assert log.exit_code == 0 and "changed status" in log.output and "created" in log.output
    bad = runner.invoke(cli, ["search", "lock", "--as-of", "2020-01-01", "--vault", str(project)])
    assert bad.exit_code != 0 and "before the vault's first commit" in bad.output
