"""Each memory's nearest chunks, kept across index changes and across processes.

The review inbox and `suggest-merges` compare every memory with its most similar others: one
search of each memory's first chunk against every chunk (10k x 10k at 10k memories, most of a
second). The answer changes only where the vault changed, so it is kept in
`.memdir/review/neighbours-<width>.npz` together with the embedding hash of every indexed file it
was computed against, and brought up to date instead of recomputed:

- a memory whose own vectors changed, or whose kept hits name a chunk that changed or went away,
  is searched again (a chunk leaving the top list may let any other chunk in);
- every other memory keeps its hits, merged with its scores against the chunks that were added
  or changed (the true top list of a larger set is the top of the old top list plus the new ones).

The result equals a search from scratch (tests/indexer/test_neighbourhood.py compares them after
adds, edits and deletes), hits of equal score ordered by unit id either way. Only which of several
chunks tied at exactly the last place makes the list is FAISS's pick, from scratch as well. The file is derived data: a missing, foreign or damaged one only
means the next call searches everything again.
"""

from __future__ import annotations

import io
import json
import logging
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import faiss
import numpy as np

from vault import atomic

from .chunking import WHOLE

if TYPE_CHECKING:
    from .index import Index

log = logging.getLogger("memdir.neighbourhood")
STATE_DIR = ".memdir/review"
FORMAT = 1
# FAISS computes a batch of fewer queries than this without BLAS, whose sums differ in the last
# bits: every search here is padded to at least this many rows, so a memory searched alone scores
# exactly as it would in the vault-wide batch.
_BLAS_ROWS = 20


class Neighbourhood:
    """Top-`width` (chunk unit, cosine) hits of each memory's first chunk among all searched chunks."""

    def __init__(self, index: "Index", width: int, folder: Path | None = None) -> None:
        self.index = index
        self.width = width
        self.path = (folder or index.vault.root / STATE_DIR) / f"neighbours-{width}.npz"
        self._hashes: dict[str, str] | None = None  # path -> embed hash the hits were computed against
        self._hits: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # path -> (units, scores), best first
        self._seen_version = -1
        self._dirty = False

    def hits(self, memory_ids: Iterable[str]) -> dict[str, list[tuple[int, float]]]:
        """The kept or freshly searched hits of each memory (ids without an indexed chunk are left out)."""
        ids, units, scores = self.table(memory_ids)
        return {memory_id: [(int(u), float(s)) for u, s in zip(row_units.tolist(), row_scores.tolist()) if u >= 0]
                for memory_id, row_units, row_scores in zip(ids, units, scores)}

    def table(self, memory_ids: Iterable[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
        """`hits` as one row per memory: its id, then units and scores best first, padded with unit -1
        and score -inf (arrays, because the vault-wide callers work on all 10k rows at once)."""
        with self.index.lock:
            if self._hashes is None:
                self._load()
            if self._seen_version != self.index.version:
                self._catch_up()
                self._seen_version = self.index.version
            wanted = {memory_id: memory.path for memory_id in memory_ids
                      if (memory := self.index.memories.get(memory_id)) is not None}
            self._search([path for path in wanted.values() if path not in self._hits])
            if self._dirty:
                self._save()
            ids = [memory_id for memory_id, path in wanted.items() if path in self._hits]
            units = np.full((len(ids), self.width), -1, dtype=np.int64)
            scores = np.full((len(ids), self.width), -np.inf, dtype=np.float32)
            for row, memory_id in enumerate(ids):
                found, score = self._hits[wanted[memory_id]]
                units[row, : len(found)], scores[row, : len(found)] = found, score
            return ids, units, scores

    # -- keeping up with the index -------------------------------------------------------

    def _current(self) -> dict[str, str]:
        return {path: entry.embed_hash for path, entry in self.index.entries.items() if entry.units}

    def _catch_up(self) -> None:
        current = self._current()
        known = self._hashes or {}
        changed = {path for path, digest in current.items() if known.get(path) != digest}
        gone = set(known) - set(current)
        if not changed and not gone and self._hashes is not None:
            return
        self._dirty = True
        self._hashes = current
        if not self._hits:
            return
        owner = self._unit_owners()
        dirty = changed | gone
        for path, (units, _) in list(self._hits.items()):
            if path in dirty or any(owner.get(int(unit)) in dirty or int(unit) not in owner for unit in units):
                del self._hits[path]
        added = np.array([unit for path in sorted(changed) for unit, _, role in self.index.entries[path].units
                          if role == WHOLE], dtype=np.int64)
        if len(added) and self._hits:
            self._merge(added)

    def _merge(self, added: np.ndarray) -> None:
        """Fold the scores of every kept memory against the added chunks into its top list."""
        paths = list(self._hits)
        queries = self._query_vectors(paths)
        scores, rows = _search(self.index.vectors.vectors(added), queries, len(added))
        found_units = np.where(rows >= 0, added[np.clip(rows, 0, None)], -1)
        for i, path in enumerate(paths):
            units, kept = self._hits[path]
            keep = found_units[i] >= 0
            self._hits[path] = _ranked(np.concatenate([units, found_units[i][keep]]),
                                       np.concatenate([kept, scores[i][keep]]), self.width)

    def _search(self, paths: list[str]) -> None:
        paths = [path for path in paths if self.index.entries[path].unit_ids]
        if not paths:
            return
        queries = self._query_vectors(paths)
        padding = np.repeat(queries[:1], max(0, _BLAS_ROWS - len(paths)), axis=0)
        found = self.index.vectors.search_many(np.vstack([queries, padding]), self.width)
        for path, hits in zip(paths, found):
            self._hits[path] = _ranked(np.array([u for u, _ in hits], dtype=np.int64),
                                       np.array([s for _, s in hits], dtype=np.float32), self.width)
        self._dirty = True

    def _query_vectors(self, paths: list[str]) -> np.ndarray:
        firsts = np.array([self.index.entries[path].unit_ids[0] for path in paths], dtype=np.int64)
        return self.index.vectors.vectors(firsts)

    def _unit_owners(self) -> dict[int, str]:
        return {unit: path for path, entry in self.index.entries.items() for unit, _, role in entry.units if role == WHOLE}

    # -- on disk ---------------------------------------------------------------------------

    def _meta(self) -> dict[str, object]:
        return {"format": FORMAT, "embedder": self.index.embedder.id, "width": self.width}

    def _load(self) -> None:
        self._hashes, self._hits = None, {}
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if json.loads(str(data["meta"])) != self._meta():
                    return
                hashes = dict(zip(data["paths"].tolist(), data["hashes"].tolist()))
                units, scores, lengths = data["units"], data["scores"], data["lengths"]
                self._hits = {path: (units[i, :n].copy(), scores[i, :n].copy())
                              for i, (path, n) in enumerate(zip(data["queried"].tolist(), lengths.tolist()))}
                self._hashes = hashes
        except FileNotFoundError:
            return
        except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            log.info("ignoring %s (%s): the neighbour lists are computed again", self.path, exc)
            self._hits = {}

    def _save(self) -> None:
        queried = list(self._hits)
        units = np.full((len(queried), self.width), -1, dtype=np.int64)
        scores = np.zeros((len(queried), self.width), dtype=np.float32)
        lengths = np.zeros(len(queried), dtype=np.int64)
        for i, path in enumerate(queried):
            found, score = self._hits[path]
            units[i, : len(found)], scores[i, : len(found)], lengths[i] = found, score, len(found)
        hashes = self._hashes or {}
        buffer = io.BytesIO()
        np.savez(buffer, meta=np.array(json.dumps(self._meta())), paths=np.array(list(hashes), dtype=str),
                 hashes=np.array(list(hashes.values()), dtype=str), queried=np.array(queried, dtype=str),
                 units=units, scores=scores, lengths=lengths)
        try:
            atomic.write_state(self.path, buffer.getvalue(), durable=False)
        except OSError as exc:  # a read-only vault still answers, it only cannot keep the lists
            log.info("could not keep the neighbour lists in %s: %s", self.path, exc)
        self._dirty = False


def _ranked(units: np.ndarray, scores: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Best first, equal scores by unit id: FAISS orders ties as its heap left them, and a kept list
    must read the same whichever way it was reached."""
    order = np.lexsort((units, -scores))[:width]
    return units[order], scores[order]


def _search(base: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every query's scores against a few vectors, computed as the vault-wide FAISS search computes them."""
    flat = faiss.IndexFlatIP(base.shape[1])
    flat.add(np.ascontiguousarray(base, dtype=np.float32))
    padding = np.repeat(queries[:1], max(0, _BLAS_ROWS - len(queries)), axis=0)
    scores, rows = flat.search(np.ascontiguousarray(np.vstack([queries, padding]), dtype=np.float32), k)
    return scores[: len(queries)], rows[: len(queries)]
