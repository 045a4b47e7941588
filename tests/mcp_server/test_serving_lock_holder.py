"""`client.serving()` names this user's server only when that server holds the vault's lock, not whoever does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_server import client

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.pwrite(fd, str(os.getpid()).encode(), 0)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def holder(tmp_path: Path):
    """A process other than this one holding the vault's lock, as a serving memdir process does (pid written)."""
    vault = tmp_path / "vault"
    (vault / ".memdir").mkdir(parents=True)
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(vault / client.VAULT_LOCK)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
    assert process.stdout.readline() == b"held\n"
    yield vault, process.pid
    process.stdin.close()
    process.wait(timeout=10)
    process.stdout.close()


def register(pid: int) -> None:
    """This user's server, as its address file names it."""
    address = client.own_folder() / client.ADDRESS_FILE
    address.write_text(json.dumps({"pid": pid, "port": 9, "token": "t", "started": 0}))
    address.chmod(0o600)


def test_a_lock_held_by_an_unrelated_process_is_not_this_users_server(holder):
    vault, _ = holder
    register(os.getpid())  # this user's server is running (this process), and does not serve the vault
    assert client.serving(vault) is None


def test_the_server_holding_the_lock_is_serving(holder):
    vault, pid = holder
    register(pid)
    assert client.serving(vault) is not None and client.serving(vault).pid == pid
