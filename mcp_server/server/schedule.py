"""Work the vault server repeats on its own: the lifecycle, at start and then every `[lifecycle] every`.

Captured exchanges land in `working/`; without a schedule nothing promoted or expired them until
someone typed `memdir gc`. The job runs on its own daemon thread so a slow run never holds a
request, and a failing run is logged and retried at the next tick instead of ending the server.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

log = logging.getLogger("memdir.schedule")


class Every:
    """Call `job` now and then every `interval` seconds until `stop()`; `interval` None means never."""

    def __init__(self, interval: float | None, job: Callable[[], object], name: str) -> None:
        self.interval = interval
        self.job = job
        self.name = name
        self.runs = 0  # completed runs, failed or not (tests and `status` read it)
        self.ran = threading.Event()  # set after each run
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.interval is None or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name=f"memdir-{self.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Ask the loop to end and wait for a run in progress to finish its current file."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                result = self.job()
                log.debug("%s ran: %s", self.name, result)
            except Exception:  # noqa: BLE001 - one bad run must not end the schedule or the server
                log.exception("%s failed; trying again in %s s", self.name, self.interval)
            self.runs += 1
            self.ran.set()
            if self._stop.wait(self.interval):
                return
