"""A hook finds the project's vault upward from the folder the client started in, as git finds .git."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server.clients import integrations
from mcp_server.clients.hooks import find_vault, project_folder


@pytest.fixture
def nested(hashing_example: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(a project holding the example vault as .memories, a subfolder two levels down)."""
    project = tmp_path / "tidewater"
    project.mkdir()
    hashing_example.rename(project / ".memories")
    sub = project / "src" / "billing"
    sub.mkdir(parents=True)
    return project, sub


@pytest.mark.parametrize("client,variable", [(None, "CLAUDE_PROJECT_DIR"), ("gemini", "GEMINI_PROJECT_DIR")])
def test_a_session_started_in_a_subfolder_finds_the_projects_vault(nested: tuple[Path, Path], client: str | None,
                                                                   variable: str, monkeypatch: pytest.MonkeyPatch):
    project, sub = nested
    monkeypatch.setenv(variable, str(sub))  # Claude Code sets it to the folder it started in, not the git root
    given = integrations.vault_argument(project / ".memories", project)  # what `memdir init` writes
    # The model may have `cd`ed out of the project: the client's project folder still decides.
    assert find_vault(given, project_folder(client) or "/") == str(project / ".memories")


def test_without_a_project_folder_the_hooks_cwd_decides(nested: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch):
    project, sub = nested
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    assert project_folder("codex") is None and project_folder(None) is None
    assert find_vault(".memories", project_folder("codex") or str(sub)) == str(project / ".memories")
    assert find_vault(".memories", str(project.parent)) is None  # no vault above the project: nothing


def test_a_hook_whose_working_folder_was_removed_still_finds_the_vault_from_the_clients_cwd(tmp_path, monkeypatch):
    """A session in a git worktree that was removed: its hook processes start in a folder that no longer exists, and
    os.getcwd() raises there. The client's absolute `cwd` is enough to find the vault (review of session 9)."""
    project = tmp_path / "proj"
    (project / ".memories").mkdir(parents=True)
    (project / ".memories" / "memdir.toml").write_text("")
    gone = project / "worktree"
    gone.mkdir()
    monkeypatch.delenv("MEMDIR_VAULT", raising=False)
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert find_vault(None, str(gone)) == str(project / ".memories")
