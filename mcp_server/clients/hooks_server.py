"""The server side of the Claude Code hooks: choose and format context, capture exchanges, track turns.

The hook processes are tiny clients; everything that needs the index happens here, in the
process that already has it loaded.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Mapping

from indexer import timewords
from indexer.search import Hit, SearchRequest
from vault import ValidationError, VaultError

from ..service import leaks
from ..service import privacy as vaults
from ..service import turns
from ..service.capture import MAX_EXCHANGE_CHARS
from .context import Line, known_context, memory_line, pointer_line, scoring_request
from ..service.memory_service import MemoryService
from ..service.sessions import Session
from .trivial import is_trivial_exchange
from ..views.view import view_of

log = logging.getLogger("memdir.hooks")
# The search reads a long paste by its error lines and its user's sentences, which come last (indexer/salient.py):
# it is handed all of a prompt that size, not its beginning.
MAX_PROMPT_CHARS = 64_000
STALE_SECONDS = 45.0  # longer than any hook waits for its request: an older spool file lost its request
# A hook waits under a second for its answer (hooks.TIMEOUTS): a spool file older than this has nobody waiting
# on it, so the server's own timer may apply it (a request that still arrives finds it taken: applied once).
ORPHANED_SECONDS = 2.0
# How long a prompt's search waits for its query vector before it answers from the keyword channel alone: the
# model host may be starting (a cold start) or busy with a first index build, and the hook leaves after 0.9 s.
VECTOR_WAIT_SECONDS = 0.25
REPLAY_SESSIONS = 8  # sessions replayed side by side (replay)


class HookHandler:
    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self.settings = service.hook_settings()
        self.spool = service.spool_folder()
        self._claimed: dict[str, Path] = {}  # spool name -> the file this server took for its request
        # One replay applies the spool at a time: beside another, a replay found a session's prompt taken and applied
        # the Stop behind it first (the exchange captured before its prompt had opened the turn).
        self._replaying = threading.Lock()
        self._put_back: set[str] = set()  # spool files a replay could not apply for an OSError, already logged

    # -- UserPromptSubmit --------------------------------------------------------------

    def prompt(self, event: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _session_id(event)
        # A spool replay may have taken this prompt's event first (the drain when a vault opens, while the request
        # waited for it): the turn was started by the replay, and the hook, still waiting, gets its context.
        claimed = self._claim(event)
        if claimed:
            self.replay_stale()
        prompt = str(event.get("prompt") or "")
        result: dict[str, Any] = {} if claimed else {"replayed": True}

        def turn(state: Session) -> None:
            scoring = self._start_turn(state, prompt, event) if claimed else ""
            lines, explained = self._context_lines(state, prompt)
            block, kept = known_context(lines, self.settings.max_chars - len(scoring))
            for scorable in (True, False):
                state.show(((line.memory_id, line.content_hash) for line in kept if line.scorable == scorable),
                           scorable=scorable)
            result.update(additionalContext="\n\n".join(part for part in (scoring, block) if part),
                          shown=[line.memory_id for line in kept], scoring_required=bool(scoring))
            turns.record(self.service.app.root, "prompt", state.id, state.turn, prompt=self._loggable(state.prompt, kept),
                         shown=[explained[line.memory_id] for line in kept if line.memory_id in explained])

        self._settle(event, lambda: self.service.sessions.update(session_id, turn))
        return result

    def _loggable(self, prompt: str, kept: list[Line]) -> str:
        """The prompt's first line for the turn log in the project vault, unless it repeats a private memory shown
        with it: privacy is one rule on every path, and the log is a project file as a captured exchange is."""
        line = turns.first_line(prompt)
        shown = (self.service.find(k.memory_id) for k in kept)
        private = [m for m in shown if m is not None and not vaults.visible(m, include_private=False)]
        found = leaks.repeated(line, private)
        return line if found is None else f"(withheld: it repeats private memory {found[0].id})"

    def _start_turn(self, state: Session, prompt: str, event: Mapping[str, Any]) -> str:
        """Open a new turn; ask for scores when the previous answer completed with memories unscored."""
        pids = [int(p) for p in event.get("client_pids", []) if isinstance(p, int) or str(p).isdigit()]
        state.client_pids = sorted(set(state.client_pids) | set(pids))[-8:]
        scoring = ""
        if state.completed:
            pending = [i for i in dict.fromkeys(state.awaiting + state.turn_shown) if self.service.find(i)]
            state.awaiting = pending
            if pending:
                scoring = scoring_request(pending, client=str(event.get("client") or "claude-code"))
        elif state.turn_shown:
            # The previous prompt was interrupted before its answer (no Stop): what it was shown is
            # kept for the scoring request after the next completed answer, not forgotten.
            state.awaiting = [i for i in dict.fromkeys(state.awaiting + state.turn_shown) if self.service.find(i)]
        state.scoring_required = bool(scoring)
        state.turn += 1
        state.turn_shown = []
        state.completed = False
        state.scored_this_turn = False
        state.prompt = self.service.redacted(prompt)[:MAX_EXCHANGE_CHARS]  # the session file keeps no secret either
        return scoring

    def _context_lines(self, state: Session, prompt: str) -> tuple[list[Line], dict[str, dict[str, Any]]]:
        """The lines to inject, and for the turn log why each was chosen (relevance, channel, labels)."""
        always = self.service.always_inject()  # both vaults: the session is the local user's own
        hits: list[Hit] = []
        if prompt.strip():
            hits = self.service.hits(SearchRequest(query=prompt[:MAX_PROMPT_CHARS], limit=30, vector_wait=VECTOR_WAIT_SECONDS))
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
            # The turn log lives in the project vault's .memdir/: a private memory is logged by id alone, never
            # by its title (privacy is one rule on every path, local state included).
            named = {"title": memory.title} if vaults.visible(memory, include_private=False) else {"private": True}
            explained[memory.id] = {"id": memory.id, **named, "relevance": view.relevance,
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
        due, also one a dead server had taken; otherwise only files spooled before the cutoff (time_ns).

        A look for stale events (`older_than`: the drain's timer, a hook) finds one under way and leaves the spool to
        it and to the next drain; the others wait for it, then list the spool themselves."""
        if not self._replaying.acquire(blocking=not older_than):
            return 0
        try:
            return self._replay(spool, older_than, spooled_before)
        finally:
            self._replaying.release()

    def _replay(self, spool: Path, older_than: float, spooled_before: int | None) -> int:
        if not older_than and spooled_before is None:  # a file taken by a server that died applying it is due again
            for orphan in spool.glob(".*.json.*.taken"):
                os.replace(orphan, spool / (orphan.name[1:].split(".json.", 1)[0] + ".json"))
        cutoff = spooled_before if spooled_before is not None else time.time_ns() - int(older_than * 1e9)
        paths = sorted((p for p in spool.glob("*.json") if _spooled_at(p) <= cutoff), key=_spooled_at)
        # Each session's events in their order, the sessions side by side: a spooled Stop is a capture, and
        # captures made at once share one index sync (indexer/group_sync.py). One by one, the events nine
        # sessions spooled while a server started cost a Whoosh commit each, seconds before it served.
        sessions: dict[str, list[tuple[Path, str | None]]] = {}
        for path in paths:
            text = _read_spooled(path)
            sessions.setdefault(_session_of(text), []).append((path, text))

        def replay_session(events: list[tuple[Path, str | None]]) -> int:
            applied = 0
            for path, text in events:
                done = self._replay_one(path, text)
                if done is None:  # left for the next replay, and the session's later events behind it, in order
                    break
                applied += done
            return applied

        if len(sessions) <= 1:
            return sum(map(replay_session, sessions.values()))
        with ThreadPoolExecutor(min(REPLAY_SESSIONS, len(sessions)), thread_name_prefix="memdir-replay") as pool:
            return sum(pool.map(replay_session, sessions.values()))

    def _replay_one(self, path: Path, text: str | None) -> int | None:
        """Apply one spooled event (`text`: the file as read when the replay grouped it; a spooled file is written
        once, by rename, so what the claim takes is that text) unless a request or another replay took it first;
        1 when applied, None when it is put back for the next replay."""
        claimed = _take(path)
        if claimed is None:
            return 0  # its own request (or another replay) took it meanwhile
        applied = 1
        # The session's own time, not the replay's: sessions are replayed side by side and end in no fixed order, and
        # a session spooled in the morning was the client's latest over one spooled at noon (review of session 9).
        at = _spooled_at(path) / 1e9 or None
        try:
            record = json.loads(text if text is not None else claimed.read_text())
            payload = record["payload"]
            if record["event"] == "prompt":
                self.service.sessions.update(_session_id(payload),
                                             lambda s: self._start_turn(s, str(payload.get("prompt") or ""), payload),
                                             at)
            elif record["event"] == "stop":
                self.stop(payload, claimed=True, at=at)
        except (ValueError, KeyError, TypeError, VaultError) as exc:
            log.warning("spooled hook event %s dropped: %s", path.name, exc)
            applied = 0
        except OSError as exc:  # the disk, not the event: taken, it waited hidden for the next start (review of s10)
            os.replace(claimed, path)
            if path.name not in self._put_back:  # once: the drain tries again every few seconds while the disk is full
                self._put_back.add(path.name)
                log.warning("spooled hook event %s left in the spool for the next replay: %s", path.name, exc)
            return None
        self._put_back.discard(path.name)
        # Not on any other error: the taken file stays, and the next start applies it (see replay).
        claimed.unlink(missing_ok=True)
        return applied

    def drain(self, spooled_before: int | None = None) -> int:
        """The server's own pass over the spool (its timer, and the moment its vault is open): events whose
        hook no longer waits, or spooled before `spooled_before` (answered "opening", so nobody will claim them)."""
        if spooled_before is None:
            return self.replay(self.spool, older_than=ORPHANED_SECONDS)
        return self.replay(self.spool, spooled_before=spooled_before)

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
        claimed = _take(self.spool / name)
        if claimed is None:
            return False
        self._claimed[name] = claimed
        return True

    def _settle(self, event: Mapping[str, Any], apply: Any) -> None:
        """Apply the event; then drop its spool file, or put it back for a replay when applying failed."""
        claimed = self._claimed.pop(str(event.get("spool")), None)
        try:
            apply()
        except BaseException:
            if claimed is not None:
                os.replace(claimed, self.spool / str(event["spool"]))
            raise
        if claimed is not None:
            claimed.unlink(missing_ok=True)

    # -- Stop ----------------------------------------------------------------------------

    def stop(self, event: Mapping[str, Any], claimed: bool = False, at: float | None = None) -> dict[str, Any]:
        """The Stop hook: capture the exchange and complete the turn (`at`: when a replayed event was spooled)."""
        session_id = _session_id(event)
        if not claimed and not self._claim(event):
            return {"stored": None, "reason": "replayed"}
        if event.get("stop_hook_active"):
            self._settle(event, lambda: None)
            return {"stored": None, "reason": "stop_hook_active"}
        answer = str(event.get("last_assistant_message") or "")
        result: dict[str, Any] = {}

        def finish(state: Session) -> None:
            stored = None
            if self.settings.capture_exchanges and (state.prompt or answer):
                if is_trivial_exchange(state.prompt, answer):
                    log.info("session %s: turn %d is an acknowledgement or a scoring turn; not stored", session_id, state.turn)
                else:
                    stored = self.service.capture_exchange(state.id, state.prompt, answer, state.turn_shown,
                                                           state.last_exchange, at)
                    state.last_exchange = stored or state.last_exchange
                    if stored:
                        turns.record(self.service.app.root, "exchange", state.id, state.turn, at, stored=stored)
            if state.scoring_required and not state.scored_this_turn:
                log.warning("session %s: turn %d asked for score_memories and it was not called", session_id, state.turn)
            state.completed = True
            result.update(stored=stored, scored=state.scored_this_turn, scoring_required=state.scoring_required)

        self._settle(event, lambda: self.service.sessions.update(session_id, finish, at))
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
        self.service.sessions.update(session_id, orient)
        return {"additionalContext": "\n".join(lines)}


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


def _read_spooled(path: Path) -> str | None:
    """A spooled event's text; None when it cannot be read now (taken meanwhile: the claim decides)."""
    try:
        return path.read_text()
    except OSError:
        return None


def _session_of(text: str | None) -> str:
    """The session a spooled event belongs to ("" when it does not say: applied, or dropped, on its own)."""
    try:
        session = json.loads(text or "").get("payload", {}).get("session_id")
    except (ValueError, AttributeError):
        return ""
    return session if isinstance(session, str) else ""


def _spooled_at(path: Path) -> int:
    try:
        return int(path.name.split("-", 1)[0])
    except ValueError:
        return 0


def _take(path: Path) -> Path | None:
    """Claim a spool file by renaming it to a hidden name; None when another claim won."""
    claimed = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.taken")
    try:
        os.rename(path, claimed)
    except FileNotFoundError:
        return None
    return claimed


def _session_id(event: Mapping[str, Any]) -> str:
    session_id = event.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValidationError("hook event has no session_id")
    return session_id[:200]

