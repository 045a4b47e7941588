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
of that text: `Memories.mentioning` decodes only the rows that pass it, which is how a first search finds the hidden
memories and the named speakers without decoding the others.

Changes made after the open (a sync's entries, a remembered memory) are stored decoded, as before. A write-back of a
decoded row is made only if the slot still holds the row it decoded: a search walking the memories outside the index
lock (people.py) must not put back a memory a sync replaced meanwhile. A loaded memory is held as its row, not its
path: a sync stores a file's new entry before it forgets the old memory, which must still be the old one.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Iterable, Iterator, Mapping, MutableMapping

from vault.model import Memory

from .heap import release_free_memory
from .lifecycle_facts import Facts
from .manifest import ROW_CHUNK_IDS, ROW_FACTS, ROW_MEMORY_ID, ROW_PATH, ROW_REASON, ROW_UNITS, Entry

RELEASE_AFTER = 2048  # rows past which the last one decoded gives the freed heap back (as a sync that big does, index.py)

Row = tuple[Any, ...]  # a files-table row, as Manifest.rows() returns it
MEMORY_COLUMN = 9  # the row's memory JSON (see manifest._row)


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
        self.settled: Callable[[Row, Entry], None] = lambda row, entry: None  # told of each row decoded (Memories)

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

    def indexed_ids(self) -> Iterator[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """(path, chunk ids, unit ids) of every entry without a reason (indexed), a row not decoded yet read from its
        columns: what a heal compares FAISS and Whoosh with, without decoding 100k rows under the index lock."""
        for path, held in list(self._slots.items()):
            if type(held) is Entry:
                if held.reason is None:  # type: ignore[union-attr]
                    yield path, held.chunk_ids, held.unit_ids  # type: ignore[union-attr]
            elif held[ROW_REASON] is None:  # type: ignore[index]
                yield (path, tuple(json.loads(held[ROW_CHUNK_IDS] or "[]")),  # type: ignore[index]
                       tuple(unit for unit, _, _ in json.loads(held[ROW_UNITS] or "[]")))  # type: ignore[index]

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
        self._lock = threading.Lock()
        entries.settled = self._settle

    def _settle(self, row: Row, entry: Entry) -> None:
        with self._lock:
            if entry.memory is not None and self._slots.get(row[ROW_MEMORY_ID]) is row:
                self._slots[row[ROW_MEMORY_ID]] = entry.memory

    def load_all(self, rows: list[Row]) -> bool:
        """Hold each row of an open as its memory, into an empty table, in one pass; False (nothing held) if an id
        repeats (the caller remembers them one by one, the later one winning)."""
        assert not self._slots
        slots = {row[ROW_MEMORY_ID]: row for row in rows}
        if len(slots) != len(rows):
            return False
        self._slots = slots  # type: ignore[assignment]
        return True

    def __getitem__(self, memory_id: str) -> Memory:
        held = self._slots[memory_id]
        return held if type(held) is not tuple else self._decoded(memory_id, held)  # type: ignore[return-value]

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

    def mentioning(self, words: tuple[str, ...]) -> Iterator[Memory]:
        """The memories whose text may hold one of `words` (anywhere: a key, a value, the body): every decoded
        one, and of those not decoded yet only the ones whose stored row holds a word. The caller tests the field
        it wants; what is left out cannot have it."""
        for memory_id, held in list(self._slots.items()):
            if type(held) is not tuple:
                yield held  # type: ignore[misc]
                continue
            text = held[MEMORY_COLUMN] or ""
            for word in words:  # a loop, not any() over a generator: this runs for every row of a cold open
                if word in text:
                    memory = self.get(memory_id)
                    if memory is not None:
                        yield memory
                    break


    def lifecycle_records(self) -> Iterator[Memory | Facts]:
        """Every memory as the lifecycle rules read it: a decoded one as itself, one not decoded yet as the `Facts` its
        row was read with (lifecycle_facts.py), decoded only when its row has none (a manifest not migrated yet)."""
        for memory_id, held in list(self._slots.items()):
            if type(held) is not tuple:
                yield held  # type: ignore[misc]
            elif len(held) > ROW_FACTS and held[ROW_FACTS] is not None:
                yield Facts(memory_id, held[ROW_PATH], held[ROW_FACTS:])  # type: ignore[arg-type]
            else:
                memory = self.get(memory_id)
                if memory is not None:
                    yield memory


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
