"""Logging for memdir's long-running processes: to a log file, never to stdout."""

from __future__ import annotations

import logging
import os
import logging.handlers
from pathlib import Path

LOG_FILE = ".memdir/server.log"


class PrivateLog(logging.handlers.RotatingFileHandler):
    """A rotating log only its owner reads: it names vault paths, memory ids and errors with their text.
    Created 0600 (also after a rotation), and an older log left readable by others is closed to them."""

    def _open(self):  # type: ignore[no-untyped-def]
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)


def configure(vault_root: Path, name: str = "server") -> None:
    """Send memdir's and its libraries' warnings to a rotating log file in the vault's .memdir/."""
    configure_file(vault_root / LOG_FILE, name)


def configure_file(path: Path, name: str = "server") -> None:
    """Send memdir's and its libraries' warnings to a rotating log file at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = PrivateLog(path, maxBytes=1_000_000, backupCount=2, encoding="utf-8")
    handler.setFormatter(logging.Formatter(f"%(asctime)s {name}[%(process)d] %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("memdir").setLevel(logging.INFO)
