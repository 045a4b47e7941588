"""The stored units' vectors (sentence and neighbour units): float16 rows in a memory-mapped file.

These units are never scanned; a search reads back the few hundred of its candidates' units by id
to score them. Held in FAISS they were 5/6 of the vault's vectors in RAM (0.77 GB at 100k memories,
float32). Here the snapshot is a file the kernel pages in on demand: resident memory holds the sorted
ids (8 bytes a unit) and the pages searches touched, which stay reclaimable page cache.

float16 keeps a unit vector's components to within 2^-11 of their value (cosine within 1e-4);
rows are rounded to float16 as they are added, so what a search reads is the same before and after
a reload, and an incremental index equals a rebuild.

File layout (one file, replaced whole by a rename, so a crash leaves the old one or the new one):
    magic (8 bytes) | count (uint64) | dim (uint64) | ids (int64 x count, ascending) | rows (float16 x count x dim)
Changes since the snapshot live in RAM (and, for crash safety, in VectorIndex's log) until the next
snapshot folds them in.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

MAGIC = b"MDVEC16\x00"
_HEADER = struct.Struct("<8sQQ")


class StoredVectors:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._base_ids = np.zeros(0, dtype=np.int64)  # the snapshot's ids, ascending
        self._base_live = np.zeros(0, dtype=bool)  # False once removed since the snapshot
        self._base_rows: np.ndarray = np.zeros((0, dim), dtype=np.float16)  # np.memmap once opened
        self._new_ids = np.zeros(0, dtype=np.int64)  # units added since the snapshot, ascending
        self._new_rows = np.zeros((0, dim), dtype=np.float16)
        self._incoming: list[tuple[np.ndarray, np.ndarray]] = []  # added batches not yet merged (cheap adds)
        self._count = 0

    @classmethod
    def open(cls, path: Path, dim: int) -> "StoredVectors":
        """Map a snapshot; a file of the wrong size or order is damaged (ValueError), never half read."""
        store = cls(dim)
        store._map(path)
        return store

    def _map(self, path: Path) -> None:
        size = path.stat().st_size
        with open(path, "rb") as file:
            head = file.read(_HEADER.size)
            if len(head) < _HEADER.size:
                raise ValueError(f"{path}: truncated header")
            magic, count, dim = _HEADER.unpack(head)
            if magic != MAGIC or dim != self.dim:
                raise ValueError(f"{path}: not a {self.dim}-dimensional vector file")
            if size != _HEADER.size + count * (8 + 2 * dim):
                raise ValueError(f"{path}: {size} bytes where {count} vectors need {_HEADER.size + count * (8 + 2 * dim)}")
            ids = np.fromfile(file, dtype=np.int64, count=count)
        if count > 1 and not (np.diff(ids) > 0).all():
            raise ValueError(f"{path}: ids out of order")
        rows = (np.memmap(path, dtype=np.float16, mode="r", offset=_HEADER.size + 8 * count, shape=(count, dim))
                if count else np.zeros((0, dim), dtype=np.float16))
        self._base_ids, self._base_live, self._base_rows = ids, np.ones(count, dtype=bool), rows
        self._new_ids = np.zeros(0, dtype=np.int64)
        self._new_rows = np.zeros((0, self.dim), dtype=np.float16)
        self._incoming = []
        self._count = int(count)

    def __len__(self) -> int:
        return self._count

    def ids(self) -> np.ndarray:
        """Every unit held, ascending."""
        self._merge()
        return np.union1d(self._base_ids[self._base_live], self._new_ids)

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add units held nowhere yet (the caller removes a unit before adding it again)."""
        if len(ids):
            self._incoming.append((np.array(ids, dtype=np.int64), np.asarray(vectors).astype(np.float16)))
            self._count += len(ids)

    def remove(self, ids: np.ndarray) -> None:
        """Remove units that are held (the caller knows which)."""
        if not len(ids):
            return
        self._merge()
        place = np.minimum(np.searchsorted(self._base_ids, ids), max(len(self._base_ids) - 1, 0))
        in_base = (self._base_ids[place] == ids) & self._base_live[place] if len(self._base_ids) else np.zeros(len(ids), bool)
        self._base_live[place[in_base]] = False
        rest = ids[~in_base]
        if len(rest):
            keep = np.ones(len(self._new_ids), dtype=bool)
            keep[np.searchsorted(self._new_ids, rest)] = False
            self._new_ids, self._new_rows = self._new_ids[keep], self._new_rows[keep]
        self._count -= len(ids)

    def read(self, ids: np.ndarray) -> np.ndarray:
        """float32 rows of held units, in the order asked."""
        self._merge()
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        in_new = _positions(self._new_ids, ids)
        found = in_new >= 0
        out[found] = self._new_rows[in_new[found]]
        if not found.all():
            place = _positions(self._base_ids, ids[~found])
            if (place < 0).any():
                raise KeyError(f"units not stored: {ids[~found][place < 0][:5].tolist()}")
            order = np.argsort(place)  # ascending offsets: the file is read front to back
            rows = np.empty((len(place), self.dim), dtype=np.float32)
            rows[order] = self._base_rows[place[order]]
            out[~found] = rows
        return out

    def write(self, path: Path) -> None:
        """Write every held unit as a new snapshot (temp file, fsync, rename), then map it."""
        self._merge()
        ids = np.concatenate([self._base_ids[self._base_live], self._new_ids])
        order = np.argsort(ids, kind="stable")
        temp = path.with_name(path.name + ".tmp")
        with open(temp, "wb") as file:
            file.write(_HEADER.pack(MAGIC, len(ids), self.dim))
            file.write(ids[order].tobytes())
            live = np.flatnonzero(self._base_live)
            new_from = len(live)
            for start in range(0, len(order), 16384):  # bounded copies: the rows never sit in RAM whole
                part = order[start:start + 16384]
                from_base = part < new_from
                rows = np.empty((len(part), self.dim), dtype=np.float16)
                rows[from_base] = self._base_rows[live[part[from_base]]]
                rows[~from_base] = self._new_rows[part[~from_base] - new_from]
                file.write(rows.tobytes())
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
        self._map(path)

    def _merge(self) -> None:
        """Fold the added batches into the sorted in-RAM part (once per read, not once per add)."""
        if not self._incoming:
            return
        ids = np.concatenate([self._new_ids] + [i for i, _ in self._incoming])
        rows = np.concatenate([self._new_rows] + [r for _, r in self._incoming])
        order = np.argsort(ids, kind="stable")
        self._new_ids, self._new_rows = ids[order], rows[order]
        self._incoming = []


def _positions(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Each needle's index in `haystack` (ascending), -1 where absent."""
    if not len(haystack):
        return np.full(len(needles), -1, dtype=np.int64)
    place = np.minimum(np.searchsorted(haystack, needles), len(haystack) - 1)
    return np.where(haystack[place] == needles, place, -1)
