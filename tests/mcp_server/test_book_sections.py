"""`memdir ingest` and `memdir books` count a book's sections alike, as the chunker splits it: the text before
the first heading is one, each heading outside a code block that has text of its own another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli

from ..conftest import HASHING_TOML

DOCUMENTS = {  # name: (content, sections)
    "plain.txt": ("Deploy checklist\n\nRun the migrations first, then restart the workers.\n", 1),
    "guide.md": ("Intro before any heading.\n\n# Guide\n\n#hashtag is text.\n\n```sh\n# a shell comment\n# another\n```\n\n"
                 "## Rollback\n\nSteps.\n", 3),
    "runbook.html": ("<html><body><h1>Runbook</h1><p>One.</p><h2>Refunds</h2><p>Two.</p></body></html>", 2),
    # a heading straight above a subheading holds no text of its own: only part of the subsection's path
    "nested.md": ("# Runbook\n\n## Deploying\n\n### Normal deploy\n\nMerge.\n\n### Rollback\n\nRedeploy.\n", 2),
}


@pytest.mark.parametrize("name", DOCUMENTS)
def test_ingest_and_books_report_the_same_right_number_of_sections(tmp_path: Path, name: str,
                                                                    monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["init", "v"]).exit_code == 0
    (tmp_path / "v" / "memdir.toml").write_text(HASHING_TOML)
    content, sections = DOCUMENTS[name]
    (tmp_path / name).write_text(content)
    ingested = runner.invoke(cli, ["ingest", name, "--json", "--vault", "v"])
    assert ingested.exit_code == 0, ingested.output
    [book] = json.loads(runner.invoke(cli, ["books", "--json", "--vault", "v"]).output)
    assert json.loads(ingested.output)[0]["parts"] == book["sections"] == sections
