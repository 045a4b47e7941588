"""The server side of the Claude Code hooks: choose and format context, capture exchanges, track turns.

The hook processes are tiny clients; everything that needs the index happens here, in the
process that already has it loaded.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import shutil
import stat
import threading
import time
from dataclasses import dataclass
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from indexer import timewords
from indexer.backoff import Backoff
from indexer.search import Hit, SearchRequest
from vault import Memory, ValidationError, VaultError
from vault.errors import DiskFullError

from .. import client
from ..service import leaks
from ..service import privacy as vaults
from ..service import turns
from ..service.capture import MAX_EXCHANGE_CHARS
from .context import Line, known_context, memory_line, pointer_line, scoring_request
from .hooks import MAX_PROMPT_CHARS, MAX_STDIN
from .spool_names import may_be_of, session_tag
from ..service.memory_service import MemoryService
from ..service.sessions import Session
from .trivial import is_trivial_exchange
from ..views.view import view_of

log = logging.getLogger("memdir.hooks")
STALE_SECONDS = 45.0  # longer than any hook waits for its request: an older spool file lost its request
# A hook waits under a second for its answer (hooks.TIMEOUTS): a spool file older than this has nobody waiting
# on it, so the server's own timer may apply it (a request that still arrives finds it taken: applied once).
ORPHANED_SECONDS = 2.0
# How long a prompt's search waits for its query vector before it answers from the keyword channel alone: the
# model host may be starting (a cold start) or busy with a first index build, and the hook leaves after 0.9 s.
VECTOR_WAIT_SECONDS = 0.25
REPLAY_SESSIONS = 8  # sessions replayed side by side (replay)
# A spooled event put back for a disk error waits before the drain tries it again: a disk that stays full (or a
# state folder left unwritable) is not retried, a vault write each time, every 2 s.
PUT_BACK_FIRST_SECONDS = 4.0
PUT_BACK_CAP_SECONDS = 300.0
# How long a hook's event waits for a replay under way before it goes back to the spool behind its session's earlier
# event (the hook leaves after 0.9 s; the replay applies both, in order).
EARLIER_WAIT_SECONDS = 0.3
# The largest spool file read: a hook reads at most MAX_STDIN bytes of its input and spools them as JSON, whose
# escapes can make a character of text six; past this a file is no event a hook wrote.
MAX_SPOOLED_BYTES = 6 * MAX_STDIN + 65536
# How long a vault's close waits for the live hook events being applied when it begins (a prompt's search and save, a
# Stop's capture): past its drain of requests (process.DRAIN_SECONDS) they are the ones still running.
APPLYING_WAIT_SECONDS = 30.0


def _searched(prompt: str) -> SearchRequest:
    """The search a prompt's context comes from (its query sent ahead by `HookHandler.prompt`)."""
    return SearchRequest(query=prompt[:MAX_PROMPT_CHARS], limit=30, vector_wait=VECTOR_WAIT_SECONDS)


class HookHandler:
    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self.settings = service.hook_settings()
        self.spool = service.spool_folder()
        # Where a hook kept the events the vault's spool could not take (a full disk): read as the spool is, in the
        # same order; never made here (hooks.spool).
        self.spare = Path(client.spare_spool(service.app.root))
        self._claimed: dict[str, Path] = {}  # spool name -> the file this server took for its request
        self._linked_told: set[Path] = set()  # spool folders found to be symlinks, said once each
        # One replay applies the spool at a time: beside another, a replay found a session's prompt taken and applied
        # the Stop behind it first (the exchange captured before its prompt had opened the turn).
        self._replaying = threading.Lock()
        # Spool files a replay could not apply for a disk error: the drains wait before trying each again.
        self.put_back = Backoff(PUT_BACK_FIRST_SECONDS, PUT_BACK_CAP_SECONDS)
        # Spool name -> what its Stop's capture stored, while the event is not settled: a Stop put back after its
        # exchange was written (the session's save failed) is applied again, and is not captured again. (After a
        # restart the exchange's own frontmatter tells it: capture._this_stops.)
        self._captured: dict[str, _Captured] = {}
        # Set while the drain of a vault's open applies what was spooled before it (a cold start's: nine sessions'
        # events, seconds under load): an event behind it does not wait EARLIER_WAIT_SECONDS for it to end (_behind_earlier).
        self._catching_up = threading.Event()
        # Where a prompt's session's earlier events are applied while the prompt is answered (_catch_up): one thread,
        # in the order they were asked for (a prompt that stopped waiting asks for its own turn behind them).
        self._catching = ThreadPoolExecutor(1, thread_name_prefix="memdir-catch-up")
        self._closed = threading.Event()  # close(): the vault is let go
        # Events the hook could not spool (a full disk) that had to wait behind an earlier event of their session:
        # kept here, by a spool-like name, and applied by the replays in their session's order (_behind_earlier).
        self._held: dict[str, _Held] = {}
        self._held_lock = threading.Lock()
        # A prompt's spool name -> what its live answer showed, until the event is settled: found ahead of a waiting
        # prompt's turn (_context_ahead), or kept by a live one whose save may fail; its replay records it.
        self._ahead: dict[str, _Shown] = {}
        self._live = _LiveEvents()  # the requests' events being applied, and whether the vault still takes them

    # -- UserPromptSubmit --------------------------------------------------------------

    def prompt(self, event: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _session_id(event)
        prompt = str(event.get("prompt") or "")
        if prompt.strip():
            # The search's query goes to the model now: its vector is computed while the event is claimed, the
            # session's lock taken and the turn opened, not after (bench/results/s23-hook23.md).
            try:
                self.service.send_query(_searched(prompt))
            except (VaultError, OSError) as exc:  # only a head start: the search meets it and answers as it did
                log.debug("session %s: the query was not sent ahead (%s: %s)", session_id, type(exc).__name__, exc)
        # A spool replay may have taken this prompt's event first (the drain when a vault opens, while the request
        # waited for it): the turn was started by the replay, and the hook, still waiting, gets its context.
        claimed = self._claim(event)
        waits_until = time.monotonic() + EARLIER_WAIT_SECONDS  # for its session's earlier events, or a Stop under way
        # Its session's earlier events not applied yet are applied in the background while its search runs: applied
        # on this request, a spooled Stop (a capture, an index sync) took 0.4-3.3 s under nine sessions from a cold
        # start, past the hook's 0.9 s (bench/results/s23-cold23.md). The search needs no session state.
        catching = self._catch_up(event) if claimed else None
        found: list[Hit] | None = None  # the search, when it ran ahead of the turn
        if catching is not None:
            found = self._hits(prompt)
            if not catching.done_in_time():
                return self._answered_ahead(event, found)  # its turn waits behind them, applied right after them
        if claimed:
            self.replay_stale()
        result: dict[str, Any] = {} if claimed else {"replayed": True}

        def turn(state: Session) -> None:
            scoring = self._start_turn(state, prompt, event) if claimed else ""
            # Searched with the session held otherwise: a Stop that comes meanwhile (its hook sent once this one gave
            # up) waits for the turn it ends to be opened.
            hits = found if found is not None else self._hits(prompt)
            lines, explained = self._context_lines(state, prompt, hits)
            block, kept = known_context(lines, self.settings.max_chars - len(scoring))
            # The answer first: a full disk that fails the turn log below still lets the prompt have its context.
            result.update(additionalContext="\n\n".join(part for part in (scoring, block) if part),
                          shown=[line.memory_id for line in kept], scoring_required=bool(scoring))
            shown = _Shown(kept, _reasons(kept, explained), scoring=bool(scoring))
            if claimed and isinstance(event.get("spool"), str):
                # Kept until the event is settled: a save that fails below puts the event back, and the replay that
                # opens its turn then records what this answer showed (without it, the session never marked them).
                with self._held_lock:
                    self._ahead[event["spool"]] = shown
            self._record_shown(state, state.prompt, kept, shown.explained)
            shown.logged = True

        try:
            # A Stop of its session still being applied (its capture waits for the index: 3-5 s behind a keyword merge
            # under nine cold sessions, its hook long gone) holds the session: the prompt is answered ahead of it.
            if not self._settle_answered(event, session_id, turn,
                                         max(0.0, waits_until - time.monotonic()) if claimed else None):
                return self._answered_ahead(event, found if found is not None else self._hits(prompt))
        except DiskFullError as exc:
            if "additionalContext" not in result:
                raise
            # The context was found; only the turn's bookkeeping (what was shown, the turn log) could not be saved.
            # Before, every prompt got no context while the disk was full (bench/results/s19-attack19.md).
            log.warning("session %s: %s; the prompt gets its context, its turn is not recorded", session_id, exc)
        return result

    def _answered_ahead(self, event: Mapping[str, Any], hits: list[Hit]) -> dict[str, Any]:
        """A prompt whose turn cannot be opened now: its event waits behind its session's earlier ones (in the spool,
        or held), its context is found now from `hits` (_context_ahead), and the catch-up thread opens its turn as soon
        as they are applied."""
        ahead: dict[str, Any] = {"replayed": True}
        tag, at = _placed(event)
        self._wait_behind(event, "prompt", at, lambda name: ahead.update(self._context_ahead(event, name, hits)))
        self._catch_up_to(_session_id(event), tag, at + 1)
        return ahead

    def _settle_answered(self, event: Mapping[str, Any], session_id: str, turn: Callable[[Session], None],
                         within: float | None = None) -> bool:
        """Apply a prompt's turn now, and save its session and settle its spool file after its answer
        (SessionStore.update_answered: the session's next event waits for that). The spool file stays this request's
        (`_claimed`) until then, so a Stop of its session does not take it for an earlier event left behind. A save
        that fails (a full disk) puts the event back for a replay to apply the turn, as a failed turn does here.
        False, with nothing done, when another update held the session past `within` seconds."""
        name = str(event.get("spool"))
        claimed = self._claimed.get(name)

        def put_back() -> None:
            self._claimed.pop(name, None)
            if claimed is not None:
                self._put_back(claimed, name)

        def done(error: BaseException | None) -> None:
            if error is not None:
                put_back()
                log.warning("session %s: its turn could not be saved (%s: %s); the event waits for a replay",
                            session_id, type(error).__name__, error)
            elif claimed is not None:
                self._claimed.pop(name, None)
                self._settled(name)
                claimed.unlink(missing_ok=True)

        def settled(error: BaseException | None) -> None:
            try:
                done(error)
            finally:
                self._live.leave()

        try:
            self._live.enter()
        except BaseException:
            put_back()
            raise
        try:
            answered = self.service.sessions.update_answered(session_id, turn, settled, within) is not None
        except BaseException:
            self._live.leave()
            put_back()
            raise
        if not answered:  # nothing done: `settled` is not called
            self._live.leave()
        return answered

    def _context_ahead(self, event: Mapping[str, Any], waiting: str, hits: list[Hit]) -> dict[str, Any]:
        """The context of a prompt whose turn must wait behind its session's earlier events (`waiting`: the name it
        waits under): found now, from the session as it is, while the turn is opened when a replay applies the event,
        in order (_apply), and records then what this answer showed. Called before the event waits, so no replay
        can open the turn before what it showed is kept. Before, such a prompt got nothing: under nine
        sessions from a cold start, 36 of 68 prompts after the first 5 s (bench/results/s20-lead.md). A scoring
        request is not asked ahead: whether one is due depends on the earlier events."""
        lines, explained = self._context_lines(self.service.sessions.load(_session_id(event)),
                                               str(event.get("prompt") or ""), hits)
        block, kept = known_context(lines, self.settings.max_chars)
        if kept:
            with self._held_lock:
                self._ahead[waiting] = _Shown(kept, _reasons(kept, explained))
        return {"additionalContext": block, "shown": [line.memory_id for line in kept]}

    def _record_shown(self, state: Session, prompt: str, kept: list[Line], explained: list[dict[str, Any]],
                      log: bool = True) -> None:
        """What a turn's context showed: scorable lines wait for their scores, and (`log`) the turn log says why."""
        for scorable in (True, False):
            state.show(((line.memory_id, line.content_hash) for line in kept if line.scorable == scorable),
                       scorable=scorable)
        if log:
            turns.record(self.service.app.root, "prompt", state.id, state.turn, prompt=self._loggable(prompt, kept),
                         shown=explained)

    def _private_now(self, explained: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Reasons found ahead of a waiting prompt's turn, logged when a replay opens it (seconds, or a disk's back-off,
        later): a memory made private meanwhile is logged by id alone, as a live prompt logs one (_context_lines)."""
        def now(entry: dict[str, Any]) -> dict[str, Any]:
            memory = self.service.find(entry["id"]) if "title" in entry else None
            if memory is None:
                return entry
            return {"id": entry["id"], **_named(memory), **{k: v for k, v in entry.items() if k not in ("id", "title")}}
        return [now(entry) for entry in explained]

    def _loggable(self, prompt: str, kept: list[Line]) -> str:
        """The prompt's first line for the turn log in the project vault, unless it repeats a private memory shown
        with it: privacy is one rule on every path, and the log is a project file as a captured exchange is."""
        line = turns.first_line(prompt)
        shown = self.service.find_many(k.memory_id for k in kept)
        private = [m for m in shown if m is not None and not vaults.visible(m, include_private=False)]
        found = leaks.repeated(line, private)
        return line if found is None else f"(withheld: it repeats private memory {found[0].id})"

    def _start_turn(self, state: Session, prompt: str, event: Mapping[str, Any]) -> str:
        """Open a new turn; ask for scores when the previous answer completed with memories unscored."""
        pids = [int(p) for p in event.get("client_pids", []) if isinstance(p, int) or str(p).isdigit()]
        state.client_pids = sorted(set(state.client_pids) | set(pids))[-8:]
        scoring = ""
        if state.completed:
            pending = self._unscored(state)
            if pending:
                scoring = scoring_request(pending, client=str(event.get("client") or "claude-code"))
        elif state.turn_shown:
            # The previous prompt was interrupted before its answer (no Stop): what it was shown is
            # kept for the scoring request after the next completed answer, not forgotten.
            self._unscored(state)
        self._next_turn(state, self.service.redacted(prompt)[:MAX_EXCHANGE_CHARS])  # the session file keeps no secret either
        state.scoring_required = bool(scoring)
        return scoring

    def _unscored(self, state: Session) -> list[str]:
        """Move what the turn showed to what waits for a score (the memories still there); returns them."""
        ids = list(dict.fromkeys(state.awaiting + state.turn_shown))
        state.awaiting = [i for i, memory in zip(ids, self.service.find_many(ids)) if memory is not None]
        return state.awaiting

    @staticmethod
    def _next_turn(state: Session, prompt: str) -> None:
        state.turn += 1
        state.turn_shown = []
        state.completed = False
        state.scoring_required = False
        state.scored_this_turn = False
        state.prompt = prompt

    def _hits(self, prompt: str) -> list[Hit]:
        """The prompt's search: the hits its context is chosen from (_context_lines)."""
        if not prompt.strip():
            return []
        return self.service.hits(_searched(prompt))

    def _context_lines(self, state: Session, prompt: str, hits: list[Hit]) -> tuple[list[Line], dict[str, dict[str, Any]]]:
        """The lines to inject, chosen from the prompt's `hits` (_hits), and for the turn log why each was chosen
        (relevance, channel, labels)."""
        # After the search (_hits): the standing facts read what it just worked out under the index lock
        # (Searcher.out_of_sight) instead of queueing for that lock again.
        always = self.service.always_inject()  # both vaults: the session is the local user's own
        chosen = _slots(hits, self.settings, exclude={m.id for m in always},
                        recent=timewords.is_vague(prompt))
        lines = []
        # A hit's view quotes what matched (a long document's section) and carries the hit's stale cites.
        shown = [(m, view_of(m, stale=self.service.stale(m))) for m in always] + \
                [(h.memory, view_of(h.memory, hit=h)) for h in chosen]
        explained: dict[str, dict[str, Any]] = {}
        for memory, view in shown:
            chosen_now = view.relevance is not None
            labels = ["standing"] * (not chosen_now) + ["repeat"] * (state.shown.get(memory.id) == memory.content_hash) + \
                ["stale"] * bool(view.stale) + ["superseded"] * bool(view.successor)
            explained[memory.id] = {"id": memory.id, **_named(memory), "relevance": view.relevance,
                                    "channel": view.channel, "labels": labels}
            if state.shown.get(memory.id) == memory.content_hash:
                lines.append(Line(memory.id, memory.content_hash, pointer_line(view), True, chosen_now))
            else:
                lines.append(Line(memory.id, memory.content_hash, memory_line(view, self.settings.content_chars),
                                  False, chosen_now))
        return lines, explained

    # -- the spool: every prompt and Stop event is written there first by the hook process -----

    def replay(self, spool: Path, older_than: float = 0.0, *, spooled_before: int | None = None) -> int:
        """Apply spooled hook events no request delivered (the server was down, or the hook process was
        killed mid-request, as `claude -p` does at exit), oldest first; returns how many.

        With neither `older_than` nor `spooled_before` (a server starting or closing the vault) every file is
        due, also one a dead server had taken; otherwise only files spooled before the cutoff (time_ns), and not one
        put back for a disk error until its back-off has passed.

        A look for stale events (`older_than`: the drain's timer, a hook) finds one under way and leaves the spool to
        it and to the next drain; the others wait for it, then list the spool themselves."""
        if older_than and self._live.closed:
            return 0  # a request's look after its vault's close began (the close's own replay applies the spool)
        if not self._replaying.acquire(blocking=not older_than):
            return 0
        try:
            return self._replay(spool, older_than, spooled_before)
        finally:
            self._replaying.release()

    def due_again(self, spool: Path | None = None) -> None:
        """Make the files a server took and never settled (it died applying them) due again, in the spool and the
        spare one: a replay applies them. Only while none of this server's requests holds a file it took (a vault
        opening, or closing with its requests drained)."""
        # ... nor one of this server's prompts answered before its session's save (SessionStore.update_answered): its
        # file stays taken until the save, and taken again here it would open its turn twice.
        self.service.sessions.flush()
        for folder in self._readable(spool or self.spool, self.spare):
            for orphan in folder.glob(".*.json.*.taken"):
                os.replace(orphan, folder / _taken_name(orphan))

    def _replay(self, spool: Path, older_than: float, spooled_before: int | None) -> int:
        if not older_than and spooled_before is None:  # a file taken by a server that died applying it is due again
            self.due_again(spool)
        cutoff = spooled_before if spooled_before is not None else time.time_ns() - int(older_than * 1e9)
        every = not older_than and spooled_before is None
        entries = self._waiting(spool, cutoff + 1)  # up to the cutoff, itself included
        # Each session's events in their order, the sessions side by side: a spooled Stop is a capture, and
        # captures made at once share one index sync (indexer/group_sync.py). One by one, the events nine
        # sessions spooled while a server started cost a Whoosh commit each, seconds before it served.
        sessions: dict[str, list[tuple[Path | _Held, str | None]]] = {}
        for entry, text in entries:
            sessions.setdefault(_session_of(text), []).append((entry, text))

        def replay_session(events: list[tuple[Path | _Held, str | None]]) -> int:
            applied = 0
            for entry, text in events:
                if not every and not self.put_back.due(entry.name):
                    break  # the session's later events wait behind it, in order
                done = self._replay_entry(entry, text)
                if done is None:  # left for the next replay, and the session's later events behind it, in order
                    break
                applied += done
            return applied

        if len(sessions) <= 1:
            applied = sum(map(replay_session, sessions.values()))
        else:
            with ThreadPoolExecutor(min(REPLAY_SESSIONS, len(sessions)), thread_name_prefix="memdir-replay") as pool:
                applied = sum(pool.map(replay_session, sessions.values()))
        if every and self._held:  # a start or a close: nothing can keep them past this server
            log.warning("%d hook events that could not be spooled are still not applied (the disk is full); "
                        "they are lost if this server ends", len(self._held))
        return applied

    def _replay_entry(self, entry: Path | _Held, text: str | None) -> int | None:
        return self._replay_held(entry) if isinstance(entry, _Held) else self._replay_one(entry, text)

    def _replay_one(self, path: Path, text: str | None) -> int | None:
        """Apply one spooled event (`text`: the file as read when the replay grouped it; a spooled file is written
        once, by rename, so what the claim takes is that text) unless a request or another replay took it first;
        1 when applied, None when it is put back for the next replay."""
        claimed = _take(path)
        if claimed is None:
            return 0  # its own request (or another replay) took it meanwhile
        applied = self._apply(path.name, lambda: text if text is not None else _spooled_text(claimed))
        if applied is None:  # the disk, not the event: taken, it waited hidden for the next start
            self._put_back(claimed, path.name)  # (review of s10)
        else:
            # Not on any other error: the taken file stays, and the next start applies it (see replay).
            _discard(claimed)
        return applied

    def _replay_held(self, held: _Held) -> int | None:
        """Apply an event held in memory (see _behind_earlier), as _replay_one applies a spool file. It stays held
        until it is applied: a live event of its session then still finds it, and waits for the replay applying it
        (every replay holds `_replaying`, so no two apply it)."""
        with self._held_lock:
            if held.name not in self._held:
                return 0  # applied meanwhile
        try:
            applied = self._apply(held.name, lambda: held.text)
        except Exception:  # noqa: BLE001 - not a disk error nor a malformed event: trying it again would fail again
            # Kept, it stood before every later event of its session until a restart (review of session 12). Dropped,
            # a lost prompt is safe: its Stop stores the answer alone (stop).
            log.exception("hook event %s, held in memory, dropped: applying it failed", held.name)
            self._settled(held.name)
            applied = 0
        if applied is not None:
            with self._held_lock:
                self._held.pop(held.name, None)
        return applied

    def _apply(self, name: str, read: Callable[[], str]) -> int | None:
        """Apply one spooled or held event: 1 when applied, 0 when dropped as malformed, None when a disk error
        leaves it for the next replay."""
        applied = 1
        # The session's own time, not the replay's: sessions are replayed side by side and end in no fixed order, and
        # a session spooled in the morning was the client's latest over one spooled at noon (review of session 9).
        at = _spooled_at(Path(name)) / 1e9 or None
        try:
            record = json.loads(read())
            payload = record["payload"]
            if record["event"] == "prompt":
                with self._held_lock:
                    ahead = self._ahead.get(name)  # what its live answer showed, found ahead of the turn
                    if ahead is None and (carried := _Shown.of_json(record.get("shown"))) is not None:
                        ahead = self._ahead[name] = carried  # put back with its event (_put_back) by an earlier server

                def start(state: Session) -> None:
                    self._start_turn(state, str(payload.get("prompt") or ""), payload)
                    # Only a live answer asks for scores: a turn opened here asked for none unless its live answer did
                    # (else its Stop warned of a request the model never saw); what waits for a score is kept.
                    state.scoring_required = ahead is not None and ahead.scoring
                    if ahead is not None:
                        # Logged once: a save that fails after the line is appended puts the event back for another try
                        self._record_shown(state, state.prompt, ahead.kept, self._private_now(ahead.explained),
                                           log=not ahead.logged)
                        ahead.logged = True

                self.service.sessions.update(_session_id(payload), start, at)
            elif record["event"] == "stop":
                self.stop(payload, claimed=True, at=at, spooled=name)
        except (OSError, DiskFullError) as exc:
            if self.put_back.failed(name):  # said once: the drain tries again while the disk is full
                log.warning("spooled hook event %s left in the spool for the next replay: %s", name, exc)
            return None
        except (ValueError, KeyError, TypeError, VaultError) as exc:
            log.warning("spooled hook event %s dropped: %s", name, exc)
            applied = 0
        self._settled(name)
        return applied

    def _held_events(self) -> list[_Held]:
        with self._held_lock:
            return list(self._held.values())

    def _waiting(self, spool: Path, before: int, tag: str | None = None) -> list[tuple[Path | _Held, str | None]]:
        """The events not applied yet that came before `before` (time_ns): the spool's files, as read now, and the
        events held in memory (see _behind_earlier), oldest first; with a session's `tag`, only the files whose name
        may be that session's (spool_names)."""
        found: list[tuple[Path | _Held, str | None]] = [
            *((p, _read_spooled(p)) for folder in self._readable(spool, self.spare) for p in folder.glob("*.json")
              if _spooled_at(p) < before and (tag is None or may_be_of(p.name, tag))),
            *((h, h.text) for h in self._held_events() if _spooled_at(h) < before)]
        return sorted(found, key=lambda entry: _spooled_at(entry[0]))

    def _readable(self, *folders: Path) -> list[Path]:
        """The spool folders events may be read from: not one that is, or lies in, a symlink (`.memdir/spool` or
        `.memdir` linked to a folder elsewhere, carried by an archive or made by a tool). The hook writes no event
        through one (hooks._not_linked); read through one, a folder another user or process fills had its events applied
        as this user's prompts and captured exchanges (bench/results/s22-attack22.md)."""
        kept = []
        for folder in folders:
            if folder.is_symlink() or folder.parent.is_symlink():
                if folder not in self._linked_told:
                    self._linked_told.add(folder)
                    log.warning("%s or its folder is a symlink: memdir reads no hook event through it (remove the "
                                "link; memdir makes the folder)", folder)
                continue
            kept.append(folder)
        return kept

    def close(self) -> None:
        """The vault is let go: no catch-up applies anything from now on (one applying events now holds the spool, and
        the close's replay waits for it), and those not begun are dropped: the close's replay applies what waits."""
        self._closed.set()
        self._catching.shutdown(wait=False, cancel_futures=True)

    def drain(self, spooled_before: int | None = None) -> int:
        """The server's own pass over the spool (its timer, and the moment its vault is open): events whose
        hook no longer waits, or spooled before `spooled_before` (answered "opening", so nobody will claim them)."""
        if spooled_before is None:
            return self.replay(self.spool, older_than=ORPHANED_SECONDS)
        self._catching_up.set()
        try:
            return self.replay(self.spool, spooled_before=spooled_before)
        finally:
            self._catching_up.clear()

    def take_no_more(self) -> None:
        """A closing vault's first step: the requests' events no longer apply (each goes back to the spool, for the
        close's replay or the next server, and its request is told so), nor does a request's look for stale events
        (replay_stale), and those being applied now finish first.
        Past the close's drain, a request still running applied its event after the close's replay had applied it too
        (its spool file, taken by the request, made due again), and a prompt's save, on a saving thread started after
        the close's flush, landed after the vault was let go (review of session 22)."""
        if not self._live.close(APPLYING_WAIT_SECONDS):
            log.warning("hook events still being applied after %.0f s as the vault closes: they may land after it",
                        APPLYING_WAIT_SECONDS)

    def replay_stale(self) -> int:
        """Events left in the spool by hook processes that died mid-request, found on the next hook call."""
        return self.replay(self.spool, older_than=STALE_SECONDS)

    def _claim(self, event: Mapping[str, Any]) -> bool:
        """True when this request should apply its event: it names no spool file, or it took its file
        before a replay did (a rename is atomic: exactly one of them wins)."""
        name = event.get("spool")
        if not isinstance(name, str):
            return True
        if "/" in name or name.startswith("."):
            raise ValidationError(f"spool name {name!r} is not a file name")
        claimed = next((taken for folder in self._readable(self.spool, self.spare) if (taken := _take(folder / name))),
                       None)
        if claimed is None:
            return False
        self._claimed[name] = claimed
        return True

    def _behind_earlier(self, event: Mapping[str, Any], kind: str) -> bool:
        """Whether this request's event must wait behind an earlier event of its session not applied yet: one
        put back for a disk error (its back-off can be minutes), one whose hook was killed before it asked (not
        drained for 2 s), or one a replay is applying right now. A live turn applied ahead of such a Stop had the
        Stop capture the new prompt with the old answer (reviews of session 11). The earlier events are applied
        first, now, whatever their back-off; when one cannot be, or a replay holds the spool longer than
        EARLIER_WAIT_SECONDS (behind the drain of the vault's open, at all), this event goes back to the spool behind
        them (True) and the replays keep the order. A prompt does not wait for them so (_catch_up).
        An event the hook could not spool (a full disk) waits the same way, held in this server's memory: applied
        ahead, it had the Stop capture the wrong answer; dropped, a prompt did the same for the next Stop."""
        found = self._earlier(event)
        if found is None:
            return False
        session, tag, cutoff = found
        try:
            # Behind the open's drain the wait would be spent for nothing (it holds the spool for seconds): at once.
            if not self._replaying.acquire(timeout=0.0 if self._catching_up.is_set() else EARLIER_WAIT_SECONDS):
                return self._wait_behind(event, kind, cutoff)
            try:
                with self._live.applying():
                    if not self._apply_waiting(session, tag, cutoff):
                        return self._wait_behind(event, kind, cutoff)
            finally:
                self._replaying.release()
        except BaseException:
            self._wait_behind(event, kind, cutoff)
            raise
        return False

    def _earlier(self, event: Mapping[str, Any]) -> tuple[str, str, int] | None:
        """(its session, the session's spool tag, the event's own time) when an earlier event of the event's session
        is not applied yet (_behind_earlier), else None."""
        session = _session_id(event)
        # A prompt of this session answered before its save (SessionStore.update_answered) goes back to the spool if
        # the save fails: known only once it is done. Looked for before that, it was missed, and this event applied
        # ahead of it (a Stop stored its answer alone, the prompt then opened a turn no Stop ends).
        self.service.sessions.saved(session)
        tag, cutoff = _placed(event)
        # the requests in flight here, this one's too (a copy: other requests add and pop theirs meanwhile)
        ours = {claimed.name for claimed in tuple(self._claimed.values())}
        taken = any(_spooled_at(Path(_taken_name(p))) < cutoff and may_be_of(_taken_name(p), tag)
                    and _session_of(_read_spooled(p)) == session
                    for folder in (self.spool, self.spare)
                    for p in folder.glob(".*.json.*.taken") if p.name not in ours)
        return (session, tag, cutoff) if taken or self._session_waiting(session, tag, cutoff) else None

    def _session_waiting(self, session: str, tag: str, before: int) -> list[tuple[Path | _Held, str | None]]:
        return [(entry, text) for entry, text in self._waiting(self.spool, before, tag) if _session_of(text) == session]

    def _apply_waiting(self, session: str, tag: str, before: int) -> bool:
        """Apply the session's events that came before `before` (time_ns), in order, with the spool held
        (`_replaying`); False when one is left for the next replay (a disk error), and the later ones behind it."""
        return all(self._replay_entry(entry, text) is not None
                   for entry, text in self._session_waiting(session, tag, before))

    def _catch_up(self, event: Mapping[str, Any]) -> _CatchUp | None:
        """A prompt's session's earlier events not applied yet, being applied in the background (the catch-up
        thread, one replay at a time with the others); None when there are none. The prompt waits for them at most
        EARLIER_WAIT_SECONDS from now (behind the open's drain, not at all: it holds the spool for seconds), its search
        meanwhile: in time, its turn opens live after them; else it waits behind them and its context is found ahead
        (_context_ahead)."""
        found = self._earlier(event)
        if found is None:
            return None
        session, tag, cutoff = found
        wait = 0.0 if self._catching_up.is_set() else EARLIER_WAIT_SECONDS
        return _CatchUp(session, tag, cutoff, self._catch_up_to(session, tag, cutoff), time.monotonic() + wait)

    def _catch_up_to(self, session: str, tag: str, before: int) -> Future[bool]:
        """The session's events that came before `before` applied on the catch-up thread, in order, once the spool is
        free: whether every one was."""
        def apply() -> bool:
            with self._replaying:
                # let go meanwhile: the close's replay applied them, and the index may be closed by now
                return not self._closed.is_set() and self._apply_waiting(session, tag, before)

        def logged() -> bool:
            try:
                return apply()
            except Exception:  # noqa: BLE001 - a background thread: nobody else would see it; the drain tries again
                log.exception("session %s: its waiting hook events could not be applied", session)
                return False

        try:
            return self._catching.submit(logged)
        except RuntimeError:  # closed (the vault is let go): its close's replay applies them
            closed: Future[bool] = Future()
            closed.set_result(False)
            return closed

    def _wait_behind(self, event: Mapping[str, Any], kind: str, at: int,
                     ahead: Callable[[str], None] | None = None) -> bool:
        """Put a request's event back in the spool, or hold an unspooled one in memory (`at`: when it came, in
        time_ns), for the replays to apply in its order (`ahead`: called first with the name it waits under); True."""
        name = event.get("spool")
        spooled = isinstance(name, str)
        waiting = name if isinstance(name, str) else _held_name(kind, at)
        if ahead is not None:
            try:
                ahead(waiting)
            except Exception:  # noqa: BLE001 - the context is extra here: the event must still wait in its order
                log.exception("a waiting prompt's context could not be found")
        if spooled:
            claimed = self._claimed.pop(waiting, None)
            if claimed is not None:
                self._put_back(claimed, waiting)  # back where it was: the spool or the spare one
            return True
        self.hold(kind, event, at)
        return True

    def hold(self, kind: str, event: Mapping[str, Any], at: int) -> None:
        """Keep an event its hook could not spool (a full disk) in this server's memory, named as its spool file
        would be (`at`: when it came, in time_ns): the replays apply it in its session's order."""
        held = _Held(_held_name(kind, at), json.dumps({"event": kind, "payload": dict(event)}))
        with self._held_lock:
            self._held[held.name] = held

    def _settle(self, event: Mapping[str, Any], apply: Any, live: bool = False) -> None:
        """Apply the event (`live`: a request's, which a closing vault no longer takes); then drop its spool file, or
        put it back for a replay when applying failed."""
        claimed = self._claimed.pop(str(event.get("spool")), None)
        try:
            with self._live.applying() if live else contextlib.nullcontext():
                apply()
        except BaseException:
            if claimed is not None:
                with contextlib.suppress(FileNotFoundError):  # made due again by a close's replay, which applied it
                    os.replace(claimed, claimed.with_name(str(event["spool"])))
            raise
        if claimed is not None:
            self._settled(str(event["spool"]))
            claimed.unlink(missing_ok=True)

    def _put_back(self, claimed: Path, name: str) -> None:
        """Return a taken spool file to its folder for a replay. A prompt's goes back with what its live answer
        showed (`_ahead`, kept in this server's memory): a server that ended before the replay applied it (stopped, or
        the disk still full) left the next one to open its turn without it, the memories never marked shown and the
        turn never logged (review21's leftover). On a disk too full to rewrite the file it goes back as it was."""
        with self._held_lock:
            shown = self._ahead.get(name)
        if shown is not None:
            temp = claimed.with_name(f".{name}.shown.tmp")
            try:
                record = json.loads(_spooled_text(claimed))
                record["shown"] = shown.as_json()
                temp.write_text(json.dumps(record), encoding="utf-8")
                os.replace(temp, claimed)
            except (OSError, ValueError, AttributeError, TypeError) as exc:
                with contextlib.suppress(OSError):
                    temp.unlink(missing_ok=True)
                log.info("spooled prompt %s goes back without what its answer showed: %s", name, exc)
        with contextlib.suppress(FileNotFoundError):  # a request's, made due again by a close's replay, which applied it
            os.replace(claimed, claimed.with_name(name))

    def _settled(self, name: str) -> None:
        self.put_back.succeeded(name)
        self._captured.pop(name, None)
        with self._held_lock:
            self._ahead.pop(name, None)

    # -- Stop ----------------------------------------------------------------------------

    def stop(self, event: Mapping[str, Any], claimed: bool = False, at: float | None = None,
             spooled: str | None = None) -> dict[str, Any]:
        """The Stop hook: capture the exchange and complete the turn (`at`: when a replayed event was spooled,
        `spooled`: its spool file's name)."""
        session_id = _session_id(event)
        spooled = spooled or (event["spool"] if isinstance(event.get("spool"), str) else None)
        if not claimed and not self._claim(event):
            return {"stored": None, "reason": "replayed"}
        if not claimed and self._behind_earlier(event, "stop"):
            return {"stored": None, "reason": "replayed"}  # behind its session's earlier event, applied after it
        if event.get("stop_hook_active"):
            self._settle(event, lambda: None, live=not claimed)
            return {"stored": None, "reason": "stop_hook_active"}
        answer = str(event.get("last_assistant_message") or "")
        result: dict[str, Any] = {}

        def finish(state: Session) -> None:
            stored = None
            if state.completed and state.answered == _fingerprint(answer):
                # The same answer's Stop again, no prompt between (OpenCode's idle event may come twice): not a turn.
                log.info("session %s: turn %d's answer came again; not stored again", session_id, state.turn)
                result.update(stored=None, reason="repeated")
                return
            if state.completed:
                # No prompt since the last answer: this turn's prompt event never arrived (a hook that could not spool
                # it on a full disk found no server, or one still opening). The answer is kept, alone, in a turn of
                # its own: beside the previous turn's prompt it was a wrong pair in a memory (review of session 12).
                log.warning("session %s: a Stop came with no prompt since the last answer (its prompt event was "
                            "lost); the answer is stored without a prompt", session_id)
                self._unscored(state)
                self._next_turn(state, "")
            if self.settings.capture_exchanges and (state.prompt or answer):
                if is_trivial_exchange(state.prompt, answer):
                    log.info("session %s: turn %d is an acknowledgement or a scoring turn; not stored", session_id, state.turn)
                else:
                    captured = self._captured.get(spooled or "")
                    if captured is None:
                        # Stamped with the Stop's spool time on every try, live or replayed: a restatement it made
                        # before it was put back is then known as its own after a restart (capture._restated_by).
                        when = at if at is not None or not spooled else _spooled_at(Path(spooled)) / 1e9 or None
                        captured = _Captured(self.service.capture_exchange(state.id, state.prompt, answer,
                                                                           state.turn_shown, state.last_exchange, when))
                        if spooled:
                            self._captured[spooled] = captured
                    stored = captured.stored
                    state.last_exchange = stored or state.last_exchange
                    if stored and not captured.logged:
                        turns.record(self.service.app.root, "exchange", state.id, state.turn, at, stored=stored)
                        captured.logged = True
            if state.scoring_required and not state.scored_this_turn:
                log.warning("session %s: turn %d asked for score_memories and it was not called", session_id, state.turn)
            state.completed = True
            state.answered = _fingerprint(answer)
            result.update(stored=stored, scored=state.scored_this_turn, scoring_required=state.scoring_required)

        self._settle(event, lambda: self.service.sessions.update(session_id, finish, at), live=not claimed)
        return result

    # -- SessionStart --------------------------------------------------------------------

    def session_start(self, event: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _session_id(event)
        stats = self.service.stats()
        standing = self.service.always_inject()  # sorted by id
        counts = ", ".join(f"{count} {name}" for name, count in sorted(stats.collections.items()))
        lines = [f"memdir memory vault: {stats.memories} memories ({counts or 'empty'}). "
                 "Relevant memories arrive with each prompt as KNOWN CONTEXT; search_memory finds more."]
        if standing:
            lines.append("Standing facts:")
            lines += [memory_line(view_of(m), self.settings.content_chars) for m in standing]
        if stats.problems:
            lines.append(f"({stats.problems} files in the vault could not be read; `memdir doctor` lists them.)")
        forget = event.get("source") in ("clear", "compact")  # the earlier injections are gone from the model's context

        def orient(state: Session) -> None:
            if forget:
                state.shown = {}
            state.show(((m.id, m.content_hash) for m in standing), scorable=False)

        self.replay_stale()
        with self._live.applying():
            self.service.sessions.update(session_id, orient)
        return {"additionalContext": "\n".join(lines)}


def _named(memory: Memory) -> dict[str, Any]:
    """How the turn log names a memory. It lives in the project vault's .memdir/: a private memory is named by id
    alone, never by its title (privacy is one rule on every path, local state included)."""
    return {"title": memory.title} if vaults.visible(memory, include_private=False) else {"private": True}


def _reasons(kept: list[Line], explained: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Why each kept line was chosen, in their order, for the turn log."""
    return [explained[line.memory_id] for line in kept if line.memory_id in explained]


_REASON_KEYS = ("id", "title", "private", "relevance", "channel", "labels")  # a turn log line's reasons (_context_lines)


def _placed(event: Mapping[str, Any]) -> tuple[str, int]:
    """An event's session tag, as the hook named its spool file (of the id it was given: spool_names), and its place
    in its session's order (time_ns): its spool file's time, or now for an event that has none."""
    name = event.get("spool")
    return session_tag(event.get("session_id")), _spooled_at(Path(name)) if isinstance(name, str) else time.time_ns()


def _held_name(kind: str, at: int) -> str:
    return f"{at}-{os.getpid()}-{kind}.json"


@dataclass(frozen=True)
class _Held:
    """A hook event the hook could not spool, waiting in memory behind its session's earlier events."""
    name: str  # as a spool file's would be: its time first, so it sorts among them (_spooled_at)
    text: str  # what its spool file would hold


@dataclass
class _Shown:
    """What a prompt's live answer showed (_context_ahead, or a live turn not settled yet), for its replay."""
    kept: list[Line]
    explained: list[dict[str, Any]]
    logged: bool = False  # the turn log has it (a try whose session save failed wrote it)
    scoring: bool = False  # the answer asked for scores (a live one's: a context found ahead asks for none)

    def as_json(self) -> dict[str, Any]:
        """What the replay needs, kept in the event's spool file: the lines' ids and versions, not their text."""
        return {"kept": [[line.memory_id, line.content_hash, line.pointer, line.scorable] for line in self.kept],
                "explained": self.explained, "logged": self.logged, "scoring": self.scoring}

    @classmethod
    def of_json(cls, data: Any) -> _Shown | None:
        """`as_json`'s output read back; None for anything else (the prompt is then opened without it, not dropped)."""
        try:
            kept = [Line(str(i), str(h), "", bool(p), bool(s)) for i, h, p, s in data["kept"]]
            explained = [{key: entry[key] for key in _REASON_KEYS if key in entry} for entry in data["explained"]
                         if isinstance(entry.get("id"), str)]  # what _context_lines writes, nothing else
            return cls(kept, explained, bool(data.get("logged")), bool(data.get("scoring")))
        except (TypeError, ValueError, KeyError, AttributeError):
            return None


class _LiveEvents:
    """The requests' events being applied now, and whether the vault still takes them (HookHandler.take_no_more)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._applying = 0
        self._closed = False

    def enter(self) -> None:
        with self._changed:
            if self._closed:
                raise VaultError("the memdir server is letting go of this vault: the event waits in the spool for "
                                 "its replay")
            self._applying += 1

    def leave(self) -> None:
        with self._changed:
            self._applying -= 1
            self._changed.notify_all()

    @contextlib.contextmanager
    def applying(self) -> Iterator[None]:
        self.enter()
        try:
            yield
        finally:
            self.leave()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self, bound: float) -> bool:
        """Take no more; wait up to `bound` seconds for those being applied. False when some still are."""
        with self._changed:
            self._closed = True
            return self._changed.wait_for(lambda: self._applying == 0, bound)


@dataclass(frozen=True)
class _CatchUp:
    """A prompt's session's earlier events being applied on the catch-up thread (HookHandler._catch_up)."""
    session: str
    tag: str  # the session's spool tag (spool_names)
    cutoff: int  # the prompt's own time (time_ns): the events before it are applied
    applied: Future[bool]
    until: float  # monotonic: how long the prompt waits for them

    def done_in_time(self) -> bool:
        """Whether every earlier event was applied by `until` (the prompt's search ran meanwhile)."""
        try:
            return self.applied.result(timeout=max(0.0, self.until - time.monotonic()))
        except (TimeoutError, CancelledError):  # not yet; or dropped as the vault is let go
            return False


@dataclass
class _Captured:
    stored: str | None  # the exchange's id (None: not stored, and not to be tried again)
    logged: bool = False  # the turn log has it


def _slots(hits: list[Hit], settings: Any, exclude: set[str], recent: bool = False) -> list[Hit]:
    """Best working, best history, then the best overall: each collection's reserved seat first.

    With `recent` (a prompt that names no subject: "where did we leave off", "what did we do
    yesterday") the hits are a timeline, newest first, and the seats go to the newest memories."""
    relevant = [h for h in hits if h.memory.id not in exclude
                and (h.relevance >= settings.min_relevance or (recent and h.channel == "timeline"))]
    chosen: list[Hit] = []
    for collection, count in (("working", settings.slots_working), ("history", settings.slots_history)):
        chosen += [h for h in relevant if h.memory.collection == collection][:count]
    chosen += [h for h in relevant if h not in chosen][: settings.slots_overall]
    return sorted(chosen, key=lambda h: (-h.final, -h.moment()))


def _fingerprint(answer: str) -> str:
    return hashlib.sha256(answer.encode()).hexdigest()[:16]


def _read_spooled(path: Path) -> str | None:
    """A spooled event's text; None when it cannot be read now (taken meanwhile: the claim decides) or is no event."""
    try:
        return _spooled_text(path)
    except (OSError, ValueError):
        return None


def _spooled_text(path: Path) -> str:
    """The text of a spool file as a hook wrote it: a regular file of at most MAX_SPOOLED_BYTES. Anything else
    placed there (by another process, an archive unpacked over the vault) is a ValueError, dropped as a malformed
    event: the spool was read whole and blocking, so a FIFO held the replay (the vault's open, every later event)
    for good, and a symlink to /dev/zero was read without end (bench/results/s21-attack21.md)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError("a symlink, not a spooled event") from None
        raise
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):  # before `open`: a directory's descriptor is an EISDIR there, read as a
            raise ValueError("not a regular file")  # disk error and retried at every back-off (review of session 22)
    except BaseException:
        os.close(fd)  # (`open` does not close a descriptor it fails on)
        raise
    with open(fd, "rb") as file:
        if status.st_size > MAX_SPOOLED_BYTES:
            raise ValueError(f"{status.st_size:,} bytes, more than a hook spools ({MAX_SPOOLED_BYTES:,})")
        return file.read(MAX_SPOOLED_BYTES + 1).decode("utf-8")


def _discard(taken: Path) -> None:
    """Remove a taken spool entry: a file, or a directory placed under a spool file's name (dropped as no event; its
    unlink raised out of the replay, and with it out of the vault's open)."""
    try:
        taken.unlink(missing_ok=True)
    except OSError:  # EISDIR on Linux, EPERM elsewhere
        if not (taken.is_dir() and not taken.is_symlink()):
            raise
        shutil.rmtree(taken, ignore_errors=True)


def _session_of(text: str | None) -> str:
    """The session a spooled event belongs to ("" when it does not say: applied, or dropped, on its own)."""
    try:
        session = json.loads(text or "").get("payload", {}).get("session_id")
    except (ValueError, AttributeError):
        return ""
    return session if isinstance(session, str) else ""


def _taken_name(taken: Path) -> str:
    """The spool name of a file taken by a claim (`.NAME.json.PID.NS.taken`, see _take)."""
    return taken.name[1:].split(".json.", 1)[0] + ".json"


def _spooled_at(path: Path | _Held) -> int:
    try:
        return int(path.name.split("-", 1)[0])
    except ValueError:
        return 0


def _take(path: Path) -> Path | None:
    """Claim a spool file by renaming it to a hidden name; None when another claim won."""
    claimed = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.taken")
    try:
        os.rename(path, claimed)
    except (FileNotFoundError, NotADirectoryError):  # (the spool's folder may be a file: hooks.spool's spare then)
        return None
    return claimed


def _session_id(event: Mapping[str, Any]) -> str:
    session_id = event.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValidationError("hook event has no session_id")
    return session_id[:200]

