"""Give the memory a big sync freed back to the system.

glibc keeps freed heap memory for reuse, and raises its threshold for serving large blocks from
separate mappings each time such a block is freed, so after a build the slices of vectors, parsed
files and Whoosh postings it freed stay resident (25 MB of 226 at 5k memories; bench/results/scale.md,
issue 32). `malloc_trim` returns the free pages. Elsewhere (macOS, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache


@cache
def _trim() -> object | None:
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), "malloc_trim") if name else None
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    trim = _trim()
    if trim is not None:
        trim(0)  # type: ignore[operator]
