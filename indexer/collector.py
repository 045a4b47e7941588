"""Loading an index without Python's cyclic garbage collector walking it as it grows.

An index load makes millions of long-lived, acyclic objects (a Memory, an Entry and their tuples per
memory). Every 700 allocations the collector runs, and each time enough of them have piled up it walks
everything allocated so far: at 100k memories `Index()` took 16.6 CPU s with it, 15.2 without (bench/README,
issue 32 item 5). A load frees no cycles worth finding, so the collector waits until it is done.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_pauses = 0  # loads under way (one server loads several vaults at once)
_was_on = False  # the collector's state before the first of them


@contextmanager
def paused() -> Iterator[None]:
    """The collector off for the block, and back as it was once the last overlapping pause ends (a caller's
    gc.disable is kept)."""
    global _pauses, _was_on
    with _lock:
        if _pauses == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_on:
                gc.enable()
