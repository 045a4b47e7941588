"""Shared fixtures: throwaway vaults, the bundled example vault, and a clean environment."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Iterator

import pytest

from mcp_server.clients import hook_script
from mcp_server.embedding import host as embed_host
from indexer import smooth_int8
from mcp_server.config import default_config_text
from vault import Vault, init_vault

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_VAULT = REPO / ".memories-example"


@pytest.fixture(autouse=True, scope="session")
def one_stamp_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One index stamp key for the whole run (vault/state_stamp.py): an index a session fixture built under one test's
    HOME is read by the next test as the same user's, not rebuilt as one from elsewhere. Set outside monkeypatch, so a
    test's `monkeypatch.undo()` keeps it."""
    from mcp_server.config import stamp_key_path
    from vault import state_stamp

    saved = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.getbasetemp() / "state")  # the servers and commands tests start
    state_stamp.keep_key_at(stamp_key_path())  # this process, as the entry point does
    yield
    state_stamp.keep_key_at(None)
    if saved is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = saved


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test may see the developer's own vault, user vault or home settings, and none leaves an
    embedding host behind (a server of a real-model vault starts one under the temporary HOME)."""
    for name in list(os.environ):
        if name.startswith("MEMDIR_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)  # the server registry lives under the temporary HOME
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # The int8 graph is checked on every CPU, in this process and in the servers and hosts it starts; where a user's
    # machine takes it is tested on its own (tests/indexer/test_smooth_int8.py)
    monkeypatch.setenv("MEMDIR_INT8", "always")
    monkeypatch.setattr(smooth_int8, "int8_pays", lambda: True)
    # `memdir init` writes `memdir-hook` beside the running Python: run from a shared virtual environment, a test's
    # init rewrote that environment's script to run the tree under test, for every other tree and hook using it.
    shared_bin = Path(sys.executable).absolute().parent
    real_script_path = hook_script.script_path
    own_bin = tmp_path_factory.mktemp("bin")
    monkeypatch.setattr(hook_script, "script_path", lambda console_script: (
        own_bin / hook_script.SCRIPT_NAME if real_script_path(console_script).parent == shared_bin
        else real_script_path(console_script)))
    yield
    host = embed_host.running()
    if host is not None:
        os.kill(host.pid, signal.SIGTERM)


@pytest.fixture
def vault_root(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    init_vault(root, default_config_text())
    return root


@pytest.fixture
def vault(vault_root: Path) -> Vault:
    return Vault(vault_root)


@pytest.fixture
def example_root(tmp_path: Path) -> Path:
    """A private copy of .memories-example (without any index a previous run left)."""
    target = tmp_path / "example"
    shutil.copytree(EXAMPLE_VAULT, target, ignore=shutil.ignore_patterns(".memdir"))
    return target


def write(root: Path, relative: str, text: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


HASHING_TOML = '[search]\nembedder = "hashing-256"\n'


@pytest.fixture
def hashing_root(tmp_path: Path) -> Path:
    """An empty vault configured with the deterministic test embedder."""
    root = tmp_path / "hvault"
    init_vault(root, HASHING_TOML)
    return root


@pytest.fixture
def hashing_example(example_root: Path) -> Path:
    """The example vault, configured with the deterministic test embedder."""
    (example_root / "memdir.toml").write_text(HASHING_TOML)
    return example_root


def memory_text(memory_id: str, title: str, body: str, *, collection: str = "history", type: str = "learning",
                extra: str = "") -> str:
    return (
        f"---\nid: {memory_id}\ncollection: {collection}\ntype: {type}\ntitle: {title}\n"
        f"created_at: 2026-11-01T08:00:00Z\n{extra}---\n{body}\n"
    )


class Clock:
    """A monotonic clock a test moves by hand: a back-off's wait passes without a sleep."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
