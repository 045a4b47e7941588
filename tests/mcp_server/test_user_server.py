"""One server process per user, hosting every vault it is asked for: each vault its own answers, lock and idle
clock; `memdir status` and `memdir stop` see and end them one by one or all at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server import client
from mcp_server.cli.commands import cli
from vault import init_vault

from ..conftest import HASHING_TOML, memory_text, write
from .processes import hook, hook_context, serves, start_server, stop_all, wait_for

pytestmark = pytest.mark.slow


def project(tmp_path: Path, name: str, fact: str, idle: float | None = None) -> Path:
    """A vault holding one fact only it knows."""
    root = tmp_path / name / ".memories"
    init_vault(root, HASHING_TOML + (f"\n[server]\nidle_exit_seconds = {idle}\n" if idle is not None else ""))
    write(root, "memory_bank/fact.md", memory_text(f"m-{abs(hash(name)) % 16**8:08x}", f"{name} fact", fact,
                                                   collection="memory_bank", type="fact"))
    return root


def found(root: Path, query: str) -> list[str]:
    return [hit["title"] for hit in client.call(root, "search", {"query": query, "limit": 5})["results"]]


@pytest.fixture
def three(tmp_path: Path):
    roots = [project(tmp_path, "alpha", "Alpha deploys with the walrus pipeline."),
             project(tmp_path, "beta", "Beta deploys with the pelican pipeline."),
             project(tmp_path, "gamma", "Gamma deploys with the heron pipeline.")]
    process = start_server(roots[0])
    yield roots, process
    stop_all(None, process)


def test_three_vaults_are_served_by_one_process_each_with_its_own_answers(three):
    roots, process = three
    assert {client.ensure(root).pid for root in roots} == {process.pid}
    assert all(serves(root) for root in roots)
    assert found(roots[0], "walrus pipeline deploys") == ["alpha fact"]
    assert found(roots[1], "pelican pipeline deploys") == ["beta fact"]
    assert found(roots[1], "walrus pipeline") in ([], ["beta fact"]) and "alpha fact" not in found(roots[2], "walrus")
    # the hooks name their vault too: each prompt gets its own project's context
    context = hook_context(hook("prompt", {"session_id": "s-1", "cwd": str(roots[2].parent),
                                           "prompt": "how does gamma deploy with the heron pipeline"}))
    assert "Gamma deploys with the heron pipeline" in context and "walrus" not in context


def test_a_private_memory_of_one_project_never_reaches_another_projects_answers(three):
    roots, _ = three
    write(roots[0], "memory_bank/salary.md", memory_text("m-5a1a5a1a", "Alpha salary band", "The zebu salary band is 9k.",
                                                         collection="memory_bank", type="fact",
                                                         extra="privacy: private\n"))
    wait_for(lambda: "Alpha salary band" in found(roots[0], "zebu salary band"))  # the watcher indexed it
    for other in roots[1:]:
        assert "Alpha salary band" not in found(other, "zebu salary band")
        with pytest.raises(client.RemoteError) as caught:
            client.call(other, "read", {"ref": "m-5a1a5a1a"})
        assert caught.value.status == 404


def test_an_idle_vault_is_closed_while_another_stays_served(tmp_path: Path):
    busy = project(tmp_path, "busy", "Busy keeps going.")
    idle = project(tmp_path, "idle", "Idle goes to sleep.", idle=2)
    process = start_server(busy)
    try:
        client.ensure(idle)
        wait_for(lambda: not serves(idle) and not client.lock_held(idle / client.VAULT_LOCK), timeout=30)  # flushed, let go
        assert process.poll() is None and serves(busy) and found(busy, "busy keeps going") == ["busy fact"]
        assert found(idle, "idle goes to sleep") == ["idle fact"]  # asked again: opened again, same process
        assert client.running().pid == process.pid
    finally:
        stop_all(None, process)


def test_a_deleted_vault_is_let_go_within_fifteen_seconds_and_the_others_stay(three):
    roots, process = three
    for root in roots:
        client.ensure(root)
    shutil.rmtree(roots[1].parent)
    wait_for(lambda: not serves(roots[1]), timeout=15)
    assert process.poll() is None and serves(roots[0]) and serves(roots[2])


def test_status_lists_every_served_vault_and_stop_closes_one_or_ends_everything(three):
    roots, process = three
    assert client.ensure(roots[1]).pid == process.pid
    listed = json.loads(CliRunner().invoke(cli, ["status", "--json"]).output)
    vaults = [s for s in listed if s["kind"] == "vault"]
    assert sorted(s["vault"] for s in vaults) == sorted(str(r) for r in roots[:2])
    assert {s["pid"] for s in vaults} == {process.pid}
    assert all(s["rss_mb"] > 0 and s["memories"] == 1 and s["idle_s"] is not None and s["port"] for s in vaults)
    text = CliRunner().invoke(cli, ["status"]).output
    assert str(roots[0]) in text and "resident memory of the process" in text

    closed = CliRunner().invoke(cli, ["stop", "--vault", str(roots[0])])
    assert closed.exit_code == 0 and f"closed {roots[0]}" in closed.output
    assert not serves(roots[0]) and serves(roots[1]) and process.poll() is None
    assert not client.lock_held(roots[0] / client.VAULT_LOCK)

    nothing = CliRunner().invoke(cli, ["stop", "--vault", str(roots[2])])
    assert nothing.exit_code == 0 and nothing.output.strip() == f"no memdir server serves {roots[2]}"

    ended = CliRunner().invoke(cli, ["stop", "--all"])
    assert ended.exit_code == 0 and f"stopped pid {process.pid}" in ended.output
    assert process.wait(timeout=30) == 0
    assert CliRunner().invoke(cli, ["status"]).output.strip() == "no memdir server is running for this user"


def test_a_served_vault_has_one_writer_a_second_server_cannot_take_it(three, tmp_path: Path):
    roots, process = three
    other_user_folder = tmp_path / "elsewhere"  # a second server (another registry), asked for the same vault
    second = subprocess.run([sys.executable, "-m", "mcp_server", "serve", "--vault", str(roots[0])],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "MEMDIR_SERVERS_DIR": str(other_user_folder)})
    assert second.returncode == 0  # it served nothing, so it left
    log = (other_user_folder / client.LOG_NAME).read_text()
    assert f"served by another memdir process (pid {process.pid})" in log
    assert client.lock_held(roots[0] / client.VAULT_LOCK) and serves(roots[0])
    # the CLI goes through the server that holds the lock: its write is seen there at once
    added = subprocess.run([sys.executable, "-m", "mcp_server", "add", "Alpha's walrus runs on Fridays.",
                            "--type", "fact", "--vault", str(roots[0])], capture_output=True, text=True, timeout=60)
    assert added.returncode == 0
    assert client.call(roots[0], "read", {"ref": added.stdout.strip()})["id"] == added.stdout.strip()


def test_a_vault_that_cannot_be_opened_is_reported_and_the_others_go_on(three, tmp_path: Path):
    roots, process = three
    broken = project(tmp_path, "broken", "Never read.")
    (broken / "memdir.toml").write_text("[search]\nno_such_key = 1\n")
    with pytest.raises(client.Unavailable, match="no_such_key"):
        client.ensure(broken, timeout=30)
    assert process.poll() is None and found(roots[0], "walrus pipeline") == ["alpha fact"]


@pytest.mark.anyio
async def test_a_memdir_mcp_session_goes_on_after_its_vault_was_closed_in_between(three):
    from mcp_server.server import registry

    from .processes import stdio

    roots, process = three
    client.ensure(roots[1])  # another vault keeps the process up
    async with stdio(roots[0]) as session:
        first = await session.call_tool("search_memory", {"query": "walrus pipeline", "limit": 1})
        assert not first.is_error
        assert registry.close(roots[0]) is not None and not serves(roots[0])
        again = await session.call_tool("search_memory", {"query": "walrus pipeline", "limit": 1})
        assert not again.is_error and "walrus" in again.content[0].text.lower()
        assert serves(roots[0]) and client.running().pid == process.pid
        registry.close(roots[1])
        registry.close(roots[0])  # its last vault: the process leaves
        assert process.wait(timeout=30) == 0
        restarted = await session.call_tool("search_memory", {"query": "walrus pipeline", "limit": 1})
        assert not restarted.is_error and "walrus" in restarted.content[0].text.lower()
    assert client.running().pid != process.pid


def test_status_says_when_a_vault_is_still_embedding_in_the_background():
    from mcp_server.views import render

    row = {"vault": "/p/.memories", "pid": 7, "port": 9, "rss_mb": 130.0, "uptime_s": 3.0, "memories": 36,
           "idle_s": 1.0, "kind": "vault"}
    assert "embedding 240 units" in render.servers([{**row, "unembedded": 240}])
    assert "embedding" not in render.servers([{**row, "unembedded": 0}])
