"""A first pass for a large searched part: one sign bit per dimension, compared by Hamming distance.

A flat float32 scan reads every searched vector per query (154 MB at 100k chunks: 40 ms on this
machine, bound by memory traffic). The signs of a unit vector's components are 48 bytes for 384
dimensions (4.8 MB at 100k), and the Hamming distance between two sign codes tracks the angle
between the vectors (random-hyperplane hashing). The pass keeps a wide list of candidates; the
caller scores those exactly from the float32 vectors, so a result differs from the full scan's
only when one of the full scan's top k is missing from the list (measured: bench/vector_layer.py).

Chosen over 8-bit codes (a full scan of 4x fewer bytes, but decoding made it only 1.5-2x faster:
18-27 ms at 100k) and IVF (a trained clustering: 19 s of k-means at 100k, a file to keep, and
results that depend on the order memories arrived). Sign codes need no training: the same
vectors give the same codes, whatever the order they came in.
"""

from __future__ import annotations

import faiss
import numpy as np

_SLICE = 16384  # vectors decoded at a time when building from an index (bounded transient memory)


class SignCodes:
    def __init__(self, dim: int) -> None:
        self.bits = 8 * ((dim + 7) // 8)
        flat = faiss.IndexBinaryFlat(self.bits)
        # Count candidates by distance instead of keeping a heap of thousands: 1.2 ms instead of 25.6 ms
        # for 4,000 of 100k codes (same distances; measured in one process on the loaded machine).
        flat.use_heap = False
        self._codes = faiss.IndexBinaryIDMap2(flat)
        self._flat = flat  # the wrapper does not own it from Python's side: keep it alive

    @classmethod
    def of_index(cls, flat: faiss.Index, dim: int) -> "SignCodes":
        """The codes of every vector an IndexIDMap2(IndexFlat) holds, read in slices from a view of its storage:
        copies of them (`reconstruct_n`) were half of building the codes at an open, 0.05 of ~0.11 CPU s at 100k."""
        codes = cls(dim)
        ids = faiss.vector_to_array(flat.id_map)
        if not flat.ntotal:
            return codes
        stored = faiss.rev_swig_ptr(faiss.downcast_index(flat.index).get_xb(), flat.ntotal * dim).reshape(flat.ntotal, dim)
        for start in range(0, flat.ntotal, _SLICE):
            codes.add(ids[start:start + _SLICE], stored[start:start + _SLICE])
        return codes

    def add(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        self._codes.add_with_ids(_signs(vectors), np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        self._codes.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))

    def __len__(self) -> int:
        return int(self._codes.ntotal)

    def candidates(self, query: np.ndarray, width: int) -> np.ndarray:
        """The ids of the `width` units whose signs agree most with the query's."""
        width = min(width, len(self))
        if width <= 0:
            return np.zeros(0, dtype=np.int64)
        _, ids = self._codes.search(_signs(query.reshape(1, -1)), width)
        return ids[0][ids[0] >= 0]


def _signs(vectors: np.ndarray) -> np.ndarray:
    return np.packbits(np.asarray(vectors) > 0, axis=1)
