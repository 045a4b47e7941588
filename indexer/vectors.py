"""The vector index: exact cosine search over unit embeddings with FAISS IndexIDMap2(IndexFlatIP).

Flat is exact and, for a personal vault (10k–100k memories), fast enough; IDMap2 gives each
unit (see chunking) a stable int64 id that can be removed, re-added and read back. FAISS allows
concurrent searches but not mutation during a search, so one lock guards both.

The units live in two FAISS indices. A search scans only the *searched* one: one vector per
chunk (the whole chunk). Sentence and neighbour units are *stored* apart and only read back by
id to score the candidates exactly. A flat scan costs its size in memory traffic: at 10k memories
the sentence units made the scan 63k vectors (6 ms); chunks alone are 10k (0.75 ms), and taking
candidates from them left LoCoMo retrieval where it was (hybrid Recall@10 0.770 both ways).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Iterable, Sequence

import faiss
import numpy as np

from .arrays import sorted_contains

# One thread: a single-query flat search is sub-millisecond on one core, while OpenMP's
# second thread on a busy 2-core machine made the same search 60x slower (measured).
faiss.omp_set_num_threads(1)

SEARCHED_FILE, STORED_FILE = "vectors.faiss", "units.faiss"  # inside an index generation's folder


class VectorIndex:
    def __init__(self, dim: int, searched: faiss.Index | None = None, stored: faiss.Index | None = None) -> None:
        self.dim = dim
        self._searched = searched if searched is not None else _flat(dim)
        self._stored = stored if stored is not None else _flat(dim)
        self._searched_ids = np.sort(faiss.vector_to_array(self._searched.id_map))  # which part holds a unit
        self._lock = threading.RLock()

    @classmethod
    def load(cls, folder: Path, dim: int) -> "VectorIndex":
        parts = []
        for name in (SEARCHED_FILE, STORED_FILE):
            index = faiss.read_index(str(folder / name))
            if index.d != dim:
                raise ValueError(f"{folder / name} holds {index.d}-dimensional vectors, expected {dim}")
            parts.append(index)
        return cls(dim, *parts)

    def save(self, folder: Path) -> None:
        """Write each part to a temp file and rename, so a crash never leaves a half-written index.
        (A crash between the two renames leaves units missing or stray; the index heals those.)"""
        with self._lock:
            for name, index in ((SEARCHED_FILE, self._searched), (STORED_FILE, self._stored)):
                temp = folder / (name + ".tmp")
                faiss.write_index(index, str(temp))
                os.replace(temp, folder / name)

    def __len__(self) -> int:
        return int(self._searched.ntotal + self._stored.ntotal)

    def ids(self) -> set[int]:
        with self._lock:
            return set(self._searched_ids.tolist()) | set(faiss.vector_to_array(self._stored.id_map).tolist())

    def add(self, ids: Iterable[int], vectors: np.ndarray, searched: Sequence[bool]) -> None:
        """Add (or replace) units; `searched` says, per unit, whether searches scan it or it is only read back."""
        id_array = np.fromiter(ids, dtype=np.int64)
        if len(id_array) == 0:
            return
        scanned = np.asarray(searched, dtype=bool)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self._lock:
            self.remove(id_array)  # FAISS accepts duplicate ids silently: always remove first
            for index, rows in ((self._searched, scanned), (self._stored, ~scanned)):
                if rows.any():
                    index.add_with_ids(np.ascontiguousarray(vectors[rows]), id_array[rows])
            self._searched_ids = np.union1d(self._searched_ids, id_array[scanned])

    def remove(self, ids: Iterable[int]) -> int:
        id_array = np.fromiter(ids, dtype=np.int64)
        if len(id_array) == 0:
            return 0
        with self._lock:
            self._searched_ids = self._searched_ids[~sorted_contains(np.sort(id_array), self._searched_ids)]
            return int(self._searched.remove_ids(id_array)) + int(self._stored.remove_ids(id_array))

    def vector(self, unit_id: int) -> np.ndarray:
        with self._lock:
            return self.vectors(np.array([unit_id], dtype=np.int64))[0]

    def vectors(self, unit_ids: np.ndarray) -> np.ndarray:
        """The stored vectors of many units at once, one row each (one call into FAISS per part, not one per id)."""
        out = np.zeros((len(unit_ids), self.dim), dtype=np.float32)
        if len(unit_ids) == 0:
            return out
        ids = np.ascontiguousarray(unit_ids, dtype=np.int64)
        with self._lock:
            scanned = sorted_contains(self._searched_ids, ids)
            for index, rows in ((self._searched, scanned), (self._stored, ~scanned)):
                if rows.any():
                    out[rows] = index.reconstruct_batch(np.ascontiguousarray(ids[rows]))
        return out

    def search(self, query: np.ndarray, k: int, allowed: Iterable[int] | None = None) -> list[tuple[int, float]]:
        """Top-k (unit id, cosine) pairs among the searched units; with `allowed`, only those ids compete
        (filter before top-k)."""
        with self._lock:
            if self._searched.ntotal == 0 or k <= 0:
                return []
            params = None
            if allowed is not None:
                allowed_ids = np.fromiter(allowed, dtype=np.int64)
                if len(allowed_ids) == 0:
                    return []
                params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed_ids))
            k = min(k, int(self._searched.ntotal))
            scores, ids = self._searched.search(np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), k,
                                                params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]


def _flat(dim: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
