"""A local stranger cannot hold the server's connections: headers and bodies are due in time, open connections are capped."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_server import client
from mcp_server.server.http_limits import HEADER_SECONDS, BoundedH11
from mcp_server.waiting import wait_until

from .processes import start_server, stop_all


class Quick(BoundedH11):
    header_seconds = 0.5
    body_seconds = 0.5
    max_waiting = 5
    max_connections = 50


async def echo(request: Request) -> JSONResponse:
    return JSONResponse({"bytes": len(await request.body())})


@pytest.fixture
def port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/", echo, methods=["POST"])]), http=Quick,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    assert wait_until(lambda: server.started, 10, pause=0.01)  # uvicorn sets a flag, no event
    yield sock.getsockname()[1]
    server.should_exit = True
    thread.join(10)
    sock.close()


def closed_by_server(connection: socket.socket, within: float) -> bool:
    """True when the server closes the connection within `within` seconds (it sends nothing else)."""
    connection.settimeout(within)
    try:
        return connection.recv(1024) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def post(port: int, body: bytes = b"{}") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                           % (len(body), body))
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    return answer


def test_a_connection_that_sends_nothing_or_half_a_header_is_closed_after_the_header_deadline(port):
    with socket.create_connection(("127.0.0.1", port)) as silent, socket.create_connection(("127.0.0.1", port)) as half:
        half.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
        assert closed_by_server(silent, 5) and closed_by_server(half, 5)


def test_a_body_that_stops_arriving_is_cut_off_after_the_body_deadline(port):
    with socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"a\":")
        assert closed_by_server(slow, 5)
    assert b'{"bytes":2}' in post(port)  # a whole request is still served


def test_over_the_cap_the_longest_waiting_connection_goes_and_a_real_request_still_gets_through(port):
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
    try:
        extra = socket.create_connection(("127.0.0.1", port))
        assert closed_by_server(held[0], 0.4)  # over the cap: the oldest silent one, long before its deadline
        assert b'{"bytes":2}' in post(port)  # a client that sends its request at once is served in the flood
        extra.close()
    finally:
        for connection in held:
            connection.close()


@pytest.mark.slow
def test_the_memdir_server_closes_a_silent_connection_and_its_descriptor(hashing_example: Path):
    process = start_server(hashing_example)
    try:
        info = client.running()
        before = len(os.listdir(f"/proc/{info.pid}/fd"))
        silent = [socket.create_connection(("127.0.0.1", info.port)) for _ in range(50)]
        assert all(closed_by_server(c, HEADER_SECONDS + 5) for c in silent)
        for connection in silent:
            connection.close()
        assert len(os.listdir(f"/proc/{info.pid}/fd")) <= before + 2
        assert client.request(info, "GET", "/api/health", timeout=5)["pid"] == info.pid
    finally:
        stop_all(hashing_example, process)
