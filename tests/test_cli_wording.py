"""Lines an outside evaluator found confusing (s16): each says what it means, nothing empty or ungrammatical."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mcp_server.cli.commands import cli
from tests.conftest import memory_text, write


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_stats_of_an_empty_vault_lists_no_empty_brackets(hashing_root: Path):
    result = run("stats", "--vault", str(hashing_root))
    assert result.output.splitlines()[0] == "0 memories; 0 scored, 0 superseded, 0 problem files"


def test_reindex_with_problem_files_says_where_they_are_listed(hashing_root: Path):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha"))
    write(hashing_root, "history/bad.md", "---\ntags: [a, b\n---\nbody\n")
    result = run("reindex", "--vault", str(hashing_root))
    assert result.output.rstrip().endswith("1 problem file (memdir doctor lists them with line and reason)")


def test_books_calls_a_hand_written_book_hand_written(hashing_root: Path):
    write(hashing_root, "books/runbook.md", "# Runbook\n\n## Deploys\n\nTag the release first.\n")
    result = run("books", "--vault", str(hashing_root))
    assert result.output.rstrip().endswith("· hand-written") and "from hand-written" not in result.output


def test_one_memory_is_counted_in_the_singular(hashing_root: Path):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha"))
    assert run("doctor", "--vault", str(hashing_root)).output.rstrip().endswith("1 memory, 0 problems")
    assert run("reindex", "--vault", str(hashing_root)).output.startswith("indexed 1 memory (")
    assert run("stats", "--vault", str(hashing_root)).output.startswith("1 memory (history 1)")
