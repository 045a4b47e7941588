"""`memdir stats`, `delete` and `restore`, driven as a user drives them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mcp_server.cli.commands import cli
from vault import Vault

OUTAGE = "m-c7f2d0a9"
OUTAGE_PATH = "history/outage-review-duplicate-ledger-entries.md"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_stats_counts_the_example_vault_as_text_and_json(hashing_example: Path):
    text = run("stats", "--vault", str(hashing_example))
    assert text.exit_code == 0 and text.output.startswith("36 memories (")
    report = json.loads(run("stats", "--json", "--vault", str(hashing_example)).output)
    assert report["memories"] == 36 and sum(report["collections"].values()) == 36


def test_a_deleted_memory_comes_back_byte_for_byte_where_it_was(hashing_example: Path):
    original = (hashing_example / OUTAGE_PATH).read_bytes()
    deleted = run("delete", OUTAGE, "--vault", str(hashing_example))
    assert deleted.exit_code == 0 and ".trash/history/" in deleted.output
    assert not (hashing_example / OUTAGE_PATH).exists()
    restored = run("restore", OUTAGE, "--vault", str(hashing_example))
    assert restored.exit_code == 0 and OUTAGE_PATH in restored.output
    assert (hashing_example / OUTAGE_PATH).read_bytes() == original
    assert OUTAGE in {m.id for m in Vault(hashing_example).scan().memories}
    found = run("search", "redis failover dropped the import duplicate ledger", "--json", "--vault", str(hashing_example))
    assert OUTAGE in [r["id"] for r in json.loads(found.output)["results"]]


def test_restore_refuses_a_live_id_a_taken_place_and_an_unknown_id_and_changes_nothing(hashing_example: Path):
    live = run("restore", OUTAGE, "--vault", str(hashing_example))
    assert live.exit_code == 1 and f"{OUTAGE} is not deleted: it lives at {OUTAGE_PATH}" in live.output
    run("delete", OUTAGE, "--vault", str(hashing_example))
    (hashing_example / OUTAGE_PATH).write_text("a human's new note in the same place\n")
    taken = run("restore", OUTAGE, "--vault", str(hashing_example))
    assert taken.exit_code == 1 and "another file is there now" in taken.output
    assert (hashing_example / OUTAGE_PATH).read_text() == "a human's new note in the same place\n"
    assert len(list((hashing_example / ".trash").rglob("*.md"))) == 1
    unknown = run("restore", "m-00000000", "--vault", str(hashing_example))
    assert unknown.exit_code == 1 and "no trashed copy of m-00000000" in unknown.output
