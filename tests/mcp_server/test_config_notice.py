"""A vault whose memdir.toml memdir cannot use: the hooks say so, naming the file, line and reason, once a session
(the user in Claude Code's systemMessage, the model in its context), instead of a silent prompt with no memory."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mcp_server.clients import config_notice
from tests.conftest import HASHING_TOML

from .processes import _starting, hook, start_server, stop_all, stop_starting, wait_for
from .test_hooks import SESSION, event

pytestmark = pytest.mark.slow
BAD = HASHING_TOML + "[context]\nmax_chars = 0\n"
REASON = "memdir.toml:4 [context] max_chars: 0 is not above 0"


def said(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else {}


def ask(root: Path, session: str = SESSION) -> dict:
    return said(hook("prompt", {**event(root, "UserPromptSubmit", prompt="celery retries"), "session_id": session},
                     "--vault", str(root)))


@pytest.fixture
def misconfigured(hashing_example: Path):
    (hashing_example / "memdir.toml").write_text(BAD)
    yield hashing_example
    stop_all(hashing_example)


def test_a_bad_setting_is_told_once_a_session_and_no_server_is_started_for_it_meanwhile(misconfigured: Path):
    root = misconfigured
    assert ask(root) == {}  # no server ran: this prompt starts one and goes on at once, as for any vault
    wait_for(lambda: not _starting(root))  # the server refused the vault and, serving nothing, exited
    told = ask(root)
    assert REASON in told["systemMessage"] and "memdir doctor" in told["systemMessage"]
    assert REASON in told["hookSpecificOutput"]["additionalContext"]
    assert told["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert not _starting(root)  # no server started to be refused again
    assert ask(root) == {}  # said once: not on every prompt
    other = said(hook("session-start", {**event(root, "SessionStart", source="startup"), "session_id": "another"},
                      "--vault", str(root)))
    assert REASON in other["systemMessage"]  # another session learns it too

    (root / "memdir.toml").write_text(HASHING_TOML)  # fixed: the next prompt asks the server again
    assert "systemMessage" not in ask(root)
    wait_for(lambda: config_notice.pending_refusal(root) is None and not (root / config_notice.RECORD).exists())
    assert "[id:m-a4c81f63]" in ask(root)["hookSpecificOutput"]["additionalContext"]


def test_a_running_server_that_refuses_the_vault_has_the_same_prompt_say_why(misconfigured: Path, tmp_path: Path,
                                                                             hashing_root: Path):
    process = start_server(hashing_root)  # this user's server, serving another vault
    try:
        told = ask(misconfigured)
        assert REASON in told["systemMessage"] and REASON in told["hookSpecificOutput"]["additionalContext"]
        assert ask(misconfigured) == {}
    finally:
        stop_all(hashing_root, process)
        stop_starting(misconfigured)


def test_a_refusal_for_the_user_vault_variable_is_not_kept_once_the_variable_changes(hashing_root: Path, monkeypatch):
    # $MEMDIR_USER_VAULT inside the project is refused as a ConfigError (mcp_server.config.user_vault_root): the
    # record was stamped with memdir.toml only, so after the user fixed the variable every hook still told the old
    # reason and started no server, until memdir.toml itself was edited.
    from mcp_server.config import USER_VAULT_ENV

    assert config_notice.USER_VAULT_ENV == USER_VAULT_ENV  # the hook names it without importing the config
    (hashing_root / ".memdir").mkdir(exist_ok=True)  # made by the server before it refuses a setting
    monkeypatch.setenv(USER_VAULT_ENV, str(hashing_root / "private"))
    config_notice.record(hashing_root, "$MEMDIR_USER_VAULT is inside the project vault")
    assert config_notice.pending_refusal(hashing_root) == ("$MEMDIR_USER_VAULT is inside the project vault", False)
    monkeypatch.setenv(USER_VAULT_ENV, str(hashing_root.parent / "elsewhere"))
    assert config_notice.pending_refusal(hashing_root) is None
    monkeypatch.delenv(USER_VAULT_ENV)
    assert config_notice.pending_refusal(hashing_root) is None


def test_a_running_server_that_refuses_the_vault_for_its_own_user_vault_variable_is_told_after_the_shell_changed(
        hashing_example: Path, hashing_root: Path, monkeypatch):
    # The refusal is stamped with the server's $MEMDIR_USER_VAULT; a shell whose variable was fixed since found no
    # pending record, asked the server, was refused again, and said nothing: memory off without a word.
    from mcp_server.config import USER_VAULT_ENV

    monkeypatch.setenv(USER_VAULT_ENV, str(hashing_example / "private"))  # inside the project: refused
    process = start_server(hashing_root)  # this user's server, serving another vault, with that variable
    try:
        monkeypatch.delenv(USER_VAULT_ENV)  # the user fixed their shell; the running server still has it
        assert ask(hashing_example) == {}  # the server opens the vault: this prompt goes on at once
        wait_for(lambda: (hashing_example / config_notice.RECORD).exists())  # and refuses it
        told = ask(hashing_example)
        assert USER_VAULT_ENV in told["systemMessage"] and "memdir stop" in told["systemMessage"]
        assert USER_VAULT_ENV in told["hookSpecificOutput"]["additionalContext"]
        assert ask(hashing_example) == {}  # once a session
    finally:
        stop_all(hashing_root, process)
        stop_starting(hashing_example)


def test_a_committed_memdir_record_holds_while_git_tracks_it_and_not_after_git_rm_cached(hashing_root: Path):
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=a@example.com", "-c", "user.name=A", *args], cwd=hashing_root,
                       check=True, capture_output=True, timeout=60)

    (hashing_root / ".memdir").mkdir(exist_ok=True)
    (hashing_root / ".memdir" / "state.txt").write_text("carried\n")
    git("init", "-q")
    git("add", "-f", ".memdir/state.txt")
    git("commit", "-q", "-m", "carried")
    config_notice.record(hashing_root, ".memdir is committed to the repository", carried=True)
    assert config_notice.pending_refusal(hashing_root) == (".memdir is committed to the repository", True)
    git("rm", "-r", "-q", "--cached", ".memdir")  # the folder and the record in it stay: the server is asked again
    assert (hashing_root / config_notice.RECORD).exists() and config_notice.pending_refusal(hashing_root) is None
