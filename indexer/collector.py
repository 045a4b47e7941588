"""Work that makes many long-lived objects, done without Python's cyclic garbage collector walking them as they grow.

An index load makes millions of long-lived, acyclic objects (a Memory, an Entry and their tuples per
memory). Every 700 allocations the collector runs, and each time enough of them have piled up it walks
everything allocated so far: at 100k memories `Index()` took 16.6 CPU s with it, 15.2 without
(bench/results/first-answer.md, issue 32 item 5). A load frees no cycles worth finding, so the collector waits until it
is done. A pull's sync is the same (issue 32 item 4), but only while it reads, chunks and stages: it also waits (for the
index lock, for an earlier keyword commit) and lets the model run, and the collector is every thread's (`Pause`).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_pauses = 0  # pauses held, in every thread (one server loads several vaults, and syncs on several threads)
_was_on = False  # the collector's state before the first of them
_keeping = 0  # callers keeping what their loads make (keeping_loads)


def _begin() -> None:
    global _pauses, _was_on
    with _lock:
        if _pauses == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _pauses += 1


def _end(freeze: bool = False) -> None:
    global _pauses
    with _lock:
        _pauses -= 1
        if _pauses == 0 and freeze:
            gc.freeze()  # before the collector is on again: no pass walks what the pause made
        if _pauses == 0 and _was_on:
            gc.enable()


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block, and back as it was once the last overlapping pause ends (a caller's
    gc.disable is kept)."""
    _begin()
    try:
        yield
    finally:
        _end()


@contextmanager
def keeping_loads() -> Iterator[None]:
    """Index loads in the block make what the caller keeps for as long as it serves the index (a server's open):
    `loading` freezes it as the load ends. Left to the collector, its first pass after a 100k open walked every row
    tuple the open made, to find nothing (0.1 CPU s of a served first answer, bench/results/s14-cold14.md)."""
    global _keeping
    with _lock:
        _keeping += 1
    try:
        yield
    finally:
        with _lock:
            _keeping -= 1


@contextmanager
def loading() -> Iterator[None]:
    """`paused`, over a load of objects made to last (an index's generation read): in a process that keeps them
    (`keeping_loads`), what was made is frozen as the last overlapping pause ends, before the collector is on again.
    A pause another thread still holds (a pull's sync) leaves it to the collector, as before: that sync's
    temporaries are not frozen with it."""
    _begin()
    try:
        yield
    finally:
        _end(freeze=_keeping > 0)


class Pause:
    """One thread's pause that comes and goes: held over the CPU-bound steps of a long piece of work, let go
    whenever the work waits or hands the CPU to something that makes few Python objects (a model), and let go for
    good at its end (`let_go` in a `finally`). The collector is off while any thread holds a pause (`paused`
    included), and on again once none does. `wanted=False`: a pause that never holds (work too small to need it)."""

    def __init__(self, wanted: bool = True) -> None:
        self._wanted = wanted
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    def hold(self) -> None:
        if self._wanted and not self._held:
            _begin()
            self._held = True

    def let_go(self) -> None:
        if self._held:
            self._held = False
            _end()

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """Let go for the block, and held again after it if it was held before."""
        was_held = self._held
        self.let_go()
        try:
            yield
        finally:
            if was_held:
                self.hold()


class Lasting:
    """Objects made to last, a few at a time and long after a load (the rows a cold open decodes as searches read
    them, lazy_rows.py), put out of the collector's sight in batches, as a load's are (`gc.freeze`, served.py).
    Left in it, every full collection walked all of them: at 100k memories a first pass of 200 searches decoded 22k
    rows and its full collections took up to 92 ms, landing on whichever search ran then (bench/results/s13-fast100k.md).

    Before each freeze the young generations are collected (a fraction of a millisecond): what is frozen is what
    outlived them, which is what was made to last and the few temporaries alive at that moment (freed as usual when
    their count drops; a frozen object is only never searched for cycles)."""

    def __init__(self, every: int) -> None:
        self.every = every
        self._made = 0
        self._lock = threading.Lock()

    def made(self, count: int = 1) -> None:
        with self._lock:
            self._made += count
            if self._made < self.every:
                return
            self._made = 0
        gc.collect(1)
        gc.freeze()
