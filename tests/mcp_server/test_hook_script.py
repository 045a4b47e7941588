"""`memdir-hook`, the script init registers as the hooks' command: Python without its site initialisation, and
memdir's package found by the script itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli
from mcp_server.clients import hook_script, integrations
from mcp_server.clients.hook_script import command_words

from .test_hooks import event, server  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow


def run(command: list[str], payload: dict, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(command, input=json.dumps(payload).encode(), capture_output=True, timeout=60, env=env)


def test_the_registered_hook_script_runs_without_site_and_prints_the_known_context(server):
    invocation = hook_script.hook_invocation(integrations.memdir_command())
    [script] = invocation
    assert Path(script).name == "memdir-hook" and os.access(script, os.X_OK)
    assert Path(script).read_text().splitlines()[0] == f"#!{Path(sys.executable).absolute()} -S"
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}  # as Claude Code runs it
    result = run([*invocation, "prompt", "--vault", str(server)],
                 event(server, "UserPromptSubmit", prompt="how do we make celery retries safe"), buffered)
    assert result.returncode == 0 and result.stderr == b"", result.stderr  # no third-party import was needed
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[id:m-a4c81f63]" in context


def test_a_hook_leaves_without_the_interpreters_teardown_and_what_it_printed_still_arrives(tmp_path: Path):
    # Python buffers a pipe's output unless told not to: the exit must flush it, and skips what a teardown would run.
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    code = ("import atexit, sys\n"
            "from mcp_server.clients.hooks import leave\n"
            "atexit.register(lambda: print('torn down'))\n"
            "sys.stdout.write('the context')\n"
            "sys.stderr.write('a warning')\n"
            "leave(3)\n")
    result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, timeout=60, env=buffered,
                            cwd=Path(hook_script.package_root()))
    assert (result.returncode, result.stdout, result.stderr) == (3, b"the context", b"a warning")


def test_a_hook_started_without_a_standard_output_still_leaves_with_its_status(tmp_path: Path):
    """A client that starts the hook with its stdout closed (Python then has no sys.stdout): the hook's `main` reports
    that it cannot print and returns 0, and `leave` must not turn that into a traceback and exit status 1."""
    code = ("import sys\n"
            "from mcp_server.clients.hooks import leave\n"
            "assert sys.stdout is None\n"
            "sys.stderr.write('a warning')\n"
            "leave(0)\n")
    result = subprocess.run([sys.executable, "-S", "-c", code], stderr=subprocess.PIPE, timeout=60,
                            cwd=Path(hook_script.package_root()), preexec_fn=lambda: os.close(1))
    assert (result.returncode, result.stderr) == (0, b"a warning"), result.stderr


def test_a_second_registration_leaves_the_script_as_it_is(tmp_path: Path):
    [script] = hook_script.hook_invocation(integrations.memdir_command())
    before = os.stat(script)
    hook_script.hook_invocation(integrations.memdir_command())
    after = os.stat(script)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_python_path_too_long_for_a_shebang_line_is_started_through_sh(tmp_path: Path):
    folder = tmp_path / ("a-long-virtual-environment-folder-" * 4) / "bin"
    folder.mkdir(parents=True)
    (folder / "python").symlink_to(sys.executable)
    text = hook_script.script_text(str(folder / "python"), str(hook_script.package_root()))
    assert text.startswith("#!/bin/sh\n") and len(str(folder / "python")) > hook_script.SHEBANG_LIMIT
    script = tmp_path / "memdir-hook"
    script.write_text(text)
    script.chmod(0o755)
    result = run([str(script), "prompt"], {})  # memdir's hook ran: it says what is missing and lets the prompt through
    assert result.returncode == 0 and b"no session_id in the hook input" in result.stderr, result.stderr


def test_the_script_is_written_beside_the_console_script_of_a_user_install(tmp_path: Path):
    """pip install --user: the console script is in ~/.local/bin, the interpreter in /usr/bin."""
    console = tmp_path / "local" / "bin" / "memdir"
    console.parent.mkdir(parents=True)
    console.write_text("#!/usr/bin/python3\n")
    assert hook_script.hook_invocation(str(console)) == [str(console.with_name("memdir-hook"))]
    assert console.with_name("memdir-hook").read_text().startswith(f"#!{Path(sys.executable).absolute()} -S\n")


def test_a_read_only_installation_keeps_the_console_script(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError("read-only file system")

    monkeypatch.setattr(hook_script.atomic, "write_state", refused)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    assert hook_script.hook_invocation("/opt/memdir/bin/memdir") == ["/opt/memdir/bin/memdir", "hook"]


@pytest.mark.parametrize("command, event_name", [
    ('/v/bin/memdir-hook prompt --vault ".memories"', "prompt"),
    ('/v/bin/memdir hook stop --vault ".memories"', "stop"),  # what earlier releases registered
    ("'/a b/bin/memdir-hook' session-start --vault x --client gemini", "session-start"),
    ('/usr/bin/other-tool hook prompt', None),
    ('/v/bin/memdir-hook', None),
])
def test_a_hook_command_is_memdirs_in_either_form(command: str, event_name: str | None):
    assert hook_script.hook_event(hook_script.command_words(command)) == event_name


def test_doctor_names_a_hook_script_that_runs_another_installation(tmp_path: Path):
    from mcp_server.clients.claude_wiring import command_findings

    [script] = hook_script.hook_invocation(integrations.memdir_command())
    assert command_findings([script], "Claude Code", "--claude-code")[0].ok
    moved = tmp_path / "memdir-hook"  # written by an installation since moved away
    moved.write_text(hook_script.script_text("/old/venv/bin/python", "/old/checkout"))
    [finding] = command_findings([str(moved)], "Claude Code", "--claude-code")
    assert not finding.ok and "runs another memdir than this one" in finding.detail
    assert "memdir init --claude-code again" in finding.detail


def test_a_memdir_hook_file_memdir_did_not_write_is_left_as_it_is(tmp_path: Path):
    console = tmp_path / "bin" / "memdir"
    console.parent.mkdir(parents=True)
    console.write_text("#!/usr/bin/python3\n")
    theirs = console.with_name("memdir-hook")
    theirs.write_text("#!/bin/sh\necho the user's own memdir-hook\n")
    assert hook_script.hook_invocation(str(console)) == [str(console), "hook"]
    assert theirs.read_text() == "#!/bin/sh\necho the user's own memdir-hook\n"
    older = hook_script.script_text("/old/venv/bin/python", "/old/checkout")  # memdir's, for an installation gone
    theirs.write_text(older)
    assert hook_script.hook_invocation(str(console)) == [str(theirs)]
    assert theirs.read_text() == hook_script.this_script_text()


def test_a_hook_script_whose_memdir_is_gone_says_so_and_what_to_run(tmp_path: Path):
    script = tmp_path / "memdir-hook"
    script.write_text(hook_script.script_text(str(Path(sys.executable).absolute()), str(tmp_path / "uninstalled")))
    script.chmod(0o755)
    alone = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}  # no memdir on the path
    result = subprocess.run([str(script), "prompt"], input=b"{}", capture_output=True, timeout=60, env=alone, cwd=tmp_path)
    assert result.returncode != 0
    said = result.stderr.decode()
    assert "Traceback" not in said and str(tmp_path / "uninstalled") in said and "memdir init" in said, said


def test_the_shebang_limit_counts_bytes_not_characters():
    python = "/home/" + "é" * 60 + "/bin/python"  # 71 characters, 131 bytes
    assert len(f"#!{python} -S") <= hook_script.SHEBANG_LIMIT < len(f"#!{python} -S".encode())
    assert hook_script.script_text(python, "/x").startswith("#!/bin/sh\n")


def test_a_tests_init_writes_memdir_hook_in_its_own_folder_and_leaves_the_shared_environments_alone(tmp_path: Path,
                                                                                                    monkeypatch):
    # Run from a shared virtual environment, a test's init rewrote its `memdir-hook` to run the tree under test.
    shared = Path(sys.executable).absolute().with_name("memdir-hook")
    before = shared.read_bytes() if shared.exists() else None
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "--claude-code"])
    assert result.exit_code == 0, result.output
    settings = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    [script] = {command_words(h["command"])[0] for group in settings["hooks"]["UserPromptSubmit"] for h in group["hooks"]}
    assert Path(script).parent != shared.parent and Path(script).name == "memdir-hook"
    assert (shared.read_bytes() if shared.exists() else None) == before
