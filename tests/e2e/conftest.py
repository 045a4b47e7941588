"""The end-to-end tests run the real Claude Code (and may install it with npm) or Chromium: they run
when asked for (`-m e2e`, or MEMDIR_E2E=1) and skip, saying how to run them, in the ordinary suite.

The tests that start warm (as after a first session) share one memdir server: starting it took a test
13-18 s of its time on a loaded machine, opening another vault in it 3 s. Each test still has its own
project, vault and HOME; only the process is shared, found through one runtime folder
(`$XDG_RUNTIME_DIR/memdir`, as a desktop login sets it) that the test passes to its client and hooks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

import pytest

from mcp_server import client

from ..mcp_server.processes import stop_all, stop_starting


# The files whose one test keeps a client busy longest (OpenCode's two turns 70-125 s, Codex then Gemini CLI
# 40-85 s, Gemini CLI's two turns 45-60 s at load 15-22). Under `pytest -n` they start first: in name order
# they came last, and a long test handed out last ends the run alone on one worker.
LONGEST_FIRST = ("test_opencode.py", "test_one_vault_two_clients.py", "test_gemini_cli.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "e2e" in (config.getoption("markexpr") or "") or os.environ.get("MEMDIR_E2E") == "1":
        items.sort(key=lambda item: next((i for i, name in enumerate(LONGEST_FIRST) if item.path.name == name),
                                         len(LONGEST_FIRST)))
        return
    skip = pytest.mark.skip(reason="end-to-end test (real Claude Code or Chromium): run with `pytest -m e2e` or MEMDIR_E2E=1")
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The runtime folder that registers the one server of the warm tests; that server is stopped at the end."""
    folder = tmp_path_factory.mktemp("e2e-runtime")
    folder.chmod(0o700)
    yield folder
    before = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(folder)
    try:
        stop_all()
    finally:
        if before is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = before


@pytest.fixture
def warm(shared_runtime: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """`warm(vault)` opens the vault in the shared server. This test, and every client and hook it starts
    (`checkout()` passes XDG_RUNTIME_DIR on), find that server; a test that needs no server, a hung one or
    one of its own does not ask for this. At the end, a server a hook started for one of these vaults
    while the shared one was down is stopped; the shared one keeps running."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared_runtime))
    opened: list[Path] = []

    def open_vault(vault: Path) -> None:
        client.ensure(vault)
        opened.append(vault)

    yield open_vault
    shared = client.running()
    for vault in opened:
        stop_starting(vault, keep=shared.pid if shared else None)
