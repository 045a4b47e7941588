"""What memdir runs for this user: one small file per live vault server, for `status` and `stop`.

Each server's address and token stay in its vault (`.memdir/server.json`, 0600); the registry holds
only where to look (`$MEMDIR_SERVERS_DIR`, else `$XDG_RUNTIME_DIR/memdir`, else
`~/.cache/memdir/servers`), so a server in any project can be found without knowing the project.
Entries of dead processes are ignored and swept. Standard library only: `status` must be quick.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import client


def folder() -> Path:
    explicit = os.environ.get("MEMDIR_SERVERS_DIR")
    if explicit:
        return Path(explicit)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "memdir" if runtime else Path.home() / ".cache" / "memdir" / "servers"


def register(pid: int, vault: Path) -> Path:
    where = folder()
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    entry = where / f"{pid}.json"
    temp = entry.with_suffix(".tmp")
    temp.write_text(json.dumps({"pid": pid, "vault": str(vault), "started": time.time()}))
    os.replace(temp, entry)
    return entry


def unregister(pid: int) -> None:
    try:
        (folder() / f"{pid}.json").unlink()
    except FileNotFoundError:
        pass


@dataclass(frozen=True)
class Served:
    vault: str
    pid: int
    port: int | None
    rss_mb: float | None
    uptime_s: float
    memories: int | None
    idle_s: float | None
    kind: str = "vault"  # or "embedding-host": the one model every vault server of this user asks


def embedding_host() -> Served | None:
    """The per-user embedding host, when one runs (see embed_host.py)."""
    from . import embed_host

    info = embed_host.running()
    if info is None:
        return None
    try:
        status, _, body = embed_host.request(info, "GET", "/health", timeout=2.0)
        health = json.loads(body) if status == 200 else {}
    except (OSError, ValueError):
        health = {}
    return Served(f"(embedding model {embed_host.MODEL_ID}, shared by the vault servers)", info.pid, info.port,
                  rss_mb(info.pid), round(time.time() - info.started, 1), None, health.get("idle_seconds"),
                  "embedding-host")


def servers(include_host: bool = True) -> list[Served]:
    """Every live server of this user, with what its health check says (None where it did not answer);
    the shared embedding host last."""
    found = []
    where = folder()
    for entry in sorted(where.glob("*.json")) if where.is_dir() else ():
        try:
            data = json.loads(entry.read_text())
            pid, vault = int(data["pid"]), Path(data["vault"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not client.process_alive(pid):
            entry.unlink(missing_ok=True)  # a server that was killed could not remove its own entry
            continue
        info = client.ServerInfo.read(vault)
        health: dict[str, Any] = {}
        if info is not None and info.pid == pid:
            try:
                health = client.request(info, "GET", "/api/health", timeout=2.0) or {}
            except (client.Unavailable, client.RemoteError):
                health = {}
        found.append(Served(str(vault), pid, info.port if info else None, rss_mb(pid),
                            round(time.time() - float(data.get("started", time.time())), 1),
                            health.get("memories"), health.get("idle_seconds")))
    host = embedding_host() if include_host else None
    return found + ([host] if host is not None else [])


def stop(vault: Path | None = None, timeout: float = 30.0) -> list[Served]:
    """End the servers of `vault` (all of this user's, the embedding host too, when None) with SIGTERM:
    a graceful shutdown."""
    chosen = [s for s in servers(include_host=vault is None)
              if vault is None or Path(s.vault).resolve() == vault.resolve()]
    for served in chosen:
        try:
            os.kill(served.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    for served in chosen:
        while client.process_alive(served.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
    return chosen


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        return None
    return None
