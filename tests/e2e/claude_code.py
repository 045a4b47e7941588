"""The real Claude Code, installed from npm into a cache folder outside the repository.

Versions: the pinned one and the current one (`MEMDIR_E2E_CLAUDE_VERSIONS` overrides, comma
separated). The cache is `$MEMDIR_E2E_CACHE`, else `~/.cache/memdir-e2e` (of the real HOME, read
before the tests replace HOME). An install is reused once its binary has answered `--version` (asked
once per install: starting node for it took 5-15 s per binary and test session on a loaded machine); one
of "latest" for a day (npm install took tens of seconds for every test that asked for it).
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
import time
from pathlib import Path

PINNED = "2.1.197"
VERSIONS = tuple(v.strip() for v in os.environ.get("MEMDIR_E2E_CLAUDE_VERSIONS", f"{PINNED},latest").split(",") if v.strip())
CACHE = Path(os.environ.get("MEMDIR_E2E_CACHE") or Path.home() / ".cache" / "memdir-e2e")
INSTALL_SECONDS = 600
LATEST_SECONDS = 24 * 3600  # how long an install of "latest" stands before npm is asked again


class Unavailable(Exception):
    """npm, node or the package cannot be had here: the end-to-end test skips with this reason."""


def claude_binary(version: str) -> Path:
    """The `claude` executable of `version`, installed into the cache on first use."""
    return npm_binary("@anthropic-ai/claude-code", version, "claude", f"claude-code-{version}")


@functools.cache  # once per test session
def npm_binary(package: str, version: str, name: str, folder_name: str) -> Path:
    """The executable `name` of npm `package` at `version`, installed into the cache folder `folder_name`
    on first use (reused once it has answered `--version`)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise Unavailable(f"node and npm are needed to install {package}; neither is on PATH")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{folder_name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel workers (pytest -n): one installs, the others wait and reuse it
        return _installed(package, version, name, CACHE / folder_name)


def _installed(package: str, version: str, name: str, folder: Path) -> Path:
    binary = folder / "node_modules" / ".bin" / name
    stamp = folder / ".installed"  # when npm last installed it: "latest" is asked for again once a day, not per test
    fresh = version != "latest" or (stamp.exists() and time.time() - stamp.stat().st_mtime < LATEST_SECONDS)
    answered = folder / ".answered"  # this install's binary answered `--version` once: not asked again
    if fresh and _answers(binary, answered):
        return binary
    folder.mkdir(parents=True, exist_ok=True)
    answered.unlink(missing_ok=True)
    result = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                             f"{package}@{version}"], capture_output=True, timeout=INSTALL_SECONDS)
    if result.returncode == 0:
        stamp.touch()
    if not _answers(binary, answered):
        if result.returncode != 0:
            tail = result.stderr.decode(errors="replace").strip().splitlines()[-3:]
            raise Unavailable(f"npm install {package}@{version} failed: {' / '.join(tail)}")
        raise Unavailable(f"{binary} does not run (its native binary is an optional npm dependency)")
    return binary


def _answers(binary: Path, answered: Path) -> bool:
    if answered.exists() and binary.exists():
        return True
    try:
        ran = binary.exists() and subprocess.run([str(binary), "--version"], capture_output=True,
                                                 timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    if ran:
        answered.touch()
    return ran
