"""The vector index: exact cosine search over unit embeddings with FAISS IndexIDMap2(IndexFlatIP).

Flat is exact and, for a personal vault (10k–100k memories), fast enough; IDMap2 gives each
unit (see chunking) a stable int64 id that can be removed, re-added and read back. FAISS allows concurrent searches
but not mutation during a search, so one lock guards both.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Iterable

import faiss
import numpy as np

# One thread: a single-query flat search is sub-millisecond on one core, while OpenMP's
# second thread on a busy 2-core machine made the same search 60x slower (measured).
faiss.omp_set_num_threads(1)


class VectorIndex:
    def __init__(self, dim: int, index: faiss.Index | None = None) -> None:
        self.dim = dim
        self._index = index if index is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._lock = threading.RLock()

    @classmethod
    def load(cls, path: Path, dim: int) -> "VectorIndex":
        index = faiss.read_index(str(path))
        if index.d != dim:
            raise ValueError(f"{path} holds {index.d}-dimensional vectors, expected {dim}")
        return cls(dim, index)

    def save(self, path: Path) -> None:
        """Write to a temp file and rename, so a crash never leaves a half-written index."""
        temp = path.with_name(path.name + ".tmp")
        with self._lock:
            faiss.write_index(self._index, str(temp))
        os.replace(temp, path)

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def ids(self) -> set[int]:
        with self._lock:
            return set(faiss.vector_to_array(self._index.id_map).tolist())

    def add(self, ids: Iterable[int], vectors: np.ndarray) -> None:
        id_array = np.fromiter(ids, dtype=np.int64)
        if len(id_array) == 0:
            return
        with self._lock:
            self._index.remove_ids(id_array)  # FAISS accepts duplicate ids silently: always remove first
            self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), id_array)

    def remove(self, ids: Iterable[int]) -> int:
        id_array = np.fromiter(ids, dtype=np.int64)
        if len(id_array) == 0:
            return 0
        with self._lock:
            return int(self._index.remove_ids(id_array))

    def vector(self, unit_id: int) -> np.ndarray:
        with self._lock:
            return self._index.reconstruct(int(unit_id))

    def vectors(self, unit_ids: np.ndarray) -> np.ndarray:
        """The stored vectors of many units at once, one row each (one call into FAISS, not one per id)."""
        if len(unit_ids) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return self._index.reconstruct_batch(np.ascontiguousarray(unit_ids, dtype=np.int64))

    def search(self, query: np.ndarray, k: int, allowed: Iterable[int] | None = None) -> list[tuple[int, float]]:
        """Top-k (unit id, cosine) pairs; with `allowed`, only those ids compete (filter before top-k)."""
        with self._lock:
            if self._index.ntotal == 0 or k <= 0:
                return []
            params = None
            if allowed is not None:
                allowed_ids = np.fromiter(allowed, dtype=np.int64)
                if len(allowed_ids) == 0:
                    return []
                params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed_ids))
            k = min(k, int(self._index.ntotal))
            scores, ids = self._index.search(np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32), k, params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]
