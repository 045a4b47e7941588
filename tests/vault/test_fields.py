"""Per-type fields: kept as written, shown in every outward shape, and checked by doctor with file and line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mcp_server.cli.commands import cli
from vault import parse
from vault.fields import extra_fields, problems

from ..conftest import memory_text, write

OBJECTIVE = memory_text("m-0000f001", "Deposits for every clinic", "Every clinic takes deposits at booking.",
                        collection="memory_bank", type="objective",
                        extra="deadline: 2027-02-01\nprogress: in-progress\nblockers: [Stripe Connect review]\n"
                              "owner_team: payments\n")


def test_per_type_fields_and_a_users_own_keys_are_kept_as_written():
    assert extra_fields(parse(OBJECTIVE.encode(), "memory_bank/deposits.md")) == {
        "deadline": "2027-02-01", "progress": "in-progress", "blockers": ["Stripe Connect review"], "owner_team": "payments"}
    assert extra_fields(parse(memory_text("m-0000f002", "t", "b").encode(), "history/t.md")) == {}


def test_a_field_that_does_not_fit_its_type_is_named():
    bad = OBJECTIVE.replace("deadline: 2027-02-01", "deadline: next spring").replace("in-progress", "ongoing")
    assert problems(parse(bad.encode(), "memory_bank/d.md")) == [
        ("deadline", "objective field deadline: 'next spring' is not a date (YYYY-MM-DD)"),
        ("progress", "objective field progress: 'ongoing' is not one of pending, in-progress, blocked, done")]
    assert problems(parse(OBJECTIVE.encode(), "memory_bank/d.md")) == []


def test_doctor_reports_a_bad_field_with_file_and_line_and_still_serves_the_memory(hashing_root: Path):
    write(hashing_root, "memory_bank/deposits.md", OBJECTIVE.replace("deadline: 2027-02-01", "deadline: soonish"))
    result = CliRunner().invoke(cli, ["doctor", "--json", "--vault", str(hashing_root)])
    report = json.loads(result.output)
    assert report["memories"] == 1 and report["errors"] == []
    assert {"path": "memory_bank/deposits.md", "line": 7,
            "reason": "objective field deadline: 'soonish' is not a date (YYYY-MM-DD)"} in report["warnings"]
    shown = CliRunner().invoke(cli, ["show", "m-0000f001", "--json", "--vault", str(hashing_root)])
    assert json.loads(shown.output)["fields"]["deadline"] == "soonish"
