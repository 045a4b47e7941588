"""The manifest's rows as the index holds them after an open: each row decoded the first time it is read.

Decoding every row into an `Entry` and its `Memory` was most of a cold open at 100k memories (~5-7 CPU s of ~10,
bench/results/first-answer.md, issue 32 item 5), before a search that reads a few dozen of them. `Entries` (path ->
Entry) keeps a row as sqlite returned it until it is asked for; `Memories` (memory id -> Memory) holds the same row
until it or its entry is read (one decoding serves both, and lets the row go from both). Both are the index's own dicts
behind its read API, with the same order, so a walk over every value (`Index.all_memories()`) still gives what the eager
load gave, decoding what is left on the way.

What the lifecycle rules read of a memory (collection, type, counters, times) comes with its row from the manifest's
facts table, so deciding which memories leave (`Memories.lifecycle_records`) decodes none (lifecycle_facts.py).

A row's memory is stored as JSON text, so whether it can say a word (a status, a frontmatter key) is a substring test
of that text: `Memories.facet_rows` decodes only the rows that pass it, which is how a first search finds the hidden
memories and the named speakers without decoding the others.

Changes made after the open (a sync's entries, a remembered memory) are stored decoded, as before, but for a new
size and mtime of a file whose content is as recorded: its row is patched where it lies (`Entries.restat`), in both
tables, and stays undecoded. A write-back of a
decoded row is made only if the slot still holds the row it decoded: a search walking the memories outside the index
lock (people.py) must not put back a memory a sync replaced meanwhile. A loaded memory is held as its row, not its
path: a sync stores a file's new entry before it forgets the old memory, which must still be the old one.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence

import numpy as np

from vault.dedup import dedup_digest
from vault.model import Memory

from .collector import Lasting
from .graph import Unlinked, may_link
from .heap import release_free_memory
from .id_columns import IdColumns
from .lifecycle_facts import FACT_COLUMNS, Facts
from .manifest import (ROW_CHUNK_IDS, ROW_CONTENT_HASH, ROW_FACTS, ROW_MEMORY, ROW_MEMORY_ID, ROW_MTIME, ROW_PATH,
                       ROW_REASON, ROW_SIZE, ROW_UNITS, Entry)
from .open_columns import bits

RELEASE_AFTER = 2048  # rows past which the last one decoded gives the freed heap back (as a sync that big does, index.py)

Row = tuple[Any, ...]  # a files-table row, as Manifest.rows() returns it
FACT_STATUS = ROW_FACTS + FACT_COLUMNS.index("status")  # a row's status among the lifecycle facts read with it
FACT_CREATED = ROW_FACTS + FACT_COLUMNS.index("created_at")
# A test of a row's facts (Memories.lifecycle_records), given these of them.
_worth_facts = itemgetter(*(ROW_FACTS + FACT_COLUMNS.index(name) for name in (
    "collection", "type", "status", "uses", "score", "created_at", "last_used_at", "deadline")))
Worth = Callable[[str, str, str, int, float, str | None, str | None, str | None], bool]
ROW_SLICE = 4096  # rows parsed as one JSON text by `Entries.row_ids`
FREEZE_EVERY = 2048  # rows decoded after an open, frozen out of the collector's walks in batches of this many
BETWEEN_ROWS = 16  # rows looked at (Entries.decode_ahead) between two looks at whether to go on: at most ~0.5 ms


class _Held(MutableMapping):
    """A mapping over `_slots`, each holding a decoded value or what it is decoded from."""

    _slots: dict

    def __contains__(self, key: object) -> bool:
        return key in self._slots

    def __iter__(self) -> Iterator[str]:
        return iter(self._slots)

    def __len__(self) -> int:
        return len(self._slots)


class Entries(_Held):
    """path -> Entry over the rows read at an open; a row is decoded on first read and kept decoded."""

    def __init__(self, rows: Iterable[Row], decode: Callable[[Row], Entry]) -> None:
        self._slots: dict[str, Entry | Row] = {row[ROW_PATH]: row for row in rows}
        self._decode = decode
        self._lock = threading.Lock()
        self._undecoded = len(self._slots)
        self._lasting = Lasting(FREEZE_EVERY)
        self.settled: Callable[[Row, Entry], None] = lambda row, entry: None  # told of each row decoded (Memories)
        self.patched: Callable[[Row, Row], None] = lambda row, patched: None  # told of each row restat (Memories)

    def __getitem__(self, path: str) -> Entry:
        held = self._slots[path]
        return held if type(held) is Entry else self._decoded(path, held)  # type: ignore[arg-type]

    def get(self, path: str, default: Any = None) -> Any:  # the hot read: one dict lookup when decoded
        held = self._slots.get(path)
        if held is None:
            return default
        return held if type(held) is Entry else self._decoded(path, held)  # type: ignore[arg-type]

    def _decoded(self, path: str, row: Row) -> Entry:
        entry = self._decode(row)
        with self._lock:
            if self._slots.get(path) is not row:
                return entry  # a sync stored another entry meanwhile
            self._slots[path] = entry
            self._undecoded -= 1
            last = self._undecoded == 0
        self.settled(row, entry)  # its memory too: one object for both, and the row let go by both
        self._lasting.made()
        if last and len(self._slots) > RELEASE_AFTER:
            release_free_memory()  # the rows' text, freed one by one, back to the system (heap.py)
        return entry

    def __setitem__(self, path: str, entry: Entry) -> None:
        with self._lock:
            if type(self._slots.get(path)) is tuple:
                self._undecoded -= 1
            self._slots[path] = entry

    def __delitem__(self, path: str) -> None:
        with self._lock:
            if type(self._slots.pop(path)) is tuple:
                self._undecoded -= 1

    def decode_ahead(self, at_most: int, go_on: Callable[[], bool]) -> int:
        """Decode up to `at_most` of the rows not decoded yet, in their order, ahead of the searches that would read
        them; `go_on` every BETWEEN_ROWS rows looked at (it waits while the process is busy, False: stop). No lock is
        held: a row a sync replaced meanwhile is left as it replaced it (`_decoded`). Returns the rows decoded."""
        done = 0
        for looked, path in enumerate(list(self._slots)):  # the paths only: a copy of 100k items' pairs is ms long
            if done >= at_most or (looked % BETWEEN_ROWS == 0 and not go_on()):
                break
            held = self._slots.get(path)
            if type(held) is tuple:
                self._decoded(path, held)
                done += 1
        return done

    def restat(self, path: str, size: int, mtime_ns: int) -> Entry | None:
        """Record a new size and mtime for a file whose content is as recorded. A row not decoded yet is patched where
        it lies and stays undecoded (None: the caller writes the two columns alone); a decoded entry is replaced, and
        returned to be written whole. Decoding 100k rows for this, and keeping them, was most of what a reconcile
        of a vault whose mtimes had all changed cost (bench/results/s17-lead.md)."""
        with self._lock:
            held = self._slots[path]
            if type(held) is Entry:
                entry = replace(held, size=size, mtime_ns=mtime_ns)  # type: ignore[type-var]
                self._slots[path] = entry
                return entry
            row: Row = held  # type: ignore[assignment]
            patched = list(row)
            patched[ROW_SIZE], patched[ROW_MTIME] = size, mtime_ns
            self._slots[path] = tuple(patched)
        self.patched(row, self._slots[path])  # type: ignore[arg-type]
        return None

    def recorded(self, path: str) -> tuple[int, int, str] | None:
        """(size, mtime_ns, content hash) the manifest records for a file, a row not decoded yet read from its
        columns: a reconcile compares every file with them, and decoding 100k rows for it was most of its CPU."""
        held = self._slots.get(path)
        if held is None:
            return None
        if type(held) is Entry:
            return held.size, held.mtime_ns, held.content_hash  # type: ignore[union-attr]
        return held[ROW_SIZE], held[ROW_MTIME], held[ROW_CONTENT_HASH]  # type: ignore[index]

    def reasons(self) -> Iterator[tuple[str, str | None, bool]]:
        """(path, reason, whether it holds a memory) of every entry, a row not decoded yet read from its columns."""
        for path, held in list(self._slots.items()):
            if type(held) is Entry:
                yield path, held.reason, held.memory is not None  # type: ignore[union-attr]
            else:
                yield path, held[ROW_REASON], bool(held[ROW_MEMORY])  # type: ignore[index]

    def row_ids(self, between: Callable[[], None] = lambda: None) -> IdColumns:
        """The chunk and unit ids of the rows not decoded yet and indexed, from their columns: rows read at the open
        change no id (a restat patches its stat columns alone), so this needs no lock (a heal reads it first, then `indexed_ids` under the lock). Parsed as one
        JSON text a slice of rows (one parse a row was most of a heal at 100k memories), `between` slices."""
        rows = [held for held in list(self._slots.values()) if type(held) is tuple and held[ROW_REASON] is None]
        parts = []
        for start in range(0, len(rows), ROW_SLICE):
            between()
            part = rows[start:start + ROW_SLICE]
            chunks = json.loads("[" + ",".join(row[ROW_CHUNK_IDS] or "[]" for row in part) + "]")
            units = json.loads("[" + ",".join(row[ROW_UNITS] or "[]" for row in part) + "]")
            parts.append(IdColumns.of_lists([row[ROW_PATH] for row in part], chunks,
                                            [[unit for unit, _, _ in row_units] for row_units in units]))
        return IdColumns.joined(parts) if parts else IdColumns.of_lists([], [], [])

    def indexed_ids(self, read: IdColumns | None = None) -> IdColumns:
        """The chunk and unit ids of every entry without a reason (indexed), a row not decoded yet read from its
        columns (`read`: what `row_ids` gave for it earlier): what a heal compares FAISS and Whoosh with, without
        decoding 100k rows under the index lock."""
        place = {path: number for number, path in enumerate(read.paths)} if read is not None else {}
        kept = np.zeros(len(place), dtype=bool)
        paths: list[str] = []
        chunk_lists: list[Sequence[int]] = []
        unit_lists: list[Sequence[int]] = []
        for path, held in list(self._slots.items()):
            if type(held) is Entry:
                if held.reason is None:  # type: ignore[union-attr]
                    paths.append(path)
                    chunk_lists.append(held.chunk_ids)  # type: ignore[union-attr]
                    unit_lists.append(held.unit_ids)  # type: ignore[union-attr]
            elif held[ROW_REASON] is None:  # type: ignore[index]
                number = place.get(path)  # a row slot holds the row it held then
                if number is not None:
                    kept[number] = True
                    continue
                paths.append(path)
                chunk_lists.append(json.loads(held[ROW_CHUNK_IDS] or "[]"))  # type: ignore[index]
                unit_lists.append([unit for unit, _, _ in json.loads(held[ROW_UNITS] or "[]")])  # type: ignore[index]
        found = IdColumns.of_lists(paths, chunk_lists, unit_lists)
        return IdColumns.joined([read.rows(kept), found]) if read is not None else found

    def memory_of(self, row: Row) -> Memory | None:
        """The memory of a row read at the open: through its entry while the path holds that row, else (a sync
        stored the path's next entry and now forgets this memory) decoded from the row alone."""
        held = self._slots.get(row[ROW_PATH])
        return self._decoded(row[ROW_PATH], row).memory if held is row else self._decode(row).memory


class Memories(_Held):
    """memory id -> Memory; a memory loaded at the open is held as its manifest row until it or its entry is read."""

    def __init__(self, entries: Entries) -> None:
        self._slots: dict[str, Memory | Row] = {}
        self._entries = entries
        # memory id -> the marks of its row's text (open_columns.py), where not 0; None: not read (the text is scanned)
        self._marks: dict[str, int] | None = None
        self._lock = threading.Lock()
        entries.settled = self._settle
        entries.patched = self._patch

    def _settle(self, row: Row, entry: Entry) -> None:
        with self._lock:
            if entry.memory is not None and self._slots.get(row[ROW_MEMORY_ID]) is row:
                self._slots[row[ROW_MEMORY_ID]] = entry.memory

    def _patch(self, row: Row, patched: Row) -> None:
        """A row's stat columns were patched (Entries.restat): its memory is held as the row its entry holds, so that
        one decoding still serves both."""
        with self._lock:
            if self._slots.get(row[ROW_MEMORY_ID]) is row:
                self._slots[row[ROW_MEMORY_ID]] = patched

    def load_all(self, rows: list[Row], marks: np.ndarray | None = None) -> bool:
        """Hold each row of an open as its memory, into an empty table, in one pass; False (nothing held) if an id
        repeats (the caller remembers them one by one, the later one winning). `marks`: each row's open columns' marks,
        which `facet_rows` then reads instead of a row's text."""
        assert not self._slots
        slots = {row[ROW_MEMORY_ID]: row for row in rows}
        if len(slots) != len(rows):
            return False
        self._slots = slots  # type: ignore[assignment]
        if marks is not None:
            self._marks = {rows[place][ROW_MEMORY_ID]: int(marks[place]) for place in np.flatnonzero(marks).tolist()}
        return True

    def __getitem__(self, memory_id: str) -> Memory:
        held = self._slots[memory_id]
        return held if type(held) is not tuple else self._decoded(memory_id, held)  # type: ignore[return-value]

    def dedup_digests(self, stored: Mapping[str, tuple[str, bytes]], read_row: Callable[[Row], tuple[str, str]]
                      ) -> tuple[dict[str, bytes], list[tuple[str, str, bytes]]]:
        """Each memory's dedup digest by id, in a pass that neither decodes 100k rows nor leaves them decoded: the
        digest stored with its row (Manifest.dedup_digests) when it is for the memory's content hash, else made from
        its body, read off its row by `read_row` if it is not decoded yet. Also (path, content hash, digest) of those
        made so, for the manifest (a generation written before the table). No lock is held: a memory a sync
        changes meanwhile is read as it was or as it is (the caller catches up with the changes)."""
        digests: dict[str, bytes] = {}
        made: list[tuple[str, str, bytes]] = []
        for memory_id, held in list(self._slots.items()):
            if type(held) is tuple:
                path, content_hash = held[ROW_PATH], held[ROW_CONTENT_HASH]
            else:
                path, content_hash = held.path, held.content_hash  # type: ignore[union-attr]
            known = stored.get(path)
            if known is not None and known[0] == content_hash:
                digests[memory_id] = known[1]
                continue
            body, kind = read_row(held) if type(held) is tuple else (held.body, held.type)  # type: ignore[arg-type, union-attr]
            digests[memory_id] = digest = dedup_digest(body, kind)
            made.append((path, content_hash, digest))
        return digests, made

    def get(self, memory_id: str, default: Any = None) -> Any:
        held = self._slots.get(memory_id)
        if held is None:
            return default
        return held if type(held) is not tuple else self._decoded(memory_id, held)

    def _decoded(self, memory_id: str, row: Row) -> Memory:
        memory = self._entries.memory_of(row)  # settles this slot when the entry is the row's
        assert memory is not None and memory.id == memory_id, (row[ROW_PATH], memory_id)
        return memory

    def __setitem__(self, memory_id: str, memory: Memory) -> None:
        with self._lock:
            self._slots[memory_id] = memory

    def __delitem__(self, memory_id: str) -> None:
        with self._lock:
            del self._slots[memory_id]

    def pop(self, memory_id: str, default: Any = None) -> Any:
        with self._lock:
            held = self._slots.pop(memory_id, None)
        if held is None:
            return default
        return held if type(held) is not tuple else self._entries.memory_of(held)

    def facet_rows(self, statuses: frozenset[str], words: tuple[str, ...]) -> tuple[list[tuple[str, str]], list[Memory]]:
        """What a first search's facets read of every memory (Index._built_facets), in one pass over them (each of the
        two passes it made cost ~0.045 CPU s at 100k memories):

        - (id, status) of the memories whose status is one of `statuses`: a row read with its lifecycle facts is told
          by their status column, without decoding it or scanning its text; a row without them is decoded if its text
          holds one of the statuses;
        - the memories whose text may hold one of `words` (anywhere: a key, a value, the body): every decoded one, and
          of those not decoded yet only the ones whose stored row holds a word. The caller tests the field it wants;
          what is left out cannot have it. A row held since the open whose marks were read (`load_all`) is told by
          them, when they cover the words: at 100k memories the scan of every row's text was 0.31 of a reader's ~3.8
          CPU s to its first answer (bench/results/s20-open20.md)."""
        inactive: list[tuple[str, str]] = []
        marked: list[Memory] = []
        wanted = bits(words) if self._marks is not None else None
        for memory_id, held in list(self._slots.items()):
            if type(held) is not tuple:
                if held.status in statuses:  # type: ignore[union-attr]
                    inactive.append((memory_id, held.status))  # type: ignore[union-attr]
                marked.append(held)  # type: ignore[arg-type]
                continue
            if len(held) > ROW_FACTS and held[ROW_FACTS] is not None:
                if held[FACT_STATUS] in statuses:
                    inactive.append((memory_id, held[FACT_STATUS]))
            elif any(word in (held[ROW_MEMORY] or "") for word in statuses):
                memory = self.get(memory_id)
                if memory is not None:
                    if memory.status in statuses:
                        inactive.append((memory_id, memory.status))
                    marked.append(memory)  # decoded now: as every decoded one
                    continue
            if wanted is not None:  # a held row is the open's (or its restat: the same text)
                if self._marks.get(memory_id, 0) & wanted:  # type: ignore[union-attr]
                    memory = self.get(memory_id)
                    if memory is not None:
                        marked.append(memory)
                continue
            text = held[ROW_MEMORY] or ""
            for word in words:  # a loop, not any() over a generator: this runs for every row of a cold open
                if word in text:
                    memory = self.get(memory_id)
                    if memory is not None:
                        marked.append(memory)
                    break
        return inactive, marked

    def link_inputs(self) -> Iterator[Memory | Unlinked]:
        """Every memory as the link graph reads it: a decoded one as itself; one not decoded yet, whose stored text
        holds no link and whose row has its facts, as its names and created time from the columns (`Unlinked`); the
        others decoded. Building the graph decoded every row: at 100k memories 2.8 of its 4 CPU s and +180 MB, under
        the index lock at a served vault's first change (bench/results/s17-lead.md). Over a copy of the slots, so
        that it may run without the index lock (Index._ahead_of_a_change)."""
        for memory_id, held in list(self._slots.items()):
            if type(held) is not tuple:
                yield held  # type: ignore[misc]
            elif len(held) > ROW_FACTS and held[ROW_FACTS] is not None and not may_link(held[ROW_MEMORY] or ""):
                yield Unlinked(memory_id, held[ROW_PATH], held[FACT_CREATED] or "")  # type: ignore[index]
            else:
                memory = self.get(memory_id)
                if memory is not None:
                    yield memory

    def lifecycle_records(self, worth: Worth | None = None, skip: frozenset[str] = frozenset()) -> Iterator[Memory | Facts]:
        """Every memory as the lifecycle rules read it: a decoded one as itself, one not decoded yet as the `Facts` its
        row was read with (lifecycle_facts.py), decoded only when its row has none (a manifest not migrated yet).
        `worth` (collection, type, status, uses, score, created_at, last_used_at, deadline as stored -> bool,
        `vault.lifecycle.may_leave`): a row whose facts it refuses is left out without a record made (most of deciding
        100k rows was making their records). The `skip` ids are left out (memories whose decision is known)."""
        for memory_id, held in list(self._slots.items()):
            if memory_id in skip:
                continue
            if type(held) is not tuple:
                yield held  # type: ignore[misc]
            elif len(held) > ROW_FACTS and held[ROW_FACTS] is not None:
                if worth is None or worth(*_worth_facts(held)):
                    yield Facts(memory_id, held[ROW_PATH], held[ROW_FACTS:])  # type: ignore[arg-type]
            else:
                memory = self.get(memory_id)
                if memory is not None:
                    yield memory

    def lifecycle_record(self, memory_id: str) -> Memory | Facts | None:
        """One memory as `lifecycle_records` reads it (its row not decoded for it)."""
        held = self._slots.get(memory_id)
        if type(held) is tuple and len(held) > ROW_FACTS and held[ROW_FACTS] is not None:
            return Facts(memory_id, held[ROW_PATH], held[ROW_FACTS:])  # type: ignore[arg-type]
        return self.get(memory_id)


class AllBut(Mapping[str, Memory]):
    """The memories of `memories` but the `left_out` ids, in their order, decoded as read: what a search without
    filters allows (every memory but the hidden ones), without decoding every memory to build a dict of them."""

    def __init__(self, memories: Mapping[str, Memory], left_out: Iterable[str]) -> None:
        self._memories = memories
        self._left_out = frozenset(i for i in left_out if i in memories)

    @property
    def left_out(self) -> frozenset[str]:
        """The indexed ids this view leaves out."""
        return self._left_out

    def __getitem__(self, memory_id: str) -> Memory:
        if memory_id in self._left_out:
            raise KeyError(memory_id)
        return self._memories[memory_id]

    def get(self, memory_id: str, default: Any = None) -> Any:
        return default if memory_id in self._left_out else self._memories.get(memory_id, default)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._memories and memory_id not in self._left_out

    def __iter__(self) -> Iterator[str]:
        left_out = self._left_out
        return (i for i in self._memories if i not in left_out)

    def __len__(self) -> int:
        return len(self._memories) - len(self._left_out)
