"""The vault commands, driven as a user drives them."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli
from tests.conftest import memory_text, write


def run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_init_creates_a_vault_and_is_idempotent(tmp_path: Path):
    first = run("init", str(tmp_path / "v"))
    assert first.exit_code == 0 and "created" in first.output
    toml = (tmp_path / "v" / "memdir.toml").read_text()
    (tmp_path / "v" / "memdir.toml").write_text(toml.replace("outcome_history = 20", "outcome_history = 30"))
    second = run("init", str(tmp_path / "v"))
    assert second.exit_code == 0 and "nothing to do" in second.output
    assert "outcome_history = 30" in (tmp_path / "v" / "memdir.toml").read_text()
    ignored = (tmp_path / "v" / ".gitignore").read_text()
    assert ".memdir/" in ignored and "working/" in ignored and ".trash/" in ignored


def test_add_prints_an_id_that_show_and_list_find(vault_root: Path):
    added = run("add", "Dana reviews PRs in the morning", "--type", "preference", "--tag", "review", "--vault", str(vault_root))
    memory_id = added.output.strip()
    assert added.exit_code == 0 and memory_id.startswith("m-")
    shown = json.loads(run("show", memory_id, "--json", "--vault", str(vault_root)).output)
    assert shown["id"] == memory_id and shown["type"] == "preference" and shown["tags"] == ["review"]
    assert shown["collection"] == "memory_bank" and shown["content"] == "Dana reviews PRs in the morning"
    listed = json.loads(run("list", "--json", "--vault", str(vault_root)).output)
    assert [m["id"] for m in listed] == [memory_id]


def test_the_vault_comes_from_memdir_vault_when_no_option_is_given(vault_root: Path):
    result = run("list", env={"MEMDIR_VAULT": str(vault_root)})
    assert result.exit_code == 0 and "(no memories)" in result.output


def test_show_accepts_a_vault_relative_path(vault_root: Path):
    write(vault_root, "notes/idea.md", "---\ntitle: An idea\n---\nbody\n")
    result = run("show", "notes/idea.md", "--vault", str(vault_root))
    assert result.exit_code == 0 and "An idea" in result.output


@pytest.mark.parametrize("ref", ["../outside.md", "/etc/passwd", "m-doesnotexist", "bad id!", ".memdir/x.md"])
def test_an_id_or_path_that_does_not_resolve_inside_the_vault_is_an_error(vault_root: Path, ref: str):
    result = run("show", ref, "--vault", str(vault_root))
    assert result.exit_code == 1 and "Error:" in result.output


def test_add_refuses_unknown_types_with_the_valid_list(vault_root: Path):
    result = run("add", "x", "--type", "musing", "--vault", str(vault_root))
    assert result.exit_code == 1 and "expected one of: preference, fact" in result.output


def test_a_missing_vault_is_a_clear_error(tmp_path: Path):
    result = run("list", "--vault", str(tmp_path / "nope"))
    assert result.exit_code == 1 and "memdir init" in result.output


MALFORMED = {
    "history/bad-yaml.md": ("---\ntitle: ok\nscore: [0.5\n---\nbody\n", 4, "invalid YAML"),
    "history/unclosed.md": ("---\ntitle: never closed\nbody\n", 1, "never closed"),
    "history/unknown-collection.md": ("---\ncollection: archive\n---\nx\n", 2, "unknown value 'archive'"),
    "history/unknown-type.md": ("---\ntype: musing\n---\nx\n", 2, "unknown value 'musing'"),
    "history/score-range.md": ("---\ntitle: t\nscore: 1.7\n---\nx\n", 3, "out of range"),
    "history/uses-text.md": ("---\nuses: many\n---\nx\n", 2, "expected a number"),
    "history/duplicate-key.md": ("---\ntitle: a\ntitle: b\n---\nx\n", 3, "duplicate key 'title'"),
    "history/alias.md": ("---\na: &x 1\nb: *x\n---\nx\n", 2, "aliases"),  # reported at the anchor
    "history/tag.md": ("---\na: !!python/object:os.system x\n---\nx\n", 2, "tag"),
    "history/latin1.md": (b"---\ntitle: caf\xe9\n---\nx\n", 2, "UTF-8"),
    "history/binary.md": (b"\x89PNG\r\n\x1a\n\x00\x00\x00", 3, "binary"),
    "history/unquoted-link.md": ("---\nsupersedes: [[old]]\n---\nx\n", 2, "must be quoted"),
}


def test_doctor_reports_each_malformed_file_with_path_line_and_reason_while_the_others_load(vault_root: Path):
    write(vault_root, "patterns/good.md", "---\ncollection: patterns\ntitle: fine\n---\nok\n")
    for relative, (text, _, _) in MALFORMED.items():
        write(vault_root, relative, text)
    before = {p: (vault_root / p).read_bytes() for p in MALFORMED}
    result = run("doctor", "--json", "--vault", str(vault_root))
    report = json.loads(result.output)
    assert result.exit_code == 1 and report["memories"] == 1
    errors = {e["path"]: e for e in report["errors"]}
    assert set(errors) == set(MALFORMED)
    for relative, (_, line, reason) in MALFORMED.items():
        assert errors[relative]["line"] == line and reason in errors[relative]["reason"], relative
    assert before == {p: (vault_root / p).read_bytes() for p in MALFORMED}  # nothing was rewritten


def test_doctor_warns_about_a_folder_symlink_whose_notes_are_not_read(vault_root: Path, tmp_path: Path):
    """A folder linked into the vault (`memory_bank/team -> ~/team-notes`) is never walked, so its notes were
    silently missing from every search; doctor now names it (a warning: the exit status stays 0)."""
    write(tmp_path / "team-notes", "deploys.md", "---\ntitle: Deploys\n---\nTag the release first.\n")
    (vault_root / "memory_bank" / "team").symlink_to(tmp_path / "team-notes", target_is_directory=True)
    write(vault_root, "memory_bank/own.md", "---\ntitle: Own\n---\nmine\n")
    result = run("doctor", "--vault", str(vault_root))
    assert result.exit_code == 0
    assert ("warning: memory_bank/team: a folder symlink: memdir follows none (it could lead anywhere), so the "
            "notes below it are not read; move them into the vault") in result.output
    assert result.output.rstrip().endswith("1 memory, 0 problems")


def test_doctor_exits_zero_on_a_clean_vault(example_root: Path):
    result = run("doctor", "--vault", str(example_root))
    assert result.exit_code == 0 and "0 problems" in result.output


def test_help_imports_no_heavy_library():
    probe = (
        "import sys\n"
        "from mcp_server.cli.commands import main\n"
        "sys.argv = ['memdir', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('torch', 'onnxruntime', 'onnx', 'tokenizers', 'faiss', 'sentence_transformers', 'whoosh', 'mcp') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "HEAVY=\n" in result.stdout


def test_help_lists_the_hook_command_the_console_script_answers_before_the_cli_loads():
    """`memdir hook` runs before click loads (a hook must start in milliseconds), so `memdir --help` did not name it
    (review of session 12): a user reading the list could not find the command their client's settings call."""
    result = subprocess.run([sys.executable, "-m", "mcp_server", "--help"], capture_output=True, text=True, check=True)
    listed = [line.split()[0] for line in result.stdout.split("Commands:", 1)[1].splitlines() if line.strip()]
    assert "hook" in listed and listed == sorted(listed)
    usage = subprocess.run([sys.executable, "-m", "mcp_server", "hook", "--help"], capture_output=True, text=True)
    assert usage.returncode == 0 and usage.stderr.startswith("usage: memdir hook prompt|stop|session-start")


def test_add_refuses_a_credential_unless_allow_secret_is_given(vault_root: Path):
    token = "AKIA" + "QWERTYUI0PASDF12"
    refused = run("add", f"deploy key {token}", "--vault", str(vault_root))
    assert refused.exit_code == 1 and "AWS access key (AKIAQ…12)" in refused.output and token not in refused.output
    assert "--allow-secret" in refused.output
    allowed = run("add", f"deploy key {token}", "--allow-secret", "--vault", str(vault_root))
    assert allowed.exit_code == 0 and allowed.output.strip().startswith("m-")


def test_doctor_warns_about_a_private_file_in_the_project_vault_but_does_not_fail(vault_root: Path):
    write(vault_root, "memory_bank/mine.md", memory_text("m-0000beef", "Mine", "My own note.",
                                                          collection="memory_bank", type="fact", extra="privacy: private\n"))
    result = run("doctor", "--vault", str(vault_root))
    assert result.exit_code == 0, result.output
    assert "warning: memory_bank/mine.md: privacy: private in the project vault" in result.output


def test_doctor_warns_about_a_memory_dated_in_the_future_and_names_its_line(vault_root: Path):
    """A date typed 2099 for 2024, or another machine's clock far ahead: the memory read as minutes old and sorted
    first in every timeline, and doctor said nothing. A day ahead is left alone (time zones written by hand)."""
    write(vault_root, "history/typo.md", memory_text("m-0000f077", "Typo", "A date typed wrong.")
          .replace("created_at: 2026-11-01T08:00:00Z", "created_at: 2099-11-01T08:00:00Z"))
    tomorrow = (datetime.now(timezone.utc) + timedelta(hours=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(vault_root, "history/near.md", memory_text("m-0000f078", "Near", "Written on a clock a few hours ahead.")
          .replace("created_at: 2026-11-01T08:00:00Z", f"created_at: {tomorrow}"))
    result = run("doctor", "--vault", str(vault_root))
    assert result.exit_code == 0, result.output
    assert ("warning: history/typo.md:6: created_at 2099-11-01T08:00:00+00:00 is in the future: the memory reads as "
            "new and sorts first in every timeline until then") in result.output
    assert "near.md" not in result.output


@pytest.mark.parametrize("command", [["search", "alpha"], ["list"], ["doctor"], ["add", "a note"]])
def test_a_folder_without_memdir_toml_is_no_vault_to_any_command_and_is_left_as_it_was(tmp_path: Path, command):
    """One rule with the server and the hooks: only a folder `init` made is a vault. A command on a plain folder
    (a mistyped --vault) said nothing and made `.memdir/` and an index of whatever Markdown lay there."""
    plain = tmp_path / "notes"
    write(plain, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha beta"))
    result = CliRunner().invoke(cli, [*command, "--vault", str(plain)])
    assert result.exit_code == 1
    assert f"no initialized vault at {plain} (no memdir.toml); memdir init {plain} makes it one" in result.output
    assert sorted(p.relative_to(plain).as_posix() for p in plain.rglob("*")) == ["history", "history/a.md"]


def test_memdir_mcp_on_a_folder_without_memdir_toml_says_so_before_the_assistant_lists_tools(tmp_path: Path):
    plain = tmp_path / "notes"
    plain.mkdir()
    started = subprocess.run([sys.executable, "-m", "mcp_server", "mcp", "--vault", str(plain)], input=b"",
                             capture_output=True, timeout=60)
    assert started.returncode == 1
    said = started.stderr.decode()
    assert f"no initialized vault at {plain} (no memdir.toml); memdir init {plain} makes it one" in said
