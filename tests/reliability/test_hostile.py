"""Hostile files and hostile arguments: each is a clear error (file, line, reason), nothing is rewritten,
nothing outside the vault is touched, and the index and the watcher keep running."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.curator import Curator
from indexer.live import LiveIndex
from indexer.settings import WatchSettings
from mcp_server.service.app import App
from mcp_server.cli.commands import cli
from tests.conftest import HASHING_TOML, memory_text, write
from tests.reliability.harness import (
    drift_in_place,
    hostile_corpus,
    new_vault,
    open_index,
    snapshot,
    unclear_problems,
)
from vault import Vault
from vault.errors import VaultError
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

FAST = WatchSettings(debounce_seconds=0.05, max_wait_seconds=0.5, rescan_seconds=0.0)
TIMEOUT = 20.0

TRAVERSALS = [
    "../secret.md", "../../etc/passwd", "history/../../secret.md", "/etc/passwd", "~/secret.md",
    "..\\..\\secret.md", "history\\..\\..\\x.md", "C:evil.md", "C:\\Windows\\win.ini", "\\\\server\\share\\x.md",
    "%2e%2e%2fsecret.md", "..%2Fsecret.md", "a\x00b.md", "CON", "con.md", "history/aux.md", "LPT1.txt",
    "history/x.md.", "history/x.md ", "..", ".", "", ".memdir/index/CURRENT", ".git/config", "file:///etc/passwd",
    "m-" + "a" * 300, "history/" + "n" * 300 + ".md",
]


def _problems(items) -> list[tuple[str, int | None, str]]:
    return [(p.path, p.line, p.reason) for p in items]


def test_every_hostile_file_is_reported_with_file_line_and_reason_and_never_rewritten(tmp_path: Path):
    root = new_vault(tmp_path / "vault")
    write(root, "history/good.md", memory_text("m-00000001", "Good", "a good memory about postgres locks"))
    cases = hostile_corpus(root, tmp_path / "outside")
    before, outside = snapshot(root), snapshot(tmp_path / "outside")

    scan = Vault(root).scan()
    assert unclear_problems(cases, _problems(scan.problems)) == []
    index = open_index(root)
    assert unclear_problems(cases, _problems(index.problems())) == []
    assert "m-00000001" in index and "m-0000c001" not in index  # nothing read through links
    curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
    for memory_id in ("m-0000a001", "m-0000a002", "m-0000b001", "m-0000b008", "M-0000B008", "m-0000c001"):
        try:
            curator.score({memory_id: "worked"})
        except VaultError as exc:
            assert memory_id.lower() in str(exc).lower()
    after_scoring = snapshot(root)
    changed = {p for p in before if before[p] != after_scoring.get(p)}
    assert changed == {"history/twin.md"}, "only the one valid twin may be scored"
    assert drift_in_place(index) == []
    assert snapshot(tmp_path / "outside") == outside and not Path("/tmp/memdir-pwned").exists()


def test_scoring_keeps_a_bom_and_crlf_line_endings_byte_for_byte(tmp_path: Path):
    root = new_vault(tmp_path / "vault")
    hostile_corpus(root, tmp_path / "outside", big=False)
    index = open_index(root)
    curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
    curator.score({"m-0000b004": "worked", "m-0000b005": "failed"})
    bom = (root / "history" / "bom.md").read_bytes()
    crlf = (root / "history" / "crlf.md").read_bytes()
    assert bom.startswith(b"\xef\xbb\xbf---\n") and bom.count(b"\xef\xbb\xbf") == 1 and bom.endswith(b"\nbom body\n")
    assert b"\r\nuses: 1\r\n" in crlf and crlf.count(b"\n") == crlf.count(b"\r\n") and crlf.endswith(b"---\r\ncrlf body\r\n")
    index.close()


def test_the_watcher_and_index_keep_running_through_the_corpus_and_index_a_good_file_after_it(tmp_path: Path):
    root = new_vault(tmp_path / "vault")
    index = open_index(root)
    with LiveIndex(index, FAST) as live:
        cases = hostile_corpus(root, tmp_path / "outside")
        before = snapshot(root)
        write(root, "patterns/after.md", memory_text("m-000000ff", "After", "the watcher still indexes this"))
        seen = live.syncs
        while "m-000000ff" not in index:
            assert live.wait_for_sync(seen, TIMEOUT), "the good file after the corpus was never indexed"
            seen = live.syncs
    assert unclear_problems(cases, _problems(index.problems())) == []
    assert {p: b for p, b in snapshot(root).items() if p in before} == before
    index.sync()
    assert drift_in_place(index) == []


def test_doctor_json_lists_each_hostile_file_with_its_line_and_exits_1(tmp_path: Path):
    root = new_vault(tmp_path / "vault")
    cases = hostile_corpus(root, tmp_path / "outside", big=False)
    result = CliRunner().invoke(cli, ["doctor", "--json", "--vault", str(root)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    report = json.loads(result.output)
    problems = [(e["path"], e["line"], e["reason"]) for e in report["errors"]]
    assert unclear_problems(cases, problems) == []


# --- hostile arguments ------------------------------------------------------------------------

@pytest.fixture
def cli_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    new_vault(root)
    write(root, "history/good.md", memory_text("m-00000001", "Good", "a good memory about postgres locks"))
    write(tmp_path, "secret.md", memory_text("m-0000c001", "Outside", "outside words"))
    return root


@pytest.mark.parametrize("attack", TRAVERSALS)
def test_every_cli_command_taking_an_id_or_path_refuses_a_traversal_with_a_clear_error(cli_vault: Path, attack):
    before = snapshot(cli_vault.parent)
    runner = CliRunner()
    for args in (["show", attack], ["links", attack], ["score", attack, "worked"],
                 ["merge", attack, "m-00000001", "--into", "merged"]):
        result = runner.invoke(cli, [*args, "--vault", str(cli_vault)])
        assert result.exit_code in (1, 2), (args, result.output)
        assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output, (args, result.output)
        assert "Error" in result.output and "outside words" not in result.output, (args, result.output)
    assert {p: b for p, b in snapshot(cli_vault.parent).items() if not p.startswith("vault/.memdir")} == {
        p: b for p, b in before.items() if not p.startswith("vault/.memdir")}


def test_the_cli_answers_an_oversized_query_by_its_beginning_and_refuses_an_oversized_limit_clearly(cli_vault: Path):
    runner = CliRunner()
    huge = runner.invoke(cli, ["search", "lock " * 20_000, "--vault", str(cli_vault)])
    many = runner.invoke(cli, ["search", "lock", "--limit", str(10**9), "--vault", str(cli_vault)])
    assert huge.exit_code == 0 and "Traceback" not in huge.output, huge.output  # issue 26: an answer, not an error
    assert many.exit_code == 1 and "limit" in many.output and "Traceback" not in many.output, many.output


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def service(cli_vault: Path):
    from mcp_server.service.memory_service import MemoryService

    (cli_vault / "memdir.toml").write_text(HASHING_TOML)
    app = App(cli_vault)
    yield MemoryService(app)
    app.close()


@pytest.mark.anyio
async def test_every_mcp_tool_taking_an_id_or_path_refuses_traversals_as_tool_errors(service, cli_vault: Path):
    from mcp import Client
    from mcp_server.service.operations import QUERY_CHARS
    from mcp_server.tools import mcp_tools as tools

    before = snapshot(cli_vault.parent)
    calls = {
        "read_memory": lambda a: {"id": a},
        "update_memory": lambda a: {"id": a, "content": "x"},
        "append_memory": lambda a: {"id": a, "content": "x"},
        "delete_memory": lambda a: {"id": a},
        "score_memories": lambda a: {"outcome": "worked", "memory_scores": {a: "worked"}},
        "get_memory_relationships": lambda a: {"id": a},
        "search_memory": lambda a: {"id": a},
        "merge_memories": lambda a: {"ids": [a, "m-00000001"], "title": "merged"},
    }
    async with Client(tools.build(service)) as client:
        for attack in TRAVERSALS:
            for name, arguments in calls.items():
                result = await client.call_tool(name, arguments(attack))
                message = "\n".join(getattr(block, "text", "") for block in result.content)
                assert result.is_error and message.strip() and "Traceback" not in message, (name, attack, message)
            linked = await client.call_tool("search_linked_memories", {"target": attack or "x"})
            assert "outside words" not in str(linked.content)
        huge = await client.call_tool("search_memory", {"query": "lock " * 20_000})  # a long paste: answered
        beyond = await client.call_tool("search_memory", {"query": "x" * (QUERY_CHARS + 1)})
        many = await client.call_tool("search_memory", {"query": "lock", "limit": 10**9})
        assert not huge.is_error, huge.content  # issue 26: an answer, not an error (read by its salient lines)
        assert beyond.is_error and str(QUERY_CHARS) in str(beyond.content) and many.is_error
    after = snapshot(cli_vault.parent)
    assert {p: b for p, b in after.items() if not p.startswith("vault/.memdir")} == {
        p: b for p, b in before.items() if not p.startswith("vault/.memdir")}


def test_the_library_path_guard_refuses_every_traversal_by_name(cli_vault: Path):
    vault = Vault(cli_vault)
    for attack in TRAVERSALS:
        with pytest.raises(VaultError) as raised:
            path = vault.resolve(attack)
            if not path.is_file():
                raise VaultError(f"{attack}: no such file")
        assert str(raised.value).strip()
    os.symlink(cli_vault.parent / "secret.md", cli_vault / "history" / "link.md")
    os.symlink(cli_vault.parent / "nowhere.md", cli_vault / "history" / "dangling.md")
    for name in ("history/link.md", "history/dangling.md", "history/dangling.md/x.md"):
        with pytest.raises(VaultError, match="outside the vault|not a"):
            vault.resolve(name)
    shutil.rmtree(cli_vault / ".memdir", ignore_errors=True)
