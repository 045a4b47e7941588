"""The type checker passes on the typed contract and its users (the files [tool.mypy] in pyproject.toml names)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(900)  # a cold run reads pydantic's, click's and starlette's stubs: minutes on a loaded machine
def test_mypy_finds_no_error_in_the_contract_and_its_users(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], cwd=REPO,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
