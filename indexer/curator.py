"""Adding, scoring, editing, merging and tending memories: the operations that need files and index.

Every change is written through the vault's one writer (atomic, conflict-checked) and then
synced into the index at once, so a caller reads its own writes without waiting for the
watcher. The CLI and the MCP tools are thin layers over these methods.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from vault import Change, Memory, ValidationError
from vault import lifecycle as lifecycle_rules
from vault import fields as type_fields
from vault import trash
from vault.errors import ConflictError, DiskFullError, NotFoundError
from vault.frontmatter import MAX_DEPTH
from vault.model import COLLECTIONS, PRIVACY, STATUSES, TYPES
from vault.scoring import COUNTER_KEYS, check_outcome, initial_counters, outcome_updates
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings
from vault.store import new_memory_fields
from vault.write import after_saves

from . import reversal
from .group_sync import GroupSync
from .index import Index
from .neighbourhood import STATE_DIR, Neighbourhood
from .review_memo import ReviewMemo

CONFLICT_TYPES = frozenset({"preference", "decision", "fact", "constraint"})
EDITABLE_FIELDS = {
    "title": str, "type": str, "collection": str, "tags": list, "aliases": list, "status": str,
    "supersedes": list, "privacy": str, "importance": float, "confidence": float, "always_inject": bool,
}
PROTECTED_FIELDS = frozenset({"id", "created_at", *COUNTER_KEYS})
# How long a lifecycle run waits for its owner's reconcile at start (a 100k vault's takes tens of seconds) before it
# leaves the decisions to the next run.
RECONCILE_WAIT_SECONDS = 120.0

log = logging.getLogger("memdir.curator")


@dataclass(frozen=True)
class Similar:
    id: str
    title: str
    similarity: float


@dataclass(frozen=True)
class Added:
    memory: Memory
    status: str  # "created", or "restated" when the same text and type already existed
    near_duplicates: tuple[Similar, ...] = ()
    possible_conflicts: tuple[Similar, ...] = ()


@dataclass(frozen=True)
class Scored:
    id: str
    outcome: str
    changes: Mapping[str, Any] = field(default_factory=dict)  # the keys written ({} when nothing changed)
    note: str = ""


@dataclass(frozen=True)
class Cluster:
    ids: tuple[str, ...]
    titles: tuple[str, ...]
    similarity: float  # the lowest similarity that joined the cluster


class Curator:
    def __init__(self, index: Index, scoring: ScoringSettings, lifecycle: LifecycleSettings,
                 dedup: DedupSettings, *, outcome_history: int = 20, max_content_chars: int = 20_000) -> None:
        self.index = index
        self.vault = index.vault
        self.scoring = scoring
        self.lifecycle = lifecycle
        self.dedup = dedup
        self.outcome_history = outcome_history
        self.max_content_chars = max_content_chars
        self._owners_memo: tuple[int, Any] = (-1, None)
        self._neighbourhoods: dict[int, Neighbourhood] = {}
        self.review_memo = ReviewMemo(self.vault.root / STATE_DIR / "memo.json")
        # New memories whose vectors come later (captured exchanges): those arriving together share one sync.
        self._later = GroupSync(index)

    # -- storing ---------------------------------------------------------------------

    def add(self, content: str, *, title: str | None = None, type: str | None = None,
            collection: str = "memory_bank", tags: Iterable[str] = (), extra: Mapping[str, Any] | None = None,
            now: datetime | None = None, allow_secrets: bool = False, compare: bool = True) -> Added:
        """Store a memory, unless the same text and type is already stored (then it is marked re-stated).

        Content that looks like a credential raises SecretError unless `allow_secrets` (the vault's writer checks).
        Without `compare` no near-duplicates or conflicts are looked for (nothing is embedded now: the index
        embeds it in its background backfill), for a caller that reports neither, such as a captured exchange.
        """
        now = now or _now()
        fields = new_memory_fields(content, title=title, type=type, collection=collection, tags=tags, extra=extra,
                                   now=now, max_chars=self.max_content_chars)
        twin = self.index.find_duplicate(content, fields["type"])
        if twin is not None:
            restated = self._write(twin, Change(derive=lambda m: {"restated": _restated(m) + 1, "restated_at": now}))
            return Added(restated, "restated")
        if not compare:
            return Added(self._create(fields, content, allow_secrets, later=True), "created")
        # Embedded as a document (float32), not as a query: it is compared with document vectors,
        # and it is the memory about to be written, whose text the index will want anyway.
        vector = self.index.embedder.embed([_embedding_text(fields["title"], content)])[0]
        similar = self._similar(vector, exclude=())
        # A statement that reverses a similar one (order flipped, negated, a value changed) is a
        # conflict however close the vectors are: merging the two would destroy the newer decision.
        reversed_ids = {s.id for s in similar if s.similarity >= self.dedup.possible_conflict
                        and reversal.reverses(self.index.memory(s.id).body, content)}
        near = tuple(s for s in similar if s.similarity >= self.dedup.near_duplicate and s.id not in reversed_ids)
        # Unreversed, a close pair of one decision-like type is still a possible conflict below the
        # near-duplicate line: the reversal rules miss some ("tabs" / "four spaces"), and a warning
        # costs a look where a silent merge would cost a decision.
        conflicts = tuple(
            s for s in similar
            if s.id in reversed_ids
            or (fields["type"] in CONFLICT_TYPES and self.index.memory(s.id).type == fields["type"]
                and self.dedup.possible_conflict <= s.similarity < self.dedup.near_duplicate)
        )
        memory = self._create(fields, content, allow_secrets)
        return Added(memory, "created", near, conflicts)

    def record_response(self, key_takeaway: str, initial: str | None = None, *, now: datetime | None = None,
                        title: str | None = None, extra: Mapping[str, Any] | None = None,
                        allow_secrets: bool = False) -> Memory:
        """A working memory holding a takeaway, starting at the score its outcome earns."""
        now = now or _now()
        if initial is not None:
            check_outcome(initial)
        fields = new_memory_fields(key_takeaway, title=title, type="learning", collection="working", now=now,
                                   extra=extra, max_chars=self.max_content_chars)
        fields.update(initial_counters(initial, self.scoring))
        return self._create(fields, key_takeaway, allow_secrets)

    def _create(self, fields: dict[str, Any], content: str, allow_secrets: bool = False, later: bool = False) -> Memory:
        memory = self.vault.create_new(fields["collection"], fields, content.strip() + "\n", allow_secrets=allow_secrets)
        try:
            return self._indexed(memory, [memory.path], later)
        except (DiskFullError, OSError) as exc:
            if later:
                # A capture's file is the memory: an index write that failed after it (a full disk, out of
                # descriptors, an I/O error) is taken in by the next sync, and a replay that saw it fail wrote a
                # second exchange (review of session 11).
                log.warning("%s was saved to %s; indexing it failed (%s), and the next sync takes it in",
                            memory.id, memory.path, exc)
                return memory
            if isinstance(exc, DiskFullError):  # the file is the memory: it is kept, and the index takes it in later
                raise DiskFullError(f"{exc} ({memory.id} was saved to {memory.path}; the index takes it in once "
                                    "there is room)") from None
            raise

    def _indexed(self, memory: Memory, paths: Iterable[str], later: bool = False) -> Memory:
        """The written memory as the index holds it. When another process owns the index (a second server
        sharing the user vault), only the file is written: the owner's watcher indexes it."""
        if not self.index.writable:
            return memory
        paths = list(paths)

        def synced() -> Memory | None:
            # later: its vectors come with the backfill (Index.sync), and its sync is shared with the captures
            # written meanwhile (group_sync.py).
            report = self._later.sync(paths) if later else self.index.sync(paths)
            if report.held:  # an editor caught in the middle of its save: look again
                return None
            try:
                return self.index.get(memory.id)
            except NotFoundError:  # an editor's save caught with its frontmatter half written, or another id
                return None

        return after_saves(synced) or memory  # a file gone for good: what was written is still the answer

    # -- scoring ---------------------------------------------------------------------

    def score(self, outcomes: Mapping[str, str], *, now: datetime | None = None) -> list[Scored]:
        """Apply one outcome per memory id, all or none: a retried call must never count an id twice because
        another id of the same call failed (Writer.update_all re-applies the counters to the files as they are)."""
        now = now or _now()
        for memory_id, outcome in outcomes.items():
            check_outcome(outcome)
            self.index.get(memory_id)  # every id must exist before anything is written
        results: list[Scored] = []
        edits: list[tuple[Memory, Change]] = []
        for memory_id, outcome in outcomes.items():
            memory = self.index.get(memory_id)
            derive = lambda m, o=outcome: outcome_updates(m, o, now, self.scoring, self.outcome_history)  # noqa: E731
            changes = derive(memory)
            if not changes:
                note = "books are reference documents and are not scored" if memory.collection == "books" else (
                    "not used, nothing changes")
                results.append(Scored(memory.id, outcome, {}, note))
                continue
            edits.append((memory, Change(derive=derive)))
            results.append(Scored(memory.id, outcome, dict(changes)))
        written = {m.id: m for m in self.vault.edit_all(edits)} if edits else {}
        for memory, _ in edits:
            self._indexed(written[memory.id], [memory.path])
        return [replace(r, changes={k: getattr(written[r.id], k) for k in r.changes}) if r.id in written else r
                for r in results]

    # -- editing -----------------------------------------------------------------------

    def update(self, memory_id: str, *, content: str | None = None, fields: Mapping[str, Any] | None = None,
               now: datetime | None = None, allow_secrets: bool = False) -> Memory:
        """Replace the body and/or set frontmatter keys; counters and ids are not editable here."""
        memory = self.index.get(memory_id)
        checked = _checked_fields(fields or {})
        _check_type_fields(checked.get("type", memory.type), checked)
        if content is not None:
            _check_content(content, self.max_content_chars)
        if content is None and not checked:
            raise ValidationError("nothing to update: give content or fields")
        checked["updated_at"] = now or _now()
        return self._write(memory, Change(fields=checked, body=content), allow_secrets)

    def append(self, memory_id: str, content: str, *, now: datetime | None = None,
               allow_secrets: bool = False) -> Memory:
        _check_content(content, self.max_content_chars)
        memory = self.index.get(memory_id)
        return self._write(memory, Change(fields={"updated_at": now or _now()}, append=content), allow_secrets)

    def receive(self, memory: Memory, fields: Mapping[str, Any] | None = None, content: str | None = None, *,
                allow_secrets: bool = False) -> Memory:
        """Write a memory that comes from another vault into this one, keeping its id, counters and dates
        (the first half of a move; the caller deletes the original once this succeeded)."""
        changes = _checked_fields(fields or {})
        _check_type_fields(changes.get("type", memory.type), changes)
        values: dict[str, Any] = {"id": memory.id, "collection": memory.collection, "type": memory.type,
                                  "title": memory.title, **dict(memory.frontmatter), **changes}
        values["id"] = memory.id  # a path-derived id becomes explicit: the id must survive the move
        if content is not None:
            _check_content(content, self.max_content_chars)
        body = memory.body if content is None else content
        if not allow_secrets:  # only what the caller brings is checked; the moved text was already in a vault
            self.vault.writer.check_secrets(fields or {}, content)
        created = self.vault.create_new(values["collection"], values, body, allow_secrets=True, named=memory.title)
        return self._indexed(created, [created.path])

    def delete(self, memory_id: str) -> str:
        """Move the memory's file to .trash/ and return where it went."""
        memory = self.index.get(memory_id)
        destination = self.vault.trash(memory)
        if self.index.writable:
            try:
                self.index.sync([memory.path])
            except DiskFullError as exc:  # the file is in .trash/: the delete happened, whatever the index could record
                log.warning("%s moved to %s; the index records it once there is room: %s", memory_id, destination, exc)
        return destination

    def verify(self, memory_id: str) -> tuple[Memory, list[dict[str, Any]]]:
        """Re-anchor a memory to its cited files as they are now; returns it and what was stale before."""
        memory = self.index.get(memory_id)
        was_stale = self.vault.stale(memory)
        return self._indexed(self.vault.verify(memory), [memory.path]), was_stale

    def restore(self, memory_id: str) -> Memory:
        """Put the newest trashed copy of `memory_id` back where it was; refuse when the id or the
        place is taken (a restore must never shadow or overwrite a live memory)."""
        if memory_id in self.index:
            raise ConflictError(f"{memory_id} is not deleted: it lives at {self.index.memory(memory_id).path}")
        copies = trash.trashed_copies(self.vault.root, memory_id)
        if not copies:
            raise NotFoundError(f"no trashed copy of {memory_id} in {trash.TRASH}/")
        newest = copies[0]
        if (self.vault.root / newest.original_path).exists():
            raise ConflictError(f"cannot restore {memory_id} to {newest.original_path}: another file is there now; "
                                f"move it aside or copy {newest.trash_path} by hand")
        restored = self.vault.restore(newest.trash_path, newest.original_path)
        if self.index.writable:
            self.index.sync([restored.path])
        return restored

    def _write(self, memory: Memory, change: Change, allow_secrets: bool = False) -> Memory:
        written = self.vault.edit(memory, change, allow_secrets=allow_secrets)
        return self._indexed(written, {memory.path, written.path})

    # -- lifecycle -------------------------------------------------------------------

    def gc(self, *, now: datetime | None = None, dry_run: bool = False) -> list[lifecycle_rules.Applied]:
        """Run the lifecycle rules; with dry_run, report what would happen and change nothing."""
        now = now or _now()
        if not self.index.writable and not dry_run:
            raise ValidationError(f"the lifecycle of {self.vault.root} runs in the process that owns its index")
        if not dry_run and self.index.reconcile_pending and not self.index.reconciled.wait(RECONCILE_WAIT_SECONDS):
            # Until the owner's reconcile has read the files, the index knows nothing of what was edited, rescued or
            # deleted while no server ran: a decision from it could trash what a human kept. The next run decides.
            log.info("%s: lifecycle run skipped, the index has not reconciled with the files yet", self.vault.root)
            return []
        # Decided from each row's lifecycle facts: only the memories a decision touches are decoded (lifecycle_facts.py).
        decisions = [d for d in lifecycle_rules.plan(self.index.lifecycle_records(), now, self.lifecycle)  # type: ignore[arg-type]
                     if not self._would_publish(d)]
        if dry_run:
            return [lifecycle_rules.Applied(d, "would " + d.action) for d in decisions]
        # Each decision is taken again from the memory itself: one deleted or edited since the plan read its facts
        # (or facts an older memdir left behind) is not carried out on what it no longer is (review of session 8).
        current = {d.id: self.index.memory(d.id) for d in decisions}
        decisions = [d for d in decisions if current[d.id] is not None
                     and lifecycle_rules.plan([current[d.id]], now, self.lifecycle) == [d]]  # type: ignore[list-item]
        if not decisions:  # a sync of no path built the link graph under the index lock: every row decoded, at start
            return []
        applied = lifecycle_rules.apply(self.vault, decisions, current, now)  # type: ignore[arg-type]
        moved = {a.result for a in applied if a.result.endswith(".md") and not a.result.startswith(".trash/")}
        self.index.sync({d.path for d in decisions} | moved)
        return applied

    def _would_publish(self, decision: lifecycle_rules.Decision) -> bool:
        """A promotion out of the project vault's working/ (git-ignored) of a private memory: history/ is committed,
        so the private exchange would be shared. It stays in working/ instead (kept, never committed); in the user
        vault the lifecycle runs as for any memory."""
        if decision.action != "promote" or decision.from_collection != "working" or self.vault.source == "user":
            return False
        memory = self.index.memory(decision.id)
        return memory is not None and memory.privacy == "private"

    # -- near duplicates and merging -------------------------------------------------

    def similar_to(self, vector: np.ndarray, k: int = 8) -> list[Similar]:
        """This vault's memories most similar to a vector made elsewhere (another vault's memory, same model)."""
        return self._similar(vector, exclude=(), k=k)

    def _similar(self, vector: np.ndarray, exclude: Iterable[str], k: int = 8) -> list[Similar]:
        """The memories most similar to `vector`, comparing whole chunks: the vector search scans only those
        (sentence and neighbour units would call a memory a duplicate of one of its sentences or neighbours)."""
        return self._owners(self.index.search_units(vector, k * 3), set(exclude), k)

    def neighbours(self, memory_ids: Iterable[str], k: int = 5, at_least: float = -1.0) -> dict[str, list[Similar]]:
        """Each memory's `k` most similar others (by its first chunk), those below `at_least` left out.
        Equal to `_owners` of each memory's hits."""
        title = self.index.memory
        return {memory_id: [Similar(other, title(other).title, similarity) for other, similarity in close]
                for memory_id, close in self.close_pairs(memory_ids, k, at_least).items()}

    def close_pairs(self, memory_ids: Iterable[str], k: int = 5, at_least: float = -1.0) -> dict[str, list[tuple[str, float]]]:
        """`neighbours` as (id, similarity) pairs, for the vault-wide passes (10k memories, 67k close pairs
        at 10k LoCoMo turns: their Similar objects cost more than finding them), and `at_least` roughly
        (the exact test is the caller's, on the rounded similarity). The hits are kept in `.memdir/`
        and brought up to date with the index (see neighbourhood); their owners are found for all
        memories at once."""
        hood = self._neighbourhoods.setdefault(k, Neighbourhood(self.index, k * 3))
        ids, units, scores = hood.table(memory_ids)
        if not ids:
            return {}
        owners, names = self._owner_table()
        slot = np.searchsorted(owners[0], units)
        found = owners[0][np.clip(slot, 0, len(owners[0]) - 1)] == units
        owner = np.where(found, owners[1][np.clip(slot, 0, len(owners[0]) - 1)], -1)
        index_of = {name: i for i, name in enumerate(names)}
        own = np.array([index_of.get(memory_id, -2) for memory_id in ids])
        owner[owner == own[:, None]] = -1  # a memory is not its own neighbour
        # Hits are best first: an owner's first hit is its best; later hits of the same owner drop out.
        width = owner.shape[1]
        earlier = np.tril(np.ones((width, width), dtype=bool), -1)
        repeated = ((owner[:, :, None] == owner[:, None, :]) & earlier).any(axis=2)
        counted = (owner >= 0) & ~repeated
        ranked = counted & (np.cumsum(counted, axis=1) <= k)
        close = ranked & (scores >= at_least - 1e-4)  # the exact test is the caller's, on the rounded similarity
        result: dict[str, list[tuple[str, float]]] = {memory_id: [] for memory_id in ids}
        memories = self.index
        rows, cols = np.nonzero(close)  # row by row, best first within a row
        for row, other, score in zip(rows.tolist(), owner[rows, cols].tolist(), scores[rows, cols].astype(float).tolist()):
            if (name := names[other]) in memories:
                result[ids[row]].append((name, round(score, 4)))
        return result

    def _owner_table(self) -> tuple[tuple[np.ndarray, np.ndarray], list[str]]:
        """Units sorted, the index (into the names) of each unit's owning memory, and the names; per index version."""
        if self._owners_memo[0] != self.index.version:
            owners = self.index.unit_owners()
            names = sorted({owner for _, (owner, _) in owners})
            index_of = {name: i for i, name in enumerate(names)}
            units = np.fromiter((unit for unit, _ in owners), dtype=np.int64, count=len(owners))
            owner = np.fromiter((index_of[o] for _, (o, _) in owners), dtype=np.int64, count=len(owners))
            order = np.argsort(units)
            self._owners_memo = (self.index.version, ((units[order], owner[order]), names))
        return self._owners_memo[1]

    def _owners(self, hits: list[tuple[int, float]], excluded: set[str], k: int) -> list[Similar]:
        best: dict[str, float] = {}
        for unit, score in hits:
            owner = self.index.unit_owner(unit)
            if owner is None or owner[0] in excluded:
                continue
            best[owner[0]] = max(best.get(owner[0], -1.0), score)
        ranked = sorted(best.items(), key=lambda item: -item[1])[:k]
        return [Similar(i, self.index.memory(i).title, round(s, 4)) for i, s in ranked if i in self.index]

    def reverses(self, a: Memory, b: Memory) -> str:
        """Why `b` reverses `a` ("" when it does not; see reversal), the verdict kept by their bodies' hashes."""
        return self.review_memo.reversal(a, b, lambda: reversal.reverses(a.body, b.body))

    def suggest_merges(self, threshold: float | None = None, type: str | None = None, limit: int = 10) -> list[Cluster]:
        """Groups of memories similar enough to be one; similarity alone never merges anything."""
        threshold = self.dedup.merge_suggestion if threshold is None else threshold
        if not 0.0 < threshold <= 1.0:
            raise ValidationError("threshold must be between 0 and 1")
        candidates = sorted(m.id for m in self.index.all_memories()
                            if (type is None or m.type == type) and m.collection != "books" and m.status == "active")
        group = {i: [i] for i in candidates}  # each memory's group (one list object per group)
        joined: dict[int, float] = {}
        edges = sorted(((similarity, memory_id, other)
                        for memory_id, close in self.close_pairs(candidates, at_least=threshold).items()
                        for other, similarity in close if other in group and similarity >= threshold),
                       key=lambda e: (-e[0], e[1], e[2]))
        for similarity, memory_id, other in edges:  # closest pairs first, so a bridge joins last
            a, b = group[memory_id], group[other]
            # Two groups join only if no member of one reverses a member of the other: a chain
            # "uv over pip" ~ "always uv rather than pip" ~ "pip over uv" splits at the reversal.
            if a is b or any(self.reverses(self.index.memory(x), self.index.memory(y)) for x in a for y in b):
                continue
            a.extend(b)
            for member in b:
                group[member] = a
            joined[id(a)] = min(joined.get(id(a), 1.0), joined.pop(id(b), 1.0), similarity)
        groups = {id(g): g for g in group.values() if len(g) > 1}
        clusters = [Cluster(tuple(sorted(ids)), tuple(self.index.memory(i).title for i in sorted(ids)),
                            round(joined.get(key, 1.0), 4)) for key, ids in groups.items()]
        return sorted(clusters, key=lambda c: (-c.similarity, c.ids))[:limit]

    def merge(self, ids: Sequence[str], title: str, content: str | None = None, *,
              now: datetime | None = None, extra: Mapping[str, Any] | None = None,
              allow_secrets: bool = False) -> Memory:
        """Write one memory that supersedes the given ones and move them to .trash/ (their evidence is summed)."""
        unique = list(dict.fromkeys(ids))
        if len(unique) < 2:
            raise ValidationError("give at least two different memory ids to merge")
        sources = [self.index.get(i) for i in unique]
        now = now or _now()
        body = content if content is not None else "\n\n".join(m.body.strip() for m in sources)
        collection = max((m.collection for m in sources), key=_collection_rank)
        fields = new_memory_fields(body, title=title, type=sources[0].type, collection=collection,
                                   tags=sorted({t for m in sources for t in m.tags}), now=now,
                                   max_chars=self.max_content_chars)
        fields["supersedes"] = [m.id for m in sources]
        fields.update(extra or {})
        if collection in ("working", "history", "patterns"):
            uses = sum(m.uses for m in sources)
            fields.update(uses=uses, success_count=round(sum(m.success_count for m in sources), 4),
                          score=round(max(m.score for m in sources), 4))
        # A source saved since the index read it would go to .trash/ without its save in the merged text: refused.
        # The files are written first and indexed together after, so the window for such a save stays short; under
        # the write lock, so that a second merge of the same sources (another session) finds them gone and writes
        # nothing, where both passed the check and wrote a merged memory (review of session 16).
        with self.vault.writer.lock.held():
            for source in sources:
                self.vault.writer.check_unchanged(source)
            merged = self.vault.create_new(collection, fields, body.strip() + "\n", allow_secrets=allow_secrets)
            for source in sources:
                self.vault.trash(source)
        try:
            return self._indexed(merged, [merged.path, *(m.path for m in sources)])
        except DiskFullError as exc:  # the files are the merge: a retry would find its sources gone
            raise DiskFullError(f"{exc} ({merged.id} was saved to {merged.path} and its sources moved to .trash/; "
                                "the index takes them in once there is room)") from None


def _collection_rank(collection: str) -> int:
    return {"working": 0, "history": 1, "patterns": 2, "memory_bank": 3, "books": -1}[collection]


def _restated(memory: Memory) -> int:
    value = memory.frontmatter.get("restated", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _embedding_text(title: str, content: str) -> str:
    return f"{title}\n{content.strip()}"


def _check_content(content: str, limit: int) -> None:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("content is empty")
    if len(content) > limit:
        raise ValidationError(f"content is {len(content):,} characters; the limit is {limit:,}")


def _check_type_fields(memory_type: str, values: Mapping[str, Any]) -> None:
    """A per-type field set by a write must fit its type (vault/fields.py): refused before anything is written."""
    misfits = type_fields.misfits(memory_type, values)
    if misfits:
        raise ValidationError("; ".join(reason for _, reason in misfits))


def _depth(value: Any) -> int:
    """How many lists and mappings deep a value is (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            stack += [(inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item)]
            depth += 1
        deepest = max(deepest, depth)
    return deepest


def _checked_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    checked: dict[str, Any] = {}
    choices = {"type": TYPES, "collection": COLLECTIONS, "status": STATUSES, "privacy": PRIVACY}
    for key, value in fields.items():
        if key in PROTECTED_FIELDS:
            raise ValidationError(f"'{key}' cannot be set here (ids and timestamps are fixed; counters change by scoring)")
        expected = EDITABLE_FIELDS.get(key)
        if expected is None:
            if not isinstance(key, str) or not key.replace("_", "").isalnum():
                raise ValidationError(f"{key!r} is not a valid frontmatter key")
            if _depth(value) >= MAX_DEPTH:  # its file would not read back; rendering 500 levels was a RecursionError
                raise ValidationError(f"{key!r} is nested deeper than frontmatter may be ({MAX_DEPTH} levels)")
            checked[key] = value
            continue
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
            raise ValidationError(f"'{key}' must be {expected.__name__}, got {value!r}")
        if key in choices and value not in choices[key]:
            raise ValidationError(f"unknown {key} {value!r}; expected one of: {', '.join(choices[key])}")
        if expected is float and not 0.0 <= value <= 1.0:
            raise ValidationError(f"'{key}' must be between 0 and 1")
        checked[key] = value
    return checked


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)
