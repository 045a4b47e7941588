"""The server side of the Claude Code hooks: choose and format context, capture exchanges, track turns.

The hook processes are tiny clients; everything that needs the index happens here, in the
process that already has it loaded.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Mapping

from indexer.search import Hit, SearchRequest
from vault import ValidationError, VaultError, normalize
from vault.secrets import redact

from . import privacy as vaults
from .context import Line, known_context, memory_line, pointer_line, scoring_request
from .service import MemoryService
from .sessions import Session

log = logging.getLogger("memdir.hooks")
MAX_PROMPT_CHARS = 4000  # the query is the prompt's beginning; a pasted log is not a better query
MAX_EXCHANGE_CHARS = 12_000


class HookHandler:
    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self.settings = service.app.config.context

    # -- UserPromptSubmit --------------------------------------------------------------

    def prompt(self, event: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _session_id(event)
        prompt = str(event.get("prompt") or "")
        state = self.service.sessions.load(session_id)
        scoring = self._start_turn(state, prompt, event)
        lines = self._context_lines(state, prompt)
        block, kept = known_context(lines, self.settings.max_chars - len(scoring))
        for scorable in (True, False):
            state.show(((line.memory_id, line.content_hash) for line in kept if line.scorable == scorable),
                       scorable=scorable)
        self.service.sessions.save(state)
        context = "\n\n".join(part for part in (scoring, block) if part)
        return {"additionalContext": context, "shown": [line.memory_id for line in kept],
                "scoring_required": bool(scoring)}

    def _start_turn(self, state: Session, prompt: str, event: Mapping[str, Any]) -> str:
        """Open a new turn; ask for scores when the previous answer completed with memories unscored."""
        pids = [int(p) for p in event.get("client_pids", []) if isinstance(p, int) or str(p).isdigit()]
        state.client_pids = sorted(set(state.client_pids) | set(pids))[-8:]
        scoring = ""
        if state.completed:
            pending = [i for i in dict.fromkeys(state.awaiting + state.turn_shown) if self.service.find(i)]
            state.awaiting = pending
            if pending:
                scoring = scoring_request(pending)
        state.scoring_required = bool(scoring)
        state.turn += 1
        state.turn_shown = []
        state.completed = False
        state.scored_this_turn = False
        state.prompt = self._redacted(prompt)[:MAX_EXCHANGE_CHARS]  # the session file keeps no secret either
        return scoring

    def _context_lines(self, state: Session, prompt: str) -> list[Line]:
        always = self.service.always_inject()  # both vaults: the session is the local user's own
        hits: list[Hit] = []
        if prompt.strip():
            hits = self.service.hits(SearchRequest(query=prompt[:MAX_PROMPT_CHARS], limit=30))
        chosen = _slots(hits, self.settings, exclude={m.id for m in always})
        lines = []
        for memory, relevance in [(m, None) for m in always] + [(h.memory, h.relevance) for h in chosen]:
            shape = normalize(memory)
            chosen_now = relevance is not None
            if state.shown.get(memory.id) == memory.content_hash:
                lines.append(Line(memory.id, memory.content_hash, pointer_line(shape), True, chosen_now))
            else:
                text = memory_line(shape, relevance, self.settings.content_chars)
                lines.append(Line(memory.id, memory.content_hash, text, False, chosen_now))
        return lines

    def replay(self, spool: Path) -> int:
        """Apply hook events spooled while the server was down, oldest first; returns how many."""
        replayed = 0
        for path in sorted(spool.glob("*.json"), key=lambda p: int(p.name.split("-", 1)[0])):
            try:
                record = json.loads(path.read_text())
                if record["event"] == "prompt":
                    state = self.service.sessions.load(_session_id(record["payload"]))
                    self._start_turn(state, str(record["payload"].get("prompt") or ""), record["payload"])
                    self.service.sessions.save(state)
                elif record["event"] == "stop":
                    self.stop(record["payload"])
                replayed += 1
            except (ValueError, KeyError, TypeError, VaultError) as exc:
                log.warning("spooled hook event %s dropped: %s", path.name, exc)
            path.unlink(missing_ok=True)
        return replayed

    # -- Stop ----------------------------------------------------------------------------

    def stop(self, event: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _session_id(event)
        if event.get("stop_hook_active"):
            return {"stored": None, "reason": "stop_hook_active"}
        state = self.service.sessions.load(session_id)
        answer = str(event.get("last_assistant_message") or "")
        stored = None
        if self.settings.capture_exchanges and (state.prompt or answer):
            stored = self._capture(state, answer)
        if state.scoring_required and not state.scored_this_turn:
            log.warning("session %s: turn %d asked for score_memories and it was not called", session_id, state.turn)
        state.completed = True
        self.service.sessions.save(state)
        return {"stored": stored, "scored": state.scored_this_turn, "scoring_required": state.scoring_required}

    def _redacted(self, text: str) -> str:
        """Captured text with credentials replaced by [REDACTED:kind]: capture is automatic, so it redacts
        where a tool call would be refused, and a capture never fails because of a secret."""
        return redact(text)[0] if self.service.app.config.vault.scan_secrets else text

    def _capture(self, state: Session, answer: str) -> str | None:
        prompt = self._redacted(state.prompt).strip()
        text = f"User: {prompt}\n\nAssistant: {self._redacted(answer).strip()}"[:MAX_EXCHANGE_CHARS]
        extra: dict[str, Any] = {"session": state.id}
        title = "Exchange: " + (prompt.splitlines()[0][:80] if prompt else "(no prompt)")
        curator = self.service.curator
        # An answer built on private memories may repeat them: that exchange is private too, and is
        # kept in the user vault when there is one (else it stays, marked private, in working/).
        shown = [self.service.find(i) for i in state.turn_shown]
        if any(m is not None and not vaults.visible(m, include_private=False) for m in shown):
            extra["privacy"] = vaults.PRIVATE
            if self.service.app.user_root is not None:
                curator = vaults.add_side(self.service.app, vaults.PRIVATE).curator
        if state.last_exchange and state.last_exchange in curator.index.memories:
            extra["previous"] = state.last_exchange  # consecutive exchanges give each other context
        try:
            added = curator.add(text, title=title, type="history", collection="working", extra=extra)
        except VaultError as exc:
            log.warning("session %s: exchange not stored: %s", state.id, exc)
            return None
        state.last_exchange = added.memory.id
        return added.memory.id

    # -- SessionStart --------------------------------------------------------------------

    def session_start(self, event: Mapping[str, Any]) -> dict[str, Any]:
        session_id = _session_id(event)
        stats = self.service.stats()
        standing = self.service.always_inject()  # sorted by id
        counts = ", ".join(f"{count} {name}" for name, count in sorted(stats["collections"].items()))
        lines = [f"memdir memory vault: {stats['memories']} memories ({counts or 'empty'}). "
                 "Relevant memories arrive with each prompt as KNOWN CONTEXT; search_memory finds more."]
        if standing:
            lines.append("Standing facts:")
            lines += [memory_line(normalize(m), None, self.settings.content_chars) for m in standing]
        if stats["problems"]:
            lines.append(f"({stats['problems']} files in the vault could not be read; `memdir doctor` lists them.)")
        state = self.service.sessions.load(session_id)
        if event.get("source") in ("clear", "compact"):
            state.shown = {}  # the earlier injections are gone from the model's context
        state.show(((m.id, m.content_hash) for m in standing), scorable=False)
        self.service.sessions.save(state)
        return {"additionalContext": "\n".join(lines)}


def _slots(hits: list[Hit], settings: Any, exclude: set[str]) -> list[Hit]:
    """Best working, best history, then the best overall: each collection's reserved seat first."""
    relevant = [h for h in hits if h.relevance >= settings.min_relevance and h.memory.id not in exclude]
    chosen: list[Hit] = []
    for collection, count in (("working", settings.slots_working), ("history", settings.slots_history)):
        chosen += [h for h in relevant if h.memory.collection == collection][:count]
    chosen += [h for h in relevant if h not in chosen][: settings.slots_overall]
    return sorted(chosen, key=lambda h: -h.final)


def _session_id(event: Mapping[str, Any]) -> str:
    session_id = event.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        raise ValidationError("hook event has no session_id")
    return session_id[:200]

