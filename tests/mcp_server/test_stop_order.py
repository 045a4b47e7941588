"""`memdir stop --all` leaves no embedding host behind, even when a vault was still embedding."""

from __future__ import annotations

import pytest

from mcp_server.embedding import host as embed_host
from mcp_server.server import registry
from mcp_server.server.registry import Served


def test_a_server_on_its_way_out_starts_no_embedding_host(monkeypatch):
    started = []
    monkeypatch.setattr(embed_host, "ensure_host", lambda *a, **k: started.append(a))
    embedder = embed_host.SharedEmbedder()
    embedder.close()  # what the server does when it starts to exit
    with pytest.raises(embed_host.EmbedderUnavailable, match="exiting"):
        embedder.embed(["a backfill's last batch"])
    assert started == []


def test_stop_all_ends_the_server_before_the_embedding_host(monkeypatch):
    server = Served("/v", 101, 1, None, 1.0, 3, 1.0)
    host = Served("(model)", 202, 2, None, 1.0, None, None, "embedding-host")
    alive = {101, 202}
    exiting: set[int] = set()
    killed = []
    monkeypatch.setattr(registry, "server_health", lambda: None)
    monkeypatch.setattr(registry, "servers", lambda include_host=True: [server, host])

    def kill(pid, sig):
        killed.append((pid, sorted(alive)))
        exiting.add(pid)  # it exits, a moment later

    def process_alive(pid):
        if pid in exiting:  # signalled: still closing its vaults the first time it is looked at ...
            exiting.discard(pid)
            return True
        if any(pid == signalled for signalled, _ in killed):
            alive.discard(pid)  # ... gone the next
        return pid in alive

    monkeypatch.setattr(registry.os, "kill", kill)
    monkeypatch.setattr(registry.client, "process_alive", process_alive)
    monkeypatch.setattr(registry.time, "sleep", lambda seconds: None)
    assert registry.stop() == [server, host]
    assert killed == [(101, [101, 202]), (202, [202])]  # the host only once the server is gone
