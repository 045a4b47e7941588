"""Who may see the web view: one-time codes exchanged for a browser session, and each session's CSRF token.

`memdir ui` asks the server (with the server's bearer token) for a code bound to one vault and puts it in
the URL it opens. The first GET that presents the code gets a random session id in an HttpOnly,
SameSite=Strict cookie and is redirected to a URL without the code, so the code is spent before it can
sit in the history or a Referer. The session, not the request, names the vault: nothing from the URL
chooses which folder is read.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

CODE_SECONDS = 120.0  # a code not exchanged by then is useless (the browser opens within seconds)
SESSION_SECONDS = 12 * 3600.0
COOKIE = "memdir_ui"


@dataclass
class Session:
    root: Path
    csrf: str
    expires: float


@dataclass
class UiSessions:
    codes: dict[str, tuple[Path, float]] = field(default_factory=dict)
    sessions: dict[str, Session] = field(default_factory=dict)

    def new_code(self, root: Path) -> str:
        self._forget_expired()
        code = secrets.token_urlsafe(24)
        self.codes[code] = (root, time.monotonic() + CODE_SECONDS)
        return code

    def exchange(self, code: str) -> str | None:
        """A new session id for a valid code, which is spent whatever happens next; None otherwise."""
        self._forget_expired()
        entry = self.codes.pop(code, None)
        if entry is None:
            return None
        sid = secrets.token_urlsafe(32)
        self.sessions[sid] = Session(entry[0], secrets.token_urlsafe(32), time.monotonic() + SESSION_SECONDS)
        return sid

    def session(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        found = self.sessions.get(sid)
        if found is None or found.expires < time.monotonic():
            self.sessions.pop(sid, None)
            return None
        return found

    @staticmethod
    def csrf_ok(session: Session, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(presented.encode(), session.csrf.encode())  # type: ignore[union-attr]

    def _forget_expired(self) -> None:
        now = time.monotonic()
        for code in [c for c, (_, expires) in self.codes.items() if expires < now]:
            del self.codes[code]
        for sid in [s for s, session in self.sessions.items() if session.expires < now]:
            del self.sessions[sid]
