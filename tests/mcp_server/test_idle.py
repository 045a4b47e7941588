"""The vault server lets go of its vault when nobody asks for a while, or when the vault is gone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mcp_server import client
from mcp_server.server.idle import IdleWatch

from .processes import start_server, stop_all, wait_for


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_idle_time_counts_from_the_last_request_and_zero_means_never(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text("")
    clock = Clock()
    watch = IdleWatch(tmp_path, 60, clock)
    clock.now += 59
    assert watch.reason() == ""
    watch.touch()
    clock.now += 59
    assert watch.reason() == ""
    clock.now += 1
    assert "no request for 60 s" in watch.reason()
    never = IdleWatch(tmp_path, 0, clock)
    clock.now += 10**6
    assert never.reason() == "" and never.check_every() == 5.0  # a deleted vault is still noticed within 15 s


def test_a_vault_whose_folder_or_config_disappears_is_let_go(tmp_path: Path):
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "memdir.toml").write_text("")
    watch = IdleWatch(vault, 0)
    (vault / "memdir.toml").unlink()
    assert "memdir.toml is gone" in watch.reason()
    shutil.rmtree(vault)
    assert "folder" in watch.reason() and "is gone" in watch.reason()


def _with_idle(root: Path, seconds: float) -> None:
    toml = root / "memdir.toml"
    toml.write_text(toml.read_text() + f"\n[server]\nidle_exit_seconds = {seconds}\n")


def _exited(process: subprocess.Popen) -> bool:
    return process.poll() is not None


@pytest.mark.slow
def test_an_idle_vault_is_closed_cleanly_the_process_leaves_and_the_next_call_starts_it_again(hashing_example: Path):
    _with_idle(hashing_example, 2)
    process = start_server(hashing_example)
    try:
        wait_for(lambda: _exited(process), timeout=60)  # its only vault closed: nothing left to serve
        assert process.returncode == 0, process.stderr.read().decode() if process.stderr else ""
        assert client.running() is None and not client.lock_held(hashing_example / client.VAULT_LOCK)
        assert not (client.servers_folder() / client.ADDRESS_FILE).exists()
        info = client.ensure(hashing_example)  # what a hook or `memdir mcp` does next
        assert info.pid != process.pid and client.call(hashing_example, "stats")["memories"] > 0
    finally:
        stop_all(hashing_example, process)


@pytest.mark.slow
def test_a_server_whose_only_vault_is_deleted_exits_within_fifteen_seconds(hashing_example: Path):
    process = start_server(hashing_example)
    try:
        # A fresh vault's vectors are embedded behind the first answers; deleting the folder while the
        # server still writes them would race rmtree, which is not what this test is about.
        info = client.running()
        wait_for(lambda: client.request(info, "GET", "/api/health", vault=hashing_example)["unembedded"] == 0, timeout=60)
        shutil.rmtree(hashing_example)
        wait_for(lambda: _exited(process), timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()
