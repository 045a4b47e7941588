"""Facts every search or prompt asks of the whole vault, kept in step with the memories instead of read off them again.

A search without filters leaves out the memories whose status hides them (superseded, archived), and reads a question
for the names of the people who wrote or said memories (`speaker:`, `author:`; indexer/people.py). Both were found by
scanning every memory once per index version: at 100k memories 170 ms and 220 ms of CPU, paid by the first search
after each change, so by every prompt of a session whose exchanges are captured (bench/results/s18-lead.md). Every
prompt also puts the standing facts (`always_inject: true`) in its context, and found them by reading every memory:
at 10k 2.4 ms of a prompt's CPU, at 100k every row decoded (bench/results/s19-lead.md); every captured exchange and
write looks for the private memories its text must not repeat, the same way. Here the first ask scans once, and from
then on the index tells each memory it remembers or forgets.

Only the few memories that hold a fact are kept: a status other than "active", authors named, always_inject set,
`privacy: private`.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from vault.model import Memory

from .people import authors

ACTIVE = "active"
PRIVATE = "private"


class Facets:
    def __init__(self) -> None:
        self.built = False
        self._status: dict[str, str] = {}  # memory id -> its status, where it is not "active"
        self._authors: dict[str, frozenset[str]] = {}  # memory id -> who wrote or said it, where anyone is named
        self._count: Counter[str] = Counter()  # author -> memories naming them
        self._names: frozenset[str] | None = frozenset()  # every author named (None: to be made again)
        self._with_status: dict[frozenset[str], frozenset[str]] = {}  # statuses -> ids, until a status changes
        self._standing: frozenset[str] = frozenset()  # the memories marked always_inject
        self._private: frozenset[str] = frozenset()  # the memories marked `privacy: private`

    def build(self, inactive: Iterable[tuple[str, str]], marked: Iterable[Memory]) -> None:
        """The first ask's scan: (id, status) of the memories whose status is not active (read off their rows' facts,
        not decoded), and the memories that may name an author or be marked always_inject or private."""
        for memory_id, status in inactive:
            if status != ACTIVE:
                self._status[memory_id] = status
        standing, private = set(), set()
        for memory in marked:
            self._note_authors(memory)
            if memory.always_inject:  # gathered, then frozen once: a frozen set made again per memory was quadratic
                standing.add(memory.id)  # (20k private memories, a user vault's, took 6.9 s under the index lock)
            if memory.privacy == PRIVATE:
                private.add(memory.id)
        self._standing, self._private = frozenset(standing), frozenset(private)
        self.built = True

    def remember(self, memory: Memory) -> None:
        if self.built:
            self.forget(memory.id, marks=False)
            self._note_status(memory)
            self._note_authors(memory)
            self._note_marks(memory)

    def forget(self, memory_id: str, marks: bool = True) -> None:
        """`marks=False`: the memory is remembered again right after (`remember`), which sets its marks in one step:
        the marks are read without the index lock (Index.standing_ids), and a memory marked before and after must
        not be missing in between."""
        if not self.built:
            return
        if self._status.pop(memory_id, None) is not None:
            self._with_status = {}
        if marks:
            self._standing = _marked(self._standing, memory_id, False)
            self._private = _marked(self._private, memory_id, False)
        for name in self._authors.pop(memory_id, ()):
            self._count[name] -= 1
            if not self._count[name]:
                del self._count[name]
                self._names = None  # a name gone (made again from the names, not the memories)

    def ids_with_status(self, statuses: frozenset[str]) -> frozenset[str]:
        """The memories whose status is one of `statuses` (never "active": every memory not listed is)."""
        found = self._with_status.get(statuses)
        if found is None:
            found = self._with_status[statuses] = frozenset(i for i, s in self._status.items() if s in statuses)
        return found

    def standing(self) -> frozenset[str]:
        """The ids of the memories marked always_inject (whatever their status: the caller reads it)."""
        return self._standing

    def private(self) -> frozenset[str]:
        """The ids of the memories marked `privacy: private`."""
        return self._private

    def known_names(self) -> frozenset[str] | None:
        """`author_names` where nothing is to be made (so no lock is needed to read it); else None."""
        return self._names if self.built else None

    def author_names(self) -> frozenset[str]:
        """Every speaker or author the memories name: the same object until one of them changes."""
        names = self._names
        if names is None:
            names = self._names = frozenset(self._count)
        return names

    def _note_status(self, memory: Memory) -> None:
        if memory.status != ACTIVE:
            self._status[memory.id] = memory.status
            self._with_status = {}

    def _note_authors(self, memory: Memory) -> None:
        found = authors(memory)
        if found:
            self._authors[memory.id] = found
            for name in found:
                if not self._count[name]:
                    self._names = None  # a new name
                self._count[name] += 1

    def _note_marks(self, memory: Memory) -> None:
        self._standing = _marked(self._standing, memory.id, memory.always_inject)
        self._private = _marked(self._private, memory.id, memory.privacy == PRIVATE)


def _marked(ids: frozenset[str], memory_id: str, marked: bool) -> frozenset[str]:
    """`ids` with `memory_id` in it or not: the same object when that is so already, else a new one (one store)."""
    if (memory_id in ids) == marked:
        return ids
    return ids | {memory_id} if marked else ids - {memory_id}
