"""Who may see a vault's pages: a one-time code in the URL `memdir ui` opens, exchanged for a cookie.

The code is good once and for a minute; the browser is then redirected to a URL without it, so it is
neither in the history nor reusable. The cookie (HttpOnly, SameSite=Strict) names a session bound to
one vault; each session carries its own CSRF token, which every POST form echoes back.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

COOKIE = "memdir_ui"
CODE_SECONDS = 60.0
SESSION_SECONDS = 12 * 3600.0


@dataclass(frozen=True)
class Session:
    root: Path  # the vault this browser may see
    csrf: str
    expires: float


@dataclass
class WebAuth:
    clock: object = time.monotonic
    _codes: dict[str, tuple[Path, float]] = field(default_factory=dict)
    _sessions: dict[str, Session] = field(default_factory=dict)

    def issue_code(self, root: Path) -> str:
        """A code for one login to `root` (asked for with the server's bearer token by `memdir ui`)."""
        now = self.clock()  # type: ignore[operator]
        self._codes = {c: v for c, v in self._codes.items() if v[1] > now}
        code = secrets.token_urlsafe(24)
        self._codes[code] = (root, now + CODE_SECONDS)
        return code

    def exchange(self, code: str) -> tuple[str, Session] | None:
        """The cookie value and its session for a valid, unused code; the code is spent either way."""
        now = self.clock()  # type: ignore[operator]
        found = next((c for c in self._codes if hmac.compare_digest(c.encode(), code.encode())), None)
        if found is None:
            return None
        root, expires = self._codes.pop(found)
        if expires <= now:
            return None
        cookie = secrets.token_urlsafe(32)
        session = Session(root, secrets.token_urlsafe(24), now + SESSION_SECONDS)
        self._sessions[cookie] = session
        return cookie, session

    def session(self, cookie: str | None) -> Session | None:
        if not cookie:
            return None
        now = self.clock()  # type: ignore[operator]
        session = next((s for c, s in self._sessions.items() if hmac.compare_digest(c.encode(), cookie.encode())), None)
        return session if session is not None and session.expires > now else None

    @staticmethod
    def csrf_ok(session: Session, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(session.csrf.encode(), str(token).encode())
