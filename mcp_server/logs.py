"""Logging for memdir's long-running processes: to a log file, never to stdout."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

LOG_FILE = ".memdir/server.log"


def configure(vault_root: Path, name: str = "server") -> None:
    """Send memdir's and its libraries' warnings to a rotating log file in the vault's .memdir/."""
    configure_file(vault_root / LOG_FILE, name)


def configure_file(path: Path, name: str = "server") -> None:
    """Send memdir's and its libraries' warnings to a rotating log file at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8")
    handler.setFormatter(logging.Formatter(f"%(asctime)s {name}[%(process)d] %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("memdir").setLevel(logging.INFO)
