"""A hook process starts on every prompt of every session: what it imports is its CPU (bench/results/sessions.md, "the
hook process's CPU"). These pin what it does not import, and that the lighter client still speaks the same HTTP."""

from __future__ import annotations

import ast
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import pytest

from mcp_server import client, plain_json
from mcp_server.clients.hooks import read_input

REPO = Path(__file__).resolve().parents[2]
# Not needed to connect to 127.0.0.1 and send one JSON request, and each costs a hook milliseconds of CPU:
# dataclasses imports inspect, ast, dis and tokenize; socket.py builds enums from every constant; typing; json
# and pathlib import re (enum, functools, collections), pathlib urllib.parse too (plain_json.py, locate.py).
NOT_IMPORTED = ("dataclasses", "inspect", "ast", "typing", "socket", "selectors", "http", "email", "json", "re",
                "enum", "pathlib", "urllib", "click", "numpy", "yaml", "pydantic", "vault", "indexer")


def hook_process(args: list[str], stdin: bytes, env: dict[str, str] | None = None,
                 absent: tuple[str, ...] = NOT_IMPORTED) -> tuple[list[str], str, str]:
    """Run `memdir ARGS` as a hook process without site (-S: the editable install's finder imports pathlib, re
    and urllib.parse in every process, hook or not, so only what the hook path itself imports is counted).
    Returns the listed modules it imported, its output and its stderr."""
    probe = (f"import sys; sys.path.append({str(REPO)!r}); sys.argv[1:] = {args!r}\n"
             "from mcp_server.entry import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             f"print('IMPORTED', [m for m in {absent!r} if m in sys.modules])")
    result = subprocess.run([sys.executable, "-S", "-c", probe], input=stdin, capture_output=True, timeout=60,
                            env={**os.environ, **(env or {})})
    output, _, imported = result.stdout.decode().rpartition("IMPORTED ")
    return ast.literal_eval(imported.strip()), output, result.stderr.decode()


class OneAnswer:
    """A stand-in server on 127.0.0.1 that reads one request (head and JSON body) and answers it with `body`."""

    def __init__(self, body: bytes) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.body = body
        self.seen: list[bytes] = []
        self.thread = threading.Thread(target=self._answer)
        self.thread.start()

    def _answer(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            data = b""
            while b"\r\n\r\n" not in data or not data.endswith(b"}"):
                data += connection.recv(65536)
            self.seen.append(data)
            connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(self.body) + self.body)

    def close(self) -> None:
        self.thread.join(10)
        self.listener.close()


def test_a_hook_process_imports_no_module_it_does_not_need(tmp_path):
    imported, _, stderr = hook_process(["hook", "prompt", "--vault", str(tmp_path)], b'{"session_id": "s"}')
    assert imported == [], stderr


def test_a_malformed_hook_input_is_named_as_such_in_a_process_without_json(tmp_path):
    # The C scanner raises json.decoder's error, which it finds only once json is imported: a hook's stderr read
    # "SystemError: <_json.Scanner object …> returned NULL without setting an exception".
    imported, _, stderr = hook_process(["hook", "prompt", "--vault", str(tmp_path)], b'{"session_id": "s", "x": 1 2}')
    assert imported == [] and "ValueError: not JSON" in stderr and "SystemError" not in stderr


def test_a_prompt_hook_spools_asks_and_prints_its_context_without_json_re_or_pathlib(tmp_path):
    vault = tmp_path / "project" / ".memories"
    vault.mkdir(parents=True)
    (vault / "memdir.toml").write_text("")
    servers = tmp_path / "servers"
    servers.mkdir(mode=0o700)
    context = "KNOWN CONTEXT: the retries are idempotent \u2014 \u00fc"
    server = OneAnswer(json.dumps({"additionalContext": context}).encode())
    (servers / client.ADDRESS_FILE).write_text(json.dumps({"pid": os.getpid(), "port": server.port, "token": "t",
                                                           "started": 0.0}))
    (servers / client.ADDRESS_FILE).chmod(0o600)
    event = {"session_id": "s-1", "prompt": "are the retries safe? \u00e9", "cwd": str(vault.parent)}
    try:
        # A hook whose server runs takes no lock, so it needs no fcntl either (0.5 ms of its CPU at load 17); nor the
        # codec module of "utf-8-sig" (0.6 ms at load 18: bench/results/s23-hook23.md).
        imported, output, stderr = hook_process(["hook", "prompt"], json.dumps(event).encode(),
                                                {"MEMDIR_SERVERS_DIR": str(servers), "MEMDIR_VAULT": ""},
                                                NOT_IMPORTED + ("fcntl", "encodings.utf_8_sig"))
    finally:
        server.close()
    asked = [json.loads(data.partition(b"\r\n\r\n")[2]) for data in server.seen]
    assert imported == [], stderr
    assert json.loads(output) == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}}
    [spooled] = (vault / ".memdir" / "spool").glob("*-prompt.json")  # the stand-in server took nothing
    record = json.loads(spooled.read_text())
    assert record["event"] == "prompt" and record["payload"]["prompt"] == event["prompt"]
    assert asked[0]["prompt"] == event["prompt"] and asked[0]["spool"] == spooled.name


@pytest.mark.parametrize("path", ["/home/a b/proj/.memories", "/tmp/ünïcode/vault", "/x/%41?&#=+;,/ok~._-"])
def test_a_vault_path_is_quoted_as_urllib_quotes_it(path: str):
    assert client.quote(path) == quote(path)


def test_a_server_that_takes_the_connection_and_says_nothing_is_no_answer():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        with pytest.raises(client.NoAnswer):
            client.request(client.ServerInfo(1, listener.getsockname()[1], "t", 0.0), "GET", "/api/health",
                           timeout=0.3)


def test_a_request_reaches_the_server_with_its_token_and_vault_and_reads_the_answer():
    server = OneAnswer(b'{"ok": true}')
    try:
        info = client.ServerInfo(1, server.port, "secret", 0.0)
        assert client.request(info, "POST", "/api/hook/prompt", {"a": 1}, timeout=5, vault=Path("/v w")) == {"ok": True}
    finally:
        server.close()
    seen = server.seen
    head = seen[0].decode()
    assert "Authorization: Bearer secret\r\n" in head and "X-Memdir-Vault: /v%20w\r\n" in head
    assert head.endswith('{"a": 1}')


@pytest.mark.parametrize("value", [{"session_id": "s", "prompt": "caf\u00e9 \"quoted\"\n\ttab \U0001f600", "client_pids": [12, 1],
                                    "nested": {"a": [None, True, False, 1.5, -0.0, 10**20, ""]}}, [], "x", 3, 1e300])
def test_the_hooks_json_reads_and_writes_what_json_does(value):
    text = json.dumps(value)
    assert plain_json.dumps(value) == text and plain_json.dumps(value, ensure_ascii=False) == json.dumps(value, ensure_ascii=False)
    assert plain_json.loads(text) == value and plain_json.loads(f" \n{text}\r\n".encode()) == value


@pytest.mark.parametrize("text", ["", "  ", "{", "[1] 2", "nope", '{"a": }', "\"open"])
def test_the_hooks_json_refuses_what_json_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        plain_json.loads(text)


@pytest.mark.parametrize("data", [b'\xef\xbb\xbf{"prompt": "x"}', b'{"prompt": "\xed\xa0\x80"}'])
def test_the_hooks_json_reads_the_bytes_json_reads(data):
    """A byte-order mark before the payload, a lone surrogate written as raw bytes: json reads both, and a hook that
    refused them lost the turn before it was spooled (review of session 9)."""
    assert plain_json.loads(data) == json.loads(data)
    assert read_input(data) == json.loads(data)  # as a hook reads its stdin


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbfx", b"\xef\xbbx", "\u00fc\ufeff".encode(),
                                  b"\xed\xa0\x80", b"a\xffb"])
def test_the_hooks_read_utf8_as_the_utf8_sig_codec_does_without_importing_it(data):
    for errors in ("strict", "surrogatepass", "replace"):
        try:
            expected: str | type[Exception] = data.decode("utf-8-sig", errors)
        except UnicodeDecodeError:
            expected = UnicodeDecodeError
        try:
            got: str | type[Exception] = plain_json.decoded(data, errors)
        except UnicodeDecodeError:
            got = UnicodeDecodeError
        assert got == expected


def test_a_hooks_parent_chain_follows_proc_from_its_parent_upward():
    """What ties a session to its MCP connection: each pid's parent as /proc/<pid>/stat names it (the name in
    parentheses may hold spaces), up to the depth asked, and never pid 1."""
    from mcp_server.clients.hooks import ancestors

    chain = ancestors(depth=3)
    assert chain[0] == os.getppid()
    for child, parent in zip(chain, chain[1:]):
        assert client.proc_fields(child)[1] == str(parent)
    assert 1 not in chain[1:] and client.proc_fields(os.getpid())[0] in "RSD"
