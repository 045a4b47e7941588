"""What memdir runs for this user, for `status` and `stop`: the one server process and every vault it serves,
then the embedding host.

Both processes leave their address (pid, port, token; 0600) in the per-user folder (client.servers_folder():
`$MEMDIR_SERVERS_DIR`, else `$XDG_RUNTIME_DIR/memdir`, else `~/.cache/memdir/servers`), so they are found
without knowing any project. Standard library only: `status` must be quick.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import client
from ..rss import rss_mb
from ..waiting import wait_until


def folder() -> Path:
    return client.servers_folder()


@dataclass(frozen=True)
class Served:
    vault: str
    pid: int
    port: int | None
    rss_mb: float | None  # of the whole process: the vaults of one server share it
    uptime_s: float
    memories: int | None
    idle_s: float | None
    kind: str = "vault"  # or "embedding-host": the one model every vault of this user asks
    unembedded: int = 0  # units of a fresh or much-changed vault still waiting for their vectors


def embedding_host() -> Served | None:
    """The per-user embedding host, when one runs (see embedding/host.py)."""
    from ..embedding import host as embed_host

    info = embed_host.running()
    if info is None:
        return None
    try:
        status, _, body = embed_host.request(info, "GET", "/health", timeout=2.0)
        health = json.loads(body) if status == 200 else {}
    except (OSError, ValueError):
        health = {}
    return Served(f"(embedding model {embed_host.MODEL_ID}, shared by the vaults)", info.pid, info.port,
                  rss_mb(info.pid), round(time.time() - info.started, 1), None, health.get("idle_seconds"),
                  "embedding-host")


def server_health() -> tuple[client.ServerInfo, dict[str, Any]] | None:
    """This user's server and what its health check says (no vaults listed when it did not answer)."""
    info = client.running()
    if info is None:
        return None
    try:
        return info, client.request(info, "GET", "/api/health", timeout=5.0) or {}
    except (client.Unavailable, client.RemoteError):
        return info, {}


def servers(include_host: bool = True) -> list[Served]:
    """Every vault this user's server serves (uptime and idle time the vault's own), the embedding host last."""
    found = []
    server = server_health()
    if server is not None:
        info, health = server
        rss = rss_mb(info.pid)
        found = [Served(v["vault"], info.pid, info.port, rss, v["uptime_s"], v["memories"], v["idle_s"],
                        unembedded=v.get("unembedded", 0))
                 for v in health.get("vaults", [])]
    host = embedding_host() if include_host else None
    return found + ([host] if host is not None else [])


def close(vault: Path) -> Served | None:
    """Let the server close one vault (the process stays for the others); None when nothing served it."""
    root = vault.resolve()
    chosen = next((s for s in servers(include_host=False) if Path(s.vault) == root), None)
    info = client.running()
    if chosen is None or info is None:
        return None
    closed = client.request(info, "POST", "/api/close", {}, timeout=60.0, vault=root)
    return chosen if closed.get("closed") else None


def stop(timeout: float = 30.0) -> list[Served]:
    """End this user's server (closing every vault gracefully) and the embedding host, with SIGTERM; returns
    what was served, and the server itself when it served no vault yet."""
    server = server_health()
    chosen = servers()
    if server is not None and not any(s.pid == server[0].pid for s in chosen):
        info = server[0]
        chosen.insert(0, Served("(no vault open yet)", info.pid, info.port, rss_mb(info.pid),
                                round(time.time() - info.started, 1), None, None, "server"))
    # The server first, the embedding host once the server is gone: a server closing its vaults may still be
    # embedding (a backfill), and a host stopped under it was started again and left behind.
    deadline = time.monotonic() + timeout
    for kinds in (("vault", "server"), ("embedding-host",)):
        pids = list(dict.fromkeys(s.pid for s in chosen if s.kind in kinds))
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in pids:  # another process's exit: nothing to wait on but time
            wait_until(lambda pid=pid: not client.process_alive(pid), deadline - time.monotonic())
    return chosen
