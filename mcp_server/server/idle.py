"""When the server should let go of a vault: nobody asked about it for a while, or the vault is gone.

A server started by a prompt hook used to outlive its session by days, and even its vault folder,
holding the vault's indices (and once the model: hundreds of MB). Nothing is lost by leaving: hooks spool
their events before they send them, every write is already on disk, and the next hook or
`memdir mcp` call starts a server again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from vault.config import CONFIG_NAME


class IdleWatch:
    """Remembers the vault's last request and says why the server should let go of it ("" while it should stay)."""

    def __init__(self, root: Path, idle_exit_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.root = root
        self.idle_exit_seconds = idle_exit_seconds
        self.clock = clock
        self.started = self.last_request = clock()
        self.had_config = (root / CONFIG_NAME).exists()

    def touch(self) -> None:
        self.last_request = self.clock()

    def idle_seconds(self) -> float:
        return self.clock() - self.last_request

    def reason(self) -> str:
        if not self.root.is_dir():
            return f"the vault folder {self.root} is gone"
        if self.had_config and not (self.root / CONFIG_NAME).exists():
            return f"{self.root / CONFIG_NAME} is gone"
        if self.idle_exit_seconds > 0 and self.idle_seconds() >= self.idle_exit_seconds:
            return f"no request for {self.idle_seconds():.0f} s (idle_exit_seconds = {self.idle_exit_seconds:g})"
        return ""

    def check_every(self) -> float:
        """How often to ask: often enough to notice a deleted vault within 15 s."""
        return min(5.0, self.idle_exit_seconds / 2) if self.idle_exit_seconds > 0 else 5.0
