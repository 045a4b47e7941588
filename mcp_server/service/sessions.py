"""What each assistant session has seen and scored, kept under .memdir/sessions/ so it survives restarts.

A session is a Claude Code session (its hooks send `session_id`) or an MCP connection (the
stdio proxy sends its own id). Memories shown to a session, by a hook or by a tool, are
remembered with the version shown, so that the next turn can ask for exactly those to be
scored and so that an unchanged memory is not injected twice.
"""

from __future__ import annotations

import hashlib
import json
import re
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from vault import atomic

MAX_AGE_SECONDS = 7 * 86400
log = logging.getLogger("memdir.sessions")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass
class Session:
    id: str
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    turn: int = 0
    shown: dict[str, str] = field(default_factory=dict)  # memory id -> content hash when last shown
    awaiting: list[str] = field(default_factory=list)  # shown in the last completed turn, not yet scored
    turn_shown: list[str] = field(default_factory=list)  # shown during the current turn
    completed: bool = False  # the assistant finished its last answer (Stop hook)
    scoring_required: bool = False  # the prompt hook asked for a score this turn
    scored_this_turn: bool = False
    prompt: str = ""  # the user's prompt of the current turn (saved for the Stop hook)
    last_exchange: str | None = None  # the working memory that holds the previous exchange
    answered: str = ""  # a fingerprint of the last completed answer (a Stop that repeats it is no new turn)
    links: list[str] = field(default_factory=list)  # other session ids that belong to the same conversation
    client_pids: list[int] = field(default_factory=list)  # processes of the client (used to link MCP and hooks)
    insights_calls: int = 0  # get_context_insights calls, for the now-and-then review reminder

    def show(self, ids: Iterable[tuple[str, str]], scorable: bool = True) -> None:
        for memory_id, content_hash in ids:
            self.shown[memory_id] = content_hash
            if scorable and memory_id not in self.turn_shown:
                self.turn_shown.append(memory_id)

    def mark_scored(self, ids: Iterable[str]) -> None:
        scored = set(ids)
        self.awaiting = [i for i in self.awaiting if i not in scored]
        self.scored_this_turn = True


class SessionStore:
    """One JSON file per session; a lock per process keeps read-modify-write cycles whole."""

    def __init__(self, vault_root: Path) -> None:
        self.folder = vault_root / ".memdir" / "sessions"
        self._lock = threading.RLock()
        # One lock per session serializes whole read-change-write cycles of that session (a prompt hook
        # and a late Stop hook may run at once), while other sessions proceed in parallel.
        self._session_locks: dict[str, threading.Lock] = {}
        # client pid -> {session id: updated} of the sessions its hooks reported: asked on every tool
        # call, so it is kept here rather than found by reading every session file each time.
        self._by_client: dict[int, dict[str, float]] | None = None
        # Sessions changed whose save has not finished yet (update_answered): their loads wait for it.
        self._saving: dict[str, threading.Event] = {}
        self._saver: ThreadPoolExecutor | None = None

    def path(self, session_id: str) -> Path:
        safe = _SAFE.sub("_", session_id)[:80]
        digest = hashlib.sha256(session_id.encode()).hexdigest()[:8]  # distinct ids never share a file
        return self.folder / f"{safe}-{digest}.json"

    def load(self, session_id: str) -> Session:
        self.saved(session_id)  # the session as its last change left it, never the file before that change's save
        with self._lock:
            try:
                data = json.loads(self.path(session_id).read_text())
                return Session(**{k: v for k, v in data.items() if k in Session.__dataclass_fields__})
            except (FileNotFoundError, ValueError, TypeError):
                return Session(session_id, updated=0.0)  # not updated yet: its first save says when

    def save(self, session: Session, at: float | None = None) -> None:
        """`at`: when the event the change applies happened (a spooled one replayed later), else now. Never earlier
        than the session's last update: a late replayed event does not make a live session look idle."""
        with self._lock:
            session.updated = time.time() if at is None else max(session.updated, at)
            self._note_clients(session)
            # Saved on every search and hook call: no fsync (a power cut may lose the last turn's
            # bookkeeping, never a memory); the rename still keeps the file whole.
            atomic.write_state(self.path(session.id), json.dumps(asdict(session), indent=1).encode(), durable=False)

    def update(self, session_id: str, change: Any, at: float | None = None) -> Session:
        """Load, change (a callable taking the Session), save (`at`: see save): one cycle no other update of this
        session interleaves with. Every change to a session goes through here; load/save alone lose updates."""
        with self._session_lock(session_id):
            session = self.load(session_id)
            change(session)
            self.save(session, at)
            return session

    def update_answered(self, session_id: str, change: Callable[[Session], None],
                        done: Callable[[BaseException | None], None], within: float | None = None) -> Session | None:
        """`update` for a change whose caller answers before the session is saved (a prompt's context): `change` runs
        now; the save, then `done` (given the save's error, if any: the spool file's fate), run on the store's saving
        thread. The session's lock is held until both are done, so its next update (a Stop sent as soon as the context
        came) and every `load` see the saved change. The save (a JSON dump, a write, a rename) was 2 ms of CPU and
        9-12 ms of wall on the prompt's answer path at load 7-10 (bench/results/s20-hook20.md). `within`: how long to
        wait for another update of the session under way; None, with nothing changed, when it held the session longer."""
        lock = self._session_lock(session_id)
        if not lock.acquire(timeout=-1 if within is None else within):
            return None  # another update held the session past `within` seconds: nothing changed
        try:
            session = self.load(session_id)
            change(session)
            saving = self._saving[session_id] = threading.Event()
        except BaseException:
            lock.release()
            raise

        def save() -> None:
            error: BaseException | None = None
            try:
                self.save(session)
            except BaseException as exc:  # noqa: BLE001 - handed to `done`, which says it and puts the event back
                error = exc
            try:
                done(error)
            except Exception:  # noqa: BLE001 - a background thread: nobody else would see it
                log.exception("session %s: finishing its saved turn failed", session_id)
            finally:
                self._saving.pop(session_id, None)
                saving.set()
                lock.release()

        with self._lock:
            if self._saver is None:
                self._saver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memdir-session-save")
            saver = self._saver
        try:
            saver.submit(save)
        except RuntimeError:  # flushed for a close meanwhile: saved here, as before
            save()
        return session

    def saved(self, session_id: str) -> None:
        """Wait until the session's change by `update_answered`, if one is under way, is saved or its save has failed
        (its `done` has run)."""
        saving = self._saving.get(session_id)
        if saving is not None:
            saving.wait()

    def flush(self) -> None:
        """Wait for every session changed by `update_answered` to be saved (a server closing its vault)."""
        with self._lock:
            saver, self._saver = self._saver, None
        if saver is not None:
            saver.shutdown(wait=True)

    def _session_lock(self, session_id: str) -> threading.Lock:
        with self._lock:
            return self._session_locks.setdefault(session_id, threading.Lock())

    def latest_of_client(self, pid: int, excluding: str) -> str | None:
        """The most recently updated session (other than `excluding`) whose hooks came from client `pid`."""
        with self._lock:
            if self._by_client is None:
                self._by_client = {}
                for session in self.all():
                    self._note_clients(session)
            sessions = {i: updated for i, updated in self._by_client.get(pid, {}).items() if i != excluding}
            return max(sessions, key=sessions.__getitem__) if sessions else None

    def _note_clients(self, session: Session) -> None:
        if self._by_client is None:
            return
        for pid in session.client_pids:
            self._by_client.setdefault(pid, {})[session.id] = session.updated

    def all(self) -> list[Session]:
        with self._lock:
            sessions = []
            for path in sorted(self.folder.glob("*.json")):
                try:
                    data = json.loads(path.read_text())
                    sessions.append(Session(**{k: v for k, v in data.items() if k in Session.__dataclass_fields__}))
                except (ValueError, TypeError, OSError):
                    continue
            return sessions

    def clean(self, now: float | None = None) -> int:
        """Remove sessions idle for more than 7 days; returns how many."""
        now = now or time.time()
        removed = 0
        with self._lock:
            self._by_client = None  # rebuilt from the sessions that remain
            for path in self.folder.glob("*.json"):
                try:
                    if now - path.stat().st_mtime > MAX_AGE_SECONDS:
                        path.unlink()
                        removed += 1
                except FileNotFoundError:
                    continue
        return removed
