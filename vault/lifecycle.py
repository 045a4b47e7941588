"""The memory lifecycle: promotion, demotion and expiry, decided by pure rules and applied on demand.

    working  ──(after 24 h: score ≥ 0.7 and uses ≥ 2)──▶ history ──(score ≥ 0.9, uses ≥ 3,
      │ else removed                                      │        success ≥ 5)──▶ patterns
      ▼                                                   ▼ idle 30 d: removed     │ score < 0.4
    .trash/                                             .trash/                    ▼ back to history
    any scored memory below 0.2 whose last 3 and most uses failed → .trash/   type TTLs: removed (memory_bank: archived)

`plan` decides; `apply` carries the decisions out through the vault's writer (atomic,
conflict-checked) and appends every decision to `.memdir/lifecycle.jsonl`. Nothing here runs
by itself: `memdir gc` (or a schedule the user sets in memdir.toml) calls it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import date, datetime, time as dt_time, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterable

from .errors import VaultError
from .model import Memory
from .settings import LifecycleSettings
from .store import Vault
from .write import Change

LOG_NAME = ".memdir/lifecycle.jsonl"


@dataclass(frozen=True)
class Decision:
    id: str
    path: str
    action: str  # promote | demote | remove | archive
    from_collection: str
    to_collection: str | None  # None when removed or archived
    why: str


def plan(memories: Iterable[Memory], now: datetime, settings: LifecycleSettings) -> list[Decision]:
    """What the lifecycle would do to each memory now (at most one decision per memory)."""
    decisions = []
    for memory in memories:
        decision = _decide(memory, now, settings)
        if decision is not None:
            decisions.append(decision)
    return decisions


def leaving(m: Memory, now: datetime, settings: LifecycleSettings) -> str:
    """Why the next lifecycle run will remove or archive this memory ("" when it stays). Readers
    leave such memories out at once: an expired memory must not be served while it waits for a run."""
    decision = _decide(m, now, settings)
    return decision.why if decision is not None and decision.action in ("remove", "archive") else ""


def next_change(m: Memory, now: datetime, s: LifecycleSettings) -> datetime | None:
    """The first moment at or after `now` past which `leaving(m, ·, s)` may answer otherwise than at `now` (None when no
    such moment lies ahead). The clock enters the rules only as "this much time has passed since one of the memory's
    dates" (`_decide`, `_type_expired`): their answer is the same between two such moments, so a reader that decided a
    memory at `now` needs to decide it again only once the clock is past this one (or the memory changed). Each rule
    that removes or archives asks for *more* time passed, and none that keeps a memory asks for less: a memory once
    leaving stays leaving while it is unchanged (a reader need not watch it; `may_leave(later)` refusing it means it
    is not leaving before `later` either)."""
    return next_changes(s)(m, now)


def next_changes(s: LifecycleSettings) -> Callable[[Memory, datetime], datetime | None]:
    """`next_change` under these settings, its spans made once (a served searcher asks it of 100k memories)."""
    of_type = {kind: timedelta(days=ttl) for kind, ttl in s.type_ttl_days.items() if ttl}
    working, history = timedelta(hours=s.working_max_age_hours), timedelta(days=s.history_max_age_days)

    def moment(m: Memory, now: datetime) -> datetime | None:
        if m.collection == "books" or m.status in ("archived", "superseded"):
            return None
        created, last_used = m.created_at, m.last_used_at
        idle_from = last_used if created is None or (last_used is not None and last_used > created) else created
        moments = []
        ttl = of_type.get(m.type)
        if ttl is not None:
            deadline = deadline_of(m) if m.frontmatter else None
            moments.append(_later(deadline or (idle_from if m.type in IDLE_TTL_TYPES else created), ttl))
        if m.collection == "working":
            moments.append(_later(created, working))
        elif m.collection == "history":
            moments.append(_later(idle_from, history))
        ahead = [t for t in moments if t is not None and t >= now]
        return min(ahead) if ahead else None

    return moment


def _later(moment: datetime | None, span: timedelta) -> datetime | None:
    """`moment + span`, None past the last date a datetime holds (a time to live of a million years never ends)."""
    if moment is None:
        return None
    try:
        return moment + span
    except OverflowError:
        return None


def may_leave(now: datetime, s: LifecycleSettings) -> Callable[..., bool]:
    """A test of a memory's stored facts (collection, type, status, uses, score, and created_at, last_used_at and
    deadline as ISO text) that is False only when `leaving(m, now, s)` is "" whatever the memory's other fields: a book,
    an archived or superseded memory, and one whose counters are not failing, that has no deadline and whose times (in
    UTC) are too recent for its type's time to live and its collection's age rule (`_decide` and `_type_expired`
    below). A served searcher decides only the memories it lets through: a cold open's first search made and decided a
    record for each of 100k rows (bench/results/s13-kill13.md). A True is only a maybe."""
    young_working = _utc_text(now - timedelta(hours=s.working_max_age_hours))
    young_history = _utc_text(now - timedelta(days=s.history_max_age_days))
    young_of_type = {kind: _utc_text(now - timedelta(days=ttl)) for kind, ttl in s.type_ttl_days.items() if ttl}

    def test(collection: str, memory_type: str, status: str, uses: int, score: float, created: str | None,
             last_used: str | None, deadline: str | None) -> bool:
        if collection == "books" or status in ("archived", "superseded"):
            return False
        if uses > 0 and score < s.remove_below:
            return True
        young = young_of_type.get(memory_type)
        if young is not None:
            if deadline is not None:
                return True
            if not (_after(created, young) or (memory_type in IDLE_TTL_TYPES and _after(last_used, young))):
                return True
        if collection == "working":
            return not _after(created, young_working)
        if collection == "history":  # idle since the later of the two
            return not (_after(created, young_history) or _after(last_used, young_history))
        return False  # memory_bank, patterns: only a time to live or failures remove or archive them

    return test


def _utc_text(moment: datetime) -> str:
    """A moment as the first 19 characters of its UTC ISO text (to the second), for `_after`."""
    return moment.astimezone(timezone.utc).isoformat()[:19]


def _after(text: str | None, second: str) -> bool:
    """Whether an ISO time stored as text is surely later than the moment `second` (`_utc_text`) names: told from the
    text alone when it is UTC ("+00:00", as `datetime.isoformat` writes it), a later second being later whatever the
    fraction; False when it cannot tell (another offset, no time)."""
    return text is not None and text.endswith("+00:00") and len(text) >= 25 and text[:19] > second


def _decide(m: Memory, now: datetime, s: LifecycleSettings) -> Decision | None:
    def make(action: str, to: str | None, why: str) -> Decision:
        return Decision(m.id, m.path, action, m.collection, to, why)

    if m.collection == "books" or m.status in ("archived", "superseded"):
        return None
    expired = _type_expired(m, now, s)
    if m.collection == "memory_bank":
        return make("archive", None, expired) if expired else None
    if (m.uses > 0 and m.score < s.remove_below and m.success_count < m.uses / 2
            and _failed_in_a_row(m) >= s.remove_after_failures):
        return make("remove", None, f"score {m.score:.2f} < {s.remove_below} after {_uses(m.uses)}, "
                                    f"the last {s.remove_after_failures} failed")
    if expired:
        return make("remove", None, expired)
    age = _age(m.created_at, now)
    if m.collection == "working" and age is not None and age > timedelta(hours=s.working_max_age_hours):
        if m.score >= s.history_min_score and m.uses >= s.history_min_uses:
            return make("promote", "history", f"score {m.score:.2f} ≥ {s.history_min_score} and {_uses(m.uses)} "
                                              f"≥ {s.history_min_uses} after {_hours(age)}")
        return make("remove", None, f"working memory older than {s.working_max_age_hours:g} h and not promoted "
                                    f"(score {m.score:.2f}, {_uses(m.uses)})")
    if m.collection == "history":
        if m.score >= s.patterns_min_score and m.uses >= s.patterns_min_uses and m.success_count >= s.patterns_min_successes:
            return make("promote", "patterns", f"score {m.score:.2f} ≥ {s.patterns_min_score}, {_uses(m.uses)}, "
                                               f"success {m.success_count:g} ≥ {s.patterns_min_successes:g}")
        idle = _age(_latest(m.created_at, m.last_used_at), now)
        if idle is not None and idle > timedelta(days=s.history_max_age_days):
            return make("remove", None, f"history memory idle for {idle.days} d (> {s.history_max_age_days:g} d)")
    if m.collection == "patterns" and m.score < s.demote_below:
        return make("demote", "history", f"score {m.score:.2f} < {s.demote_below}")
    return None


def _failed_in_a_row(m: Memory) -> int:
    """How many of the memory's latest scored outcomes failed in a row. A low score alone deleted a
    helpful memory after two wrong `failed` (with a fifth of scores wrong, one new memory in seven
    within eight uses; bench/results/trust.md), and a streak alone, sooner or later, one with a long good
    record: removal needs the streak and most uses failed. Counters without a list (written by a
    person, or summed by a merge) count as a streak when not one use succeeded. A takeaway's first
    entry, the outcome of the exchange it was recorded from, is not a use and does not count."""
    scored = [o for o in m.outcomes if o != "unknown"][-m.uses:] if m.uses else []
    if not scored:
        return m.uses if m.success_count == 0 else 0
    streak = 0
    for outcome in reversed(scored):
        if outcome != "failed":
            break
        streak += 1
    return streak


# What happened (a captured exchange, a fix) stays while it keeps being used: a history-type memory
# that became a proven pattern must not expire by age alone, an unused one goes after its TTL.
IDLE_TTL_TYPES = frozenset({"history"})


def _type_expired(m: Memory, now: datetime, s: LifecycleSettings) -> str:
    ttl = s.type_ttl_days.get(m.type)
    if not ttl:
        return ""
    deadline = deadline_of(m)
    if deadline is not None:
        # An objective due in February is not stale in December: its time-to-live starts at the deadline.
        if now - deadline > timedelta(days=ttl):
            return f"{m.type} memories expire {ttl:g} d after their deadline ({deadline.date().isoformat()})"
        return ""
    if m.type in IDLE_TTL_TYPES:
        idle = _age(_latest(m.created_at, m.last_used_at), now)
        if idle is not None and idle > timedelta(days=ttl):
            return f"{m.type} memories expire {ttl:g} d after their last use (this one: {idle.days} d)"
        return ""
    age = _age(m.created_at, now)
    if age is not None and age > timedelta(days=ttl):
        return f"{m.type} memories expire after {ttl:g} d (this one is {age.days} d old)"
    return ""


def deadline_of(m: Memory) -> datetime | None:
    """The memory's `deadline` key as an aware datetime (end of that day for a bare date), or None. The index keeps it
    so, as a column (indexer/lifecycle_facts.py)."""
    value = m.frontmatter.get("deadline")
    if isinstance(value, str):
        try:
            value = date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, dt_time.max, tzinfo=timezone.utc)
    return None


def _age(moment: datetime | None, now: datetime) -> timedelta | None:
    return now - moment if moment else None


def _latest(*moments: datetime | None) -> datetime | None:
    present = [m for m in moments if m]
    return max(present) if present else None


def _uses(count: int) -> str:
    return "1 use" if count == 1 else f"{count} uses"


def _hours(age: timedelta) -> str:
    return f"{age.total_seconds() / 3600:.0f} h"


@dataclass(frozen=True)
class Applied:
    decision: Decision
    result: str  # the new path, the trash path, or why it could not be applied


def apply(vault: Vault, decisions: Iterable[Decision], memories: dict[str, Memory], now: datetime) -> list[Applied]:
    """Carry the decisions out and log each one; one failing file does not stop the others."""
    applied = []
    for decision in decisions:
        memory = memories[decision.id]
        try:
            result = _carry_out(vault, decision, memory, now)
        except VaultError as exc:
            result = f"not applied: {exc}"
        applied.append(Applied(decision, result))
        _log(vault.root, decision, result, now)
    return applied


def _carry_out(vault: Vault, decision: Decision, memory: Memory, now: datetime) -> str:
    if decision.action == "remove":
        return vault.trash(memory)
    if decision.action == "archive":
        return vault.edit(memory, Change(fields={"status": "archived", "updated_at": now})).path
    target = decision.to_collection or memory.collection
    folder, _, name = memory.path.rpartition("/")
    move_to = f"{target}/{name}" if folder == memory.collection else None  # a file a human placed elsewhere stays there
    if move_to and (vault.root / move_to).exists():
        move_to = f"{target}/{memory.id}-{name}"
    return vault.edit(memory, Change(fields={"collection": target}, move_to=move_to)).path


def _log(root: Path, decision: Decision, result: str, now: datetime) -> None:
    path = root / LOG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"when": now.strftime("%Y-%m-%dT%H:%M:%SZ"), **asdict(decision), "result": result}
    line = json.dumps(record, ensure_ascii=False) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())  # one write() of a short line to an O_APPEND file: lines never interleave
    finally:
        os.close(fd)
