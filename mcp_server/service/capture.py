"""Storing a Claude Code exchange as a working memory: redacted, private when it drew on private memories.

Capture is automatic, so it never refuses: credentials are replaced by [REDACTED:kind] where a
tool call would be refused, and a capture that cannot be written is logged, not raised, except on a full disk: the
Stop's spooled event is then put back and captured when there is room (hooks_server.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Sequence

from vault import VaultError
from vault.errors import DiskFullError
from vault.secrets import redact

from . import leaks
from . import privacy as vaults
from .app import App

log = logging.getLogger("memdir.hooks")
MAX_EXCHANGE_CHARS = 12_000
SPOOL = ".memdir/spool"  # where hook processes write each event before they send it (hooks.py)


@dataclass(frozen=True)
class Exchange:
    session_id: str
    prompt: str
    answer: str
    shown: Sequence[Any]  # the memories shown during the turn (None for ids no longer indexed)
    previous: str | None  # the session's previous exchange, linked as `previous:`
    at: float | None = None  # when it happened (epoch seconds), if not now: a spooled exchange replayed later


def redacted(app: App, text: str) -> str:
    """Captured text with credentials replaced (when the vault scans for secrets)."""
    return redact(text)[0] if app.config.vault.scan_secrets else text


def store_exchange(app: App, exchange: Exchange) -> str | None:
    """Write the exchange into working/ and return its id; None when it could not be written. DiskFullError when
    nothing was written for a full disk."""
    prompt = redacted(app, exchange.prompt).strip()
    text = f"User: {prompt}\n\nAssistant: {redacted(app, exchange.answer).strip()}"[:MAX_EXCHANGE_CHARS]
    extra: dict[str, Any] = {"session": exchange.session_id}
    title = "Exchange: " + (prompt.splitlines()[0][:80] if prompt else "(no prompt)")
    curator = app.curator
    # An exchange that repeats a private memory shown in it (or names any private memory) is private too, and is kept in the user
    # vault when there is one (else it stays, marked private, in working/). See leaks.py for "repeats".
    private = [m for m in exchange.shown if m is not None and not vaults.visible(m, include_private=False)]
    topics = vaults.shared_tags(app) if private else ()
    if leaks.first_leak({"content": text}, private, vaults.private_memories(app), topics) is not None:
        extra["privacy"] = vaults.PRIVATE
        if app.user_root is not None:
            curator = vaults.add_side(app, vaults.PRIVATE).curator
    before = curator.index.memory(exchange.previous) if exchange.previous else None
    # Consecutive exchanges give each other context; a shared one never names a private one before it (kept private
    # in working/ when there is no user vault): the lifecycle may commit it.
    if before is not None and (extra.get("privacy") == vaults.PRIVATE or vaults.visible(before, include_private=False)):
        extra["previous"] = before.id
    twin = curator.index.find_duplicate(text, "history")
    if twin is not None and (_this_stops(twin, extra, exchange.previous) or _restated_by(twin, exchange.at)):
        return twin.id  # written (or restated) by this Stop before the session's save failed: a replay, not a restatement
    try:
        # Not compared with similar memories: a capture reports no near-duplicates, and its embedding would
        # queue before the prompts of every other session (the index embeds it in its next batch instead).
        added = curator.add(text, title=title, type="history", collection="working", extra=extra, compare=False,
                            now=None if exchange.at is None else datetime.fromtimestamp(int(exchange.at), timezone.utc))
    except DiskFullError:
        raise  # nothing written: the Stop's spooled event is put back (a file written but not indexed is returned)
    except VaultError as exc:
        log.warning("session %s: exchange not stored: %s", exchange.session_id, exc)
        return None
    return added.memory.id


def _this_stops(twin: Any, extra: dict[str, Any], intended: str | None) -> bool:
    """Whether the same text already stored is this very Stop's capture, written before its turn was settled (the
    turn log or the session's save failed, the Stop was put back, and the server restarted since: its record of the
    capture is gone). Such an exchange names the session and follows the session's last saved exchange: once the
    session is saved, a later capture follows that exchange itself, so a true restatement never looks so. When the
    exchange it follows (`intended`) is not written as its `previous:` (removed, or kept on the private side), the two
    cannot be told apart, and it counts as said again: a repeat of the session's first exchange was not counted
    (review of session 12)."""
    if intended and "previous" not in extra:
        return False
    return (twin.frontmatter.get("session") == extra["session"]
            and twin.frontmatter.get("previous") == extra.get("previous"))


def _restated_by(twin: Any, at: float | None) -> bool:
    """Whether the same text already stored was restated by this very Stop before its turn was settled (see _this_stops;
    here the text was another session's, or an earlier exchange of this one). A restatement is stamped with its Stop's
    own time (`at`, the spool file's, on every try), so the stamp tells it after a restart: without it the next
    server's replay counted one saying twice (review of session 12). A different Stop restating the same text in the
    same second would read as this one's, and is not counted: one saying too few, at worst, never one too many."""
    stamp = twin.frontmatter.get("restated_at")
    if at is None or stamp is None:
        return False
    try:
        moment = stamp if isinstance(stamp, datetime) else datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return False  # a hand-edited stamp: not this Stop's
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp() == int(at)
