"""A hook process starts on every prompt of every session: what it imports is its CPU (bench/results/sessions.md, "the
hook process's CPU"). These pin what it does not import, and that the lighter client still speaks the same HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import pytest

from mcp_server import client

REPO = Path(__file__).resolve().parents[2]
# Not needed to connect to 127.0.0.1 and send one JSON request, and each costs a hook milliseconds of CPU:
# dataclasses imports inspect, ast, dis and tokenize; socket.py builds enums from every constant; typing.
NOT_IMPORTED = ("dataclasses", "inspect", "ast", "typing", "socket", "selectors", "http", "email",
                "click", "numpy", "yaml", "pydantic", "vault", "indexer")


def test_a_hook_process_imports_no_module_it_does_not_need(tmp_path):
    # -S: no site, so only what the hook path itself imports is counted (the editable install's finder
    # imports pathlib, re and urllib.parse in every process, hook or not).
    probe = (f"import sys; sys.path.append({str(REPO)!r}); sys.argv[1:] = ['hook', 'prompt', '--vault', {str(tmp_path)!r}]\n"
             "from mcp_server.entry import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             f"print([m for m in {NOT_IMPORTED!r} if m in sys.modules])")
    result = subprocess.run([sys.executable, "-S", "-c", probe], input=b'{"session_id": "s"}', capture_output=True,
                            timeout=60)
    assert result.stdout.decode().strip().splitlines()[-1] == "[]", result.stderr.decode()


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
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        seen: list[bytes] = []

        def answer() -> None:
            connection, _ = listener.accept()
            with connection:
                data = b""
                while b"\r\n\r\n" not in data or not data.endswith(b"}"):
                    data += connection.recv(65536)
                seen.append(data)
                body = b'{"ok": true}'
                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body) + body)

        server = threading.Thread(target=answer)
        server.start()
        info = client.ServerInfo(1, listener.getsockname()[1], "secret", 0.0)
        assert client.request(info, "POST", "/api/hook/prompt", {"a": 1}, timeout=5, vault=Path("/v w")) == {"ok": True}
        server.join(5)
    head = seen[0].decode()
    assert "Authorization: Bearer secret\r\n" in head and "X-Memdir-Vault: /v%20w\r\n" in head
    assert head.endswith('{"a": 1}')
