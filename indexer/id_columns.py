"""The chunk and unit ids of many manifest rows as flat columns: what a heal compares FAISS and Whoosh with.

Held as a dict of per-row Python lists they were +83 MB of a heal's peak at 100k memories (630k unit ids), for a heal
that usually finds nothing (bench/results/s10-firstlog10.md). Here each id is 8 bytes, with its row's number beside it.
"""

from __future__ import annotations

from itertools import chain
from typing import Sequence

import numpy as np

from .arrays import sorted_contains


class IdColumns:
    """`paths[r]`'s chunk ids are `chunks[chunk_rows == r]`, its unit ids `units[unit_rows == r]`."""

    def __init__(self, paths: list[str], chunks: np.ndarray, chunk_rows: np.ndarray, units: np.ndarray,
                 unit_rows: np.ndarray) -> None:
        self.paths, self.chunks, self.chunk_rows, self.units, self.unit_rows = paths, chunks, chunk_rows, units, unit_rows

    @classmethod
    def of_lists(cls, paths: list[str], chunk_lists: Sequence[Sequence[int]],
                 unit_lists: Sequence[Sequence[int]]) -> "IdColumns":
        return cls(paths, *_flat(chunk_lists), *_flat(unit_lists))

    @classmethod
    def joined(cls, parts: Sequence["IdColumns"]) -> "IdColumns":
        starts = np.cumsum([0] + [len(part.paths) for part in parts])
        return cls(list(chain.from_iterable(part.paths for part in parts)),
                   np.concatenate([part.chunks for part in parts]),
                   np.concatenate([part.chunk_rows + start for part, start in zip(parts, starts)]),
                   np.concatenate([part.units for part in parts]),
                   np.concatenate([part.unit_rows + start for part, start in zip(parts, starts)]))

    def rows(self, keep: np.ndarray) -> "IdColumns":
        """Only the rows whose `keep` is True, numbered again."""
        number = np.cumsum(keep) - 1
        chunks, units = keep[self.chunk_rows], keep[self.unit_rows]
        return IdColumns([path for path, kept in zip(self.paths, keep.tolist()) if kept], self.chunks[chunks],
                         number[self.chunk_rows[chunks]], self.units[units], number[self.unit_rows[units]])

    def paths_holding(self, ids: np.ndarray) -> set[str]:
        """The paths of the rows that hold any of these ids (ascending) as a chunk or a unit."""
        rows = np.concatenate([self.chunk_rows[sorted_contains(ids, self.chunks)],
                               self.unit_rows[sorted_contains(ids, self.units)]])
        return {self.paths[row] for row in np.unique(rows).tolist()}


def _flat(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """The ids of every list in one column, and each one's list number."""
    counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    ids = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=int(counts.sum()))
    return ids, np.repeat(np.arange(len(lists), dtype=np.int64), counts)
