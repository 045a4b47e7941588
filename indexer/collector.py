"""Loading an index without Python's cyclic garbage collector walking it as it grows.

An index load makes millions of long-lived, acyclic objects (a Memory, an Entry and their tuples per
memory). Every 700 allocations the collector runs, and each time enough of them have piled up it walks
everything allocated so far: at 100k memories `Index()` took 16.6 CPU s with it, 15.2 without (bench/README,
issue 32 item 5). A load frees no cycles worth finding, so the collector waits until it is done.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block, then as it was (another thread's pause or a caller's gc.disable kept)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
