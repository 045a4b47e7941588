"""This user's server as real processes: one server, several vaults, several stdio sessions, crashes recovered."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mcp import Client
from mcp_server import client
from vault import init_vault, parse

from ..conftest import HASHING_TOML

from .processes import serves, start_server, stdio, stop_all

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
MEMORY = "m-a4c81f63"  # patterns/retry-celery-tasks-idempotently.md in the example vault


@pytest.fixture
def server(hashing_example: Path):
    process = start_server(hashing_example)
    yield hashing_example, process
    stop_all(hashing_example, process)


def uses(root: Path) -> int:
    path = root / "patterns" / "retry-celery-tasks-idempotently.md"
    return parse(path.read_bytes(), "patterns/x.md").uses


async def test_two_stdio_sessions_scoring_one_memory_at_once_lose_no_increment(server):
    root, _ = server
    before = uses(root)
    per_session = 30
    async with stdio(root) as first, stdio(root) as second:
        async def score_many(session: Client) -> None:
            for _ in range(per_session):
                result = await session.call_tool("score_memories", {"outcome": "unknown", "memory_scores": {MEMORY: "worked"}})
                assert not result.is_error, result.content

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(score_many, first)
            tasks.start_soon(score_many, second)
    assert uses(root) == before + 2 * per_session


async def test_a_second_serve_reports_the_running_one_which_then_serves_that_vault_too(server, tmp_path: Path):
    root, process = server
    other = tmp_path / "other"
    init_vault(other, HASHING_TOML)
    second = subprocess.run([sys.executable, "-m", "mcp_server", "serve", "--vault", str(other)],
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 0 and f"pid {process.pid}" in second.stderr and "not starting another" in second.stderr
    assert serves(other) and serves(root)


async def test_the_address_file_is_private_and_every_request_needs_the_token(server):
    root, _ = server
    folder = client.servers_folder()
    assert (folder / client.ADDRESS_FILE).stat().st_mode & 0o077 == 0 and folder.stat().st_mode & 0o077 == 0
    info = client.ServerInfo.read()
    forged = client.ServerInfo(info.pid, info.port, "not-the-token", info.started)
    with pytest.raises(client.RemoteError) as caught:
        client.request(forged, "GET", "/api/health")
    assert caught.value.status == 401


async def test_killing_the_server_mid_session_is_recovered_by_the_next_call(server):
    root, process = server
    async with stdio(root) as session:
        first = await session.call_tool("get_memory_stats", {})
        assert not first.is_error
        dead = client.ServerInfo.read()
        assert dead.pid == process.pid
        process.kill()
        await anyio.to_thread.run_sync(process.wait, 30)
        again = await session.call_tool("search_memory", {"query": "advisory locks", "limit": 2})
        assert not again.is_error and again.structured_content["results"]
    restarted = client.ServerInfo.read()
    assert restarted is not None and restarted.pid != dead.pid


async def test_the_cli_goes_through_the_running_server(server):
    root, process = server
    result = subprocess.run([sys.executable, "-m", "mcp_server", "search", "celery retries", "--json", "--limit", "1",
                             "--vault", str(root)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and json.loads(result.stdout)["results"][0]["id"]
    log = client.log_file().read_text()
    assert f"server[{process.pid}]" in log
    sessions_before = len(list((root / ".memdir" / "sessions").glob("*.json")))
    added = subprocess.run([sys.executable, "-m", "mcp_server", "add", "Staging runs one Machine per group.",
                            "--type", "fact", "--vault", str(root)], capture_output=True, text=True, timeout=60)
    memory_id = added.stdout.strip()
    assert added.returncode == 0 and memory_id.startswith("m-")
    shown = client.call(root, "read", {"ref": memory_id})
    assert shown["id"] == memory_id  # the server saw the CLI's write at once: one writer, one view
    assert len(list((root / ".memdir" / "sessions").glob("*.json"))) == sessions_before


async def test_a_browser_page_from_another_origin_is_refused_even_with_the_token(server):
    root, _ = server
    info = client.ServerInfo.read()
    with socket.create_connection(("127.0.0.1", info.port), timeout=10) as connection:
        connection.sendall((f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{info.port}\r\n"
                            f"Authorization: Bearer {info.token}\r\nOrigin: https://evil.example\r\n"
                            "Connection: close\r\n\r\n").encode())
        status, _ = client._read_response(connection)
    assert status == 403


async def test_the_server_listens_on_loopback_only(server):
    root, _ = server
    port = client.ServerInfo.read().port
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # UDP connect sends nothing: it only picks the outward address
            outward = [probe.getsockname()[0]]
        except OSError:
            outward = []
    if not outward or outward[0].startswith("127."):
        pytest.skip("this machine has no non-loopback IPv4 address")
    with pytest.raises(OSError):
        socket.create_connection((outward[0], port), timeout=5).close()


def test_a_loaded_vault_keeps_its_indices_out_of_the_collectors_full_passes(hashing_example: Path):
    import gc

    from mcp_server.server.served import open_vault

    frozen_before = gc.get_freeze_count()
    served = open_vault(hashing_example, lambda config: None)
    try:
        assert served.app is not None and served.app.index.memory_count()
        assert gc.get_freeze_count() > frozen_before
        # the index's own objects are among the frozen ones: a full pass no longer finds them
        assert not any(obj is served.app.index._memories for obj in gc.get_objects(generation=2))
    finally:
        served.close()
        gc.unfreeze()


def test_a_loaded_vaults_rows_are_frozen_before_any_collector_pass_walks_them(hashing_example: Path):
    """The open's row tuples are kept out of every pass, the first one too (collector.keeping_loads): a pass would
    have untracked them (a tuple of strings and numbers), after walking every one of them at 100k memories."""
    import gc

    from mcp_server.server.served import open_vault
    from mcp_server.service.app import App

    # Built whole (every memory embedded, so each row holds its chunk ids): the next open reads its generation. A
    # served open closed at once left the rows its deferred embedding had not reached, which the next open decodes:
    # the test then found no row left to check, depending on the machine's load.
    App(hashing_example).close()
    served = open_vault(hashing_example, lambda config: None)
    try:
        assert served.app is not None
        rows = [held for held in served.app.index._entries._slots.values() if type(held) is tuple]
        assert rows and all(gc.is_tracked(row) for row in rows)
    finally:
        served.close()
        gc.unfreeze()


async def test_the_cli_gets_the_servers_errors_as_the_same_classes_and_bad_arguments_as_validation_errors(server):
    from mcp_server.cli.commands import Remote
    from mcp_server.service import operations as ops
    from vault.errors import NotFoundError

    root, _ = server
    with pytest.raises(NotFoundError, match="m-0000dead"):
        Remote(root).run(ops.Read(ref="m-0000dead"))
    with pytest.raises(client.RemoteError, match="bad arguments for search: no argument `no_such_argument`"):
        client.call(root, "search", {"no_such_argument": 1})
    with pytest.raises(client.RemoteError, match="bad arguments for search: argument `limit` should be a valid integer"):
        client.call(root, "search", {"query": "celery", "limit": "many"})
