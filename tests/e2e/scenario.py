"""The celery scenario every assistant's e2e test plays: one project with the example vault, set up by
`memdir init --client NAME` in a temporary HOME, and the checks that do not depend on the assistant."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .test_claude_code import MEMDIR, PROVEN, _poll, checkout, example_project, exchanges

PROVEN_FILE = Path("patterns") / "retry-celery-tasks-idempotently.md"
COUNTERS = ("score", "uses", "success_count", "outcomes", "last_used_at", "last_outcome")


def set_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, client: str) -> tuple[Path, Path, dict[str, str], str]:
    """(home, project, env, what init printed); HOME is the temporary one for this test and the hooks too
    (one user, one memdir server), and memdir is not on PATH (init writes its full path)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    project = example_project(tmp_path / "tidewater")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **checkout()}
    result = subprocess.run([str(MEMDIR), "init", "--client", client], cwd=project, env=env, capture_output=True,
                            text=True, check=True)
    return home, project, env, result.stdout


def assert_first_turn_had_orientation_and_context(first: str) -> None:
    assert "memdir memory vault:" in first  # the SessionStart hook's orientation
    assert "KNOWN CONTEXT" in first and f"[id:{PROVEN}]" in first  # the per-prompt hook's context


def assert_first_exchange_stored(vault: Path) -> None:
    assert _poll(lambda: exchanges(vault) == ["Exchange: how do we make celery retries safe"]), exchanges(vault)


def assert_scored_and_both_exchanges_stored(vault: Path, before: str) -> None:
    """The second turn wrote the scores into the proven memory's file (counters only) and was stored too."""
    after = (vault / PROVEN_FILE).read_text()
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert changed and all(line.split(":")[0] in COUNTERS for line in changed), changed
    assert _poll(lambda: exchanges(vault) == ["Exchange: and the visibility timeout?",
                                              "Exchange: how do we make celery retries safe"]), exchanges(vault)
