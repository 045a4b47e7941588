"""The review inbox: what in a vault needs a human decision, one item each with the command that resolves it.

Stale memories (their cited code changed), near-duplicate groups, possible contradictions, newer
memories that change a value in an older one (supersession candidates), what the next `gc` will
promote, remove, demote or archive, files that fail validation or hold a credential, and
memories whose text imitates memdir's own markers or speaks to the model as instructions (a
teammate's pushed memory is untrusted input; its markers are neutralized wherever it is injected,
and it is listed here so a person looks at it).

A dismissed item is remembered by a key made from its kind, ids and the content it was about
(content hashes, the stale verdicts); when any of that changes, the key changes and the item
comes back. Dismissals are local state in `.memdir/` (never committed).

What the vault-wide passes derive is kept under `.memdir/review/` (see neighbourhood and
review_memo), so a new process answers at 10k memories in about half a second of CPU.
"""

from __future__ import annotations

import gc
import hashlib
import json
import re
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from vault import atomic, secrets
from vault.model import Memory

from . import reversal
from .curator import CONFLICT_TYPES, Curator
from .multihop import memory_vector

DISMISSED_FILE = ".memdir/review-dismissed.json"
# Text that imitates memdir's own frames or addresses the model with orders.
# Role lines count only in capitals ("SYSTEM:"): memdir's own capture writes "User: ... Assistant: ...",
# and a captured exchange is a real memory, not an imitation.
_IMITATION = re.compile(
    r"═{2,}|(?i:(?:END|KNOWN) CONTEXT)|(?i:</?memdir[\w-]*)|^\s*(?:SYSTEM|ASSISTANT|DEVELOPER)\s*:"
    r"|(?i:\bignore (?:all |any )?(?:the )?(?:previous|prior|above) (?:instructions|context)\b)",
    re.MULTILINE,
)
CONTRADICTION_NEIGHBOURS = 5
# The vault-wide neighbour passes (duplicates, contradictions) by index: they change only when the index does.
# Held by the index object itself, weakly: a key of id(index) outlived its index, so a later index at the same address
# and version (a served reindex swaps a fresh one in; every fresh one starts at version 0) read the dead one's items,
# and every index ever opened kept its lists in the dict.
_PAIRS: weakref.WeakKeyDictionary[Any, tuple[int, list[Item], list[Item]]] = weakref.WeakKeyDictionary()
# review.across, by the private index then the shared one, with both indices' versions.
_ACROSS: weakref.WeakKeyDictionary[Any, weakref.WeakKeyDictionary[Any, tuple[tuple[int, int], list[Item]]]] = \
    weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Item:
    kind: str  # stale | duplicates | contradiction | supersede | promote | remove | demote | archive | invalid | secret | imitation
    ids: tuple[str, ...]
    reason: str
    action: str  # the one command that resolves it
    key: str  # what `memdir review --dismiss KEY` names
    path: str | None = None  # for files that are not (valid) memories
    line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        shape = {"kind": self.kind, "ids": list(self.ids), "reason": self.reason, "action": self.action, "key": self.key}
        if self.path:
            shape.update(path=self.path, line=self.line)
        return shape


def _key(kind: str, *parts: Any) -> str:
    return hashlib.sha1(json.dumps([kind, *parts], sort_keys=True, default=str).encode()).hexdigest()[:12]


@dataclass
class Inbox:
    """Builds a vault's review queue from its index and curator."""

    curator: Curator
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def index(self):  # type: ignore[no-untyped-def]
        return self.curator.index

    def items(self, dismissed: Iterable[str] = ()) -> list[Item]:
        hidden = set(dismissed)
        with _collector_paused():
            found = [*self._stale(), *self._similar_pairs(), *self._lifecycle(), *self._invalid(), *self._secrets(),
                     *self._imitations()]
            self.curator.review_memo.save(self.index.all_memories())  # what this call computed, for the next process
        return [item for item in found if item.key not in hidden]

    def _memories(self) -> list[Memory]:
        return sorted(self.index.all_memories(), key=lambda m: m.path)

    def _stale(self) -> list[Item]:
        items = []
        for memory in self._memories():
            stale = self.index.vault.stale(memory)
            if stale:
                what = "; ".join(f"{s['path']} {s['reason']}" for s in stale)
                # verify refuses a memory citing a symbol the code no longer defines: the text must change first
                action = (f"edit {memory.path} to what the code says now (a symbol it cites is gone, and memdir "
                          f"verify does not confirm that), then memdir verify {memory.id}; else delete it"
                          if any(s["reason"] == "symbol-missing" for s in stale) else
                          f"memdir verify {memory.id} (after checking it still holds), else update or delete it")
                items.append(Item("stale", (memory.id,), f"cites code that changed since it was written: {what}",
                                  action, _key("stale", memory.id, memory.content_hash, stale)))
        return items

    def _similar_pairs(self) -> list[Item]:
        cached = _PAIRS.get(self.index)
        if cached is None or cached[0] != self.index.version:
            cached = _PAIRS[self.index] = (self.index.version, self._duplicates(), self._contradictions())
        return cached[1] + cached[2]

    def _duplicates(self) -> list[Item]:
        items = []
        for cluster in self.curator.suggest_merges(limit=50):
            hashes = [self.index.memory(i).content_hash for i in cluster.ids]
            items.append(Item("duplicates", cluster.ids, f"{len(cluster.ids)} memories at similarity ≥ {cluster.similarity:.2f} "
                              "may say the same thing", f"memdir merge {' '.join(cluster.ids)} --into TITLE",
                              _key("duplicates", cluster.ids, hashes)))
        return items

    def _contradictions(self) -> list[Item]:
        """Similar memories of a decision-like type where one reverses the other: a changed value (a
        number, a version) is listed as a supersession candidate (`supersede`: the newer one likely
        updates the older), an order flipped, a negation or an antonym as a `contradiction`. Pairs
        where one already supersedes the other are left out."""
        floor = self.curator.dedup.possible_conflict
        superseded = self.index.link_view.superseded_ids()
        seen: set[tuple[str, str]] = set()
        items = []
        deciding = [m.id for m in self._memories()
                    if m.type in CONFLICT_TYPES and m.status == "active" and m.id not in superseded]
        for memory_id, close in self.curator.close_pairs(deciding, CONTRADICTION_NEIGHBOURS, at_least=floor).items():
            memory = self.index.memory(memory_id)
            for other, similarity in close:
                pair = tuple(sorted((memory.id, other)))
                partner = self.index.memory(other)
                if (similarity < floor or pair in seen or partner is None or partner.type != memory.type
                        or partner.status != "active" or partner.id in superseded):
                    continue
                why = self.curator.reverses(memory, partner)
                if not why:
                    continue
                seen.add(pair)  # type: ignore[arg-type]
                older, newer, told = in_order(memory, partner)
                why = self.curator.reverses(older, newer) or why  # told from the older to the newer
                if not told:
                    why += "; both written in the same second, so which is newer is a guess: check before you link"
                hashes = [self.index.memory(i).content_hash for i in pair]
                supersede = f"memdir link {newer.id} {older.id} --as supersedes"
                if reversal.updates(why):
                    items.append(Item("supersede", pair, f"«{newer.title}» may update the older «{older.title}» ({why})",  # type: ignore[arg-type]
                                      supersede, _key("supersede", pair, hashes)))
                else:
                    items.append(Item("contradiction", pair, f"«{older.title}» and «{newer.title}» disagree ({why})",  # type: ignore[arg-type]
                                      f"{supersede} if the newer one holds (else memdir delete {newer.id})",
                                      _key("contradiction", pair, *hashes)))
        return items

    def _lifecycle(self) -> list[Item]:
        items = []
        # In file order, like every other pass (the plan follows the index's load order, which differs by process).
        for decision in sorted((a.decision for a in self.curator.gc(now=self.now, dry_run=True)), key=lambda d: d.path):
            memory = self.index.memory(decision.id)
            where = f" to {decision.to_collection}" if decision.to_collection else ""
            items.append(Item(decision.action, (decision.id,), f"the next gc will {decision.action} it{where}: {decision.why}",
                              f"memdir gc (or score/edit {decision.id} first to change the outcome)",
                              _key(decision.action, decision.id, memory.content_hash if memory else None)))
        return items

    def _invalid(self) -> list[Item]:
        problems = self.index.problems() + self.index.vault.anchor_problems(self.index.all_memories())
        return [Item("invalid", (), p.reason, f"fix {p.path}" + (f" line {p.line}" if p.line else "") + " by hand",
                     _key("invalid", p.path, p.line, p.reason), p.path, p.line) for p in problems]

    def _secrets(self) -> list[Item]:
        items = []
        for memory in self._memories():
            labels = self.curator.review_memo.secrets(memory, lambda: sorted({f.label for f in secrets.scan(memory.body)}))
            if labels:
                kinds = ", ".join(labels)
                items.append(Item("secret", (memory.id,), f"holds what looks like a credential ({kinds})",
                                  f"remove it from {memory.path} (and rotate it if it was committed)",
                                  _key("secret", memory.id, memory.content_hash)))
        return items

    def _imitations(self) -> list[Item]:
        items = []
        for memory in self._memories():
            text = memory.title + "\n" + memory.body
            found = self.curator.review_memo.imitation(
                memory, lambda: (m.group(0).strip() if (m := _IMITATION.search(text)) else ""))
            if found:
                items.append(Item("imitation", (memory.id,),
                                  f"its text imitates memdir's markers or instructs the model ({found!r}); "
                                  "it is injected with those neutralized", f"read {memory.path}; memdir delete {memory.id} if it is not a real memory",
                                  _key("imitation", memory.id, memory.content_hash)))
        return items


def across(private: Curator, shared: Curator) -> list[Item]:
    """Contradictions between the user vault's memories (`private`) and the project's shared ones, for the user's
    own inbox only: the item lives with the private side (its key, its dismissal), and nothing of it is written
    into a shared file. A shared memory cannot point at a private one, so the way out is never a supersede link:
    delete the private one if the shared one holds, else correct the shared one in words that are not the
    private memory's (the privacy rule refuses a copy). Kept until either index changes, like the pair passes."""
    by_shared = _ACROSS.setdefault(private.index, weakref.WeakKeyDictionary())
    versions = (private.index.version, shared.index.version)
    cached = by_shared.get(shared.index)
    if cached is None or cached[0] != versions:
        cached = by_shared[shared.index] = (versions, _across(private, shared))
    return cached[1]


def _across(private: Curator, shared: Curator) -> list[Item]:
    floor = shared.dedup.possible_conflict
    gone = shared.index.link_view.superseded_ids()
    items = []
    for memory in sorted(private.index.all_memories(), key=lambda m: m.path):
        if memory.type not in CONFLICT_TYPES or memory.status != "active":
            continue
        vector = memory_vector(private.index, memory.id)
        if vector is None:
            continue  # not embedded yet: the next review has it
        for close in shared.similar_to(vector, CONTRADICTION_NEIGHBOURS):
            other = shared.index.memory(close.id)
            if (close.similarity < floor or other is None or other.type != memory.type or other.status != "active"
                    or other.privacy == "private" or other.id in gone):
                continue
            why = reversal.reverses(other.body, memory.body)
            if not why:
                continue
            older, newer, told = in_order(memory, other)
            when = (f"the {'private' if newer is memory else 'shared'} one is newer" if told
                    else "written in the same second")
            items.append(Item("contradiction", tuple(sorted((memory.id, other.id))),
                              f"your private «{memory.title}» and the shared «{other.title}» disagree ({why}; {when})",
                              f"memdir delete {memory.id} if the shared one holds; if yours does, correct {other.id} "
                              "in your own words (private text is never copied into a shared memory)",
                              _key("contradiction", sorted((memory.id, other.id)), memory.content_hash,
                                   other.content_hash)))
    return items


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while the inbox is built: it allocates ~1M short-lived objects
    (none in cycles), and at 10k memories every full collection walks the whole index's objects
    (the first call at 10k: 2.4 -> 1.3 s). It is switched back on as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _age(memory: Memory) -> tuple[str, str]:
    return (memory.created_at.isoformat() if memory.created_at else "", memory.id)


def in_order(a: Memory, b: Memory) -> tuple[Memory, Memory, bool]:
    """(older, newer, whether that order is known). `created_at` has one-second resolution: for two memories of the
    same second the order is read from their own words ("no longer", "now", "instead": reversal.reads_later), which
    travel with the files and read the same on every clone (a file's mtime does not survive a checkout, and the ids
    are random). When the words do not tell either, the id decides, stably, and the order is said to be unknown."""
    older, newer = sorted((a, b), key=_age)
    if older.created_at is None or older.created_at != newer.created_at:
        return older, newer, True  # (an undated memory sorts first, as before)
    later = reversal.reads_later(older.body, newer.body)
    if later is None:
        return older, newer, False
    return (older, newer, True) if later else (newer, older, True)


def dismissed(vault_root: Path) -> dict[str, str]:
    data = atomic.read_bytes(vault_root / DISMISSED_FILE)
    try:
        loaded = json.loads(data) if data else {}
    except ValueError:
        return {}  # a torn or hand-mangled state file only un-dismisses items
    return loaded if isinstance(loaded, dict) else {}


def dismiss(vault_root: Path, keys: Iterable[str], now: datetime | None = None) -> dict[str, str]:
    state = dismissed(vault_root)
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    state.update({key: stamp for key in keys})
    (vault_root / DISMISSED_FILE).parent.mkdir(parents=True, exist_ok=True)
    atomic.write_state(vault_root / DISMISSED_FILE, json.dumps(state, indent=1, sort_keys=True).encode())
    return state
