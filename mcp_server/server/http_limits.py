"""The HTTP connection of the per-user server, with bounds a local stranger cannot stretch.

Anyone on the machine can connect to 127.0.0.1 without the token: the token is checked only once a
request's headers are in. uvicorn waits for those headers forever, so a user who opened ~20,000
connections and sent nothing (or half a header) held one file descriptor each until the server ran out
and every memdir request timed out. Here a connection must deliver its request headers within
HEADER_SECONDS (from connecting, or from the end of its previous answer) and its body within BODY_SECONDS
of the headers, or it is closed; and at most MAX_WAITING connections may be waiting for their headers at
once, MAX_CONNECTIONS open in all: beyond that the connection waiting longest for its headers is closed
(the new one when none waits). Every client is on 127.0.0.1, so the caps cannot be per address; but a real
client sends its headers the moment it connects, so a flood of silent connections only evicts itself.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("memdir.server")
HEADER_SECONDS = 5.0  # a client sends its headers at once; the hook waits under a second in all
BODY_SECONDS = 30.0  # a request body is at most MAX_BODY (1 MB) from this machine
MAX_WAITING = 256  # connections that have not yet sent a request's headers
MAX_CONNECTIONS = 1024  # every open connection (an MCP session's event stream stays open)


class BoundedH11(H11Protocol):
    """uvicorn's h11 protocol with a header deadline, a body deadline and caps on open connections."""

    header_seconds = HEADER_SECONDS
    body_seconds = BODY_SECONDS
    max_waiting = MAX_WAITING
    max_connections = MAX_CONNECTIONS
    warned = float("-inf")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self.waiting = True  # for headers (counted against max_waiting)
        self.waiting_since = 0.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.header_seconds, "its request headers")
        waiting = [c for c in self.connections if getattr(c, "waiting", False)]
        if len(waiting) > self.max_waiting or len(self.connections) > self.max_connections:
            # The longest-waiting connection goes, not the newest: a real client sends its headers the moment it
            # connects, so under a flood of silent connections it is the flood that is let go.
            oldest = min(waiting, key=lambda c: c.waiting_since, default=self)
            if self.loop.time() - BoundedH11.warned > 10:  # a flood is worth one line now and then, not one each
                BoundedH11.warned = self.loop.time()
                log.warning("a flood of connections: %d open, %d waiting for their headers; closing the oldest",
                            len(self.connections), len(waiting))
            oldest.waiting = False
            oldest.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self.waiting = False
        self._disarm()
        super().connection_lost(exc)

    def _follow(self) -> None:
        """Keep the deadline that fits where the client is: headers due, body due, or nothing due from it."""
        state = self.conn.their_state
        if state is h11.IDLE:  # a new request (or its first bytes) is due
            if not self.waiting:
                self.waiting = True
                self._arm(self.header_seconds, "its request headers")
        elif state is h11.SEND_BODY:
            if self.waiting:
                self.waiting = False
                self._arm(self.body_seconds, "its request body")
        else:
            self.waiting = False
            self._disarm()

    def _arm(self, seconds: float, what: str) -> None:
        self._disarm()
        self.waiting_since = self.loop.time()
        self._deadline = self.loop.call_later(seconds, self._expire, what)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self, what: str) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            log.info("closed a connection that did not send %s in time", what)
            self.transport.close()
