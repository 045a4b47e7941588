"""The hooks' stdlib HTTP client reads every answer shape the server's HTTP stack can send."""

from __future__ import annotations

import socket
import threading

import pytest

from mcp_server import client


def answer_with(raw: bytes, *, pieces: int = 1) -> tuple[int, bytes]:
    ours, theirs = socket.socketpair()

    def send() -> None:
        step = max(1, len(raw) // pieces)
        for start in range(0, len(raw), step):
            theirs.sendall(raw[start:start + step])  # split across reads, as TCP may
        theirs.close()

    sender = threading.Thread(target=send)
    sender.start()
    try:
        return client._read_response(ours)
    finally:
        sender.join()
        ours.close()


@pytest.mark.parametrize("pieces", [1, 7, 300])
def test_a_content_length_answer_is_read_whole_however_it_arrives(pieces: int):
    body = b'{"result": "' + b"x" * 200 + b'"}'
    raw = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body) + body
    assert answer_with(raw, pieces=pieces) == (200, body)


def test_a_chunked_answer_is_reassembled():
    raw = b"HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3;x=1\r\n 1}\r\n0\r\n\r\n"
    assert answer_with(raw) == (401, b'{"a": 1}')


def test_an_answer_cut_short_is_an_error_not_half_a_body():
    with pytest.raises(ValueError):
        answer_with(b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{\"short\"")
    with pytest.raises(ValueError):
        answer_with(b"HTTP/1.1 200 OK\r\ncontent-len")


def test_a_server_that_is_not_there_is_unavailable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: the connection is refused
        with pytest.raises(client.Unavailable):
            client.request(client.ServerInfo(1, port, "t", 0.0), "GET", "/api/health", timeout=2)


def test_an_address_file_others_could_have_written_is_not_trusted_with_a_prompt():
    folder = client.own_folder()
    assert folder.stat().st_mode & 0o077 == 0
    address = folder / client.ADDRESS_FILE
    address.write_text('{"pid": 1, "port": 9, "token": "t", "started": 0}')
    address.chmod(0o600)
    assert client.ServerInfo.read() == client.ServerInfo(1, 9, "t", 0.0)
    address.chmod(0o644)  # readable by others: not a file this user's server wrote
    assert client.ServerInfo.read() is None


def test_a_server_that_exits_while_starting_is_not_given_an_earlier_starts_reason(tmp_path, monkeypatch):
    """server.log is appended to by every server: a start that died without a "cannot serve" line (killed, a
    crash) was reported with the reason an earlier start gave for this vault (a memdir.toml fixed since)."""
    import os
    import sys

    root = tmp_path / "vault"
    client.own_folder()
    client.log_file().write_text(f"2026-11-28 09:00:00,000 memdir.server WARNING cannot serve {root}: memdir.toml "
                                 "[search] unknown key(s) no_such_key\n")
    monkeypatch.setattr(client, "start_detached", lambda _root: os.posix_spawn(
        sys.executable, [sys.executable, "-c", "pass"], dict(os.environ)))
    with pytest.raises(client.Unavailable) as refused:
        client.ensure(root, timeout=60)
    assert str(refused.value) == f"the memdir server for {root} exited while starting; see {client.log_file()}"
