"""Small numpy helpers shared by the indices."""

from __future__ import annotations

import numpy as np


def sorted_contains(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """A boolean per needle: is it in `haystack` (sorted ascending)? Binary search, no hashing:
    np.isin rebuilt a hash table of the haystack on every call (over 1 ms for 10k ids)."""
    if len(haystack) == 0:
        return np.zeros(len(needles), dtype=bool)
    place = np.minimum(np.searchsorted(haystack, needles), len(haystack) - 1)
    return haystack[place] == needles


def sorted_insert(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """`haystack` (sorted ascending) with `needles` (none of them in it) added, still sorted: one
    memmove, where np.union1d re-sorted everything (15 ms for 100k ids)."""
    needles = np.sort(needles)
    return np.insert(haystack, np.searchsorted(haystack, needles), needles)


def sorted_remove(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """`haystack` (sorted ascending) without `needles` (each of them in it once)."""
    return np.delete(haystack, np.searchsorted(haystack, needles))
