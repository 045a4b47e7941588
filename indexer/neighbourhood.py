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
adds, edits and deletes), ties included: hits of exactly equal score (repeated texts) are cut and
ordered as FAISS orders them, by where the chunks are stored. The file is derived data: a missing, foreign or damaged one only
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
FORMAT = 3
_TIE_ROOM = 8  # chunks searched past a list's end to see which share its last score
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
        # Chunks left outside a list with exactly its last score (repeated texts): which of the tied
        # chunks made the cut depends on them too, so their removal sends the list to be searched
        # again. None: more of them than a search showed (any removal then does).
        self._ties: dict[str, tuple[int, ...] | None] = {}
        self._seen_version = -1
        self._generation = ""
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
            if self._hashes is None or self._generation != self.index.generation.name:
                self._generation = self.index.generation.name
                self._load()
            if self._seen_version != self.index.version:
                self._catch_up()
                self._seen_version = self.index.version
            wanted = {memory_id: memory.path for memory_id in memory_ids
                      if (memory := self.index.memory(memory_id)) is not None}
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
        """Each indexed file's embed hash; a file whose vectors the backfill has not all embedded yet is
        marked, so its lists (computed without those vectors) count as changed once they arrive."""
        waiting = self.index.waiting_units() > 0
        return {entry.path: entry.embed_hash + ("~" if waiting and any(map(self.index.is_waiting, entry.unit_ids)) else "")
                for entry in self.index.all_entries() if entry.units}

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
        dirty = changed | gone
        removing = bool(gone) or any(path in known for path in changed)  # chunks left the index
        added = np.array([unit for path in sorted(changed) for unit, _, role in self.index.entry(path).units
                          if role == WHOLE], dtype=np.int64)
        # Only chunks with a vector: a capture's may wait for the backfill (it gathers them for up to 2 s), and
        # `_merge` places each added chunk among the searched ones. Its file is marked waiting meanwhile (`_current`),
        # so it counts as changed again once its vectors arrive (the inbox failed here, an IndexError).
        added = added[np.isin(added, self.index.searched_units())]
        # A list must be searched again when it names a chunk that changed or is gone: checked for all
        # lists at once (a unit of a changed memory keeps its id, so "changed" is "one of `added`").
        paths = list(self._hits)
        named = [np.concatenate([self._hits[path][0], np.array(_never_none(self._ties.get(path, ())), dtype=np.int64)])
                 for path in paths]
        flat = np.concatenate(named) if named else np.zeros(0, dtype=np.int64)
        stale = np.isin(flat, added) | ~np.isin(flat, self.index.searched_units())
        row_of = np.repeat(np.arange(len(paths)), [len(units) for units in named])
        stale_rows = set(row_of[stale].tolist())
        for row, path in enumerate(paths):
            if row in stale_rows or path in dirty or (removing and path in self._ties and self._ties[path] is None):
                del self._hits[path]
                self._ties.pop(path, None)
        if len(added) and self._hits:
            self._merge(added)

    def _merge(self, added: np.ndarray) -> None:
        """Fold the scores of every kept memory against the added chunks into its top list, as FAISS
        would have, scanning on past the kept list's chunks to the added ones (stored after them)."""
        paths = list(self._hits)
        queries = self._query_vectors(paths)
        scores, rows = _search(self.index.unit_vectors(added), queries, len(added))
        stored = self.index.searched_units()
        sorter = np.argsort(stored)

        def position(units: np.ndarray) -> np.ndarray:
            return sorter[np.searchsorted(stored, units, sorter=sorter)]

        added_position = position(added)
        lowest = np.array([self._hits[path][1][-1] if len(self._hits[path][1]) >= self.width else -np.inf
                           for path in paths], dtype=np.float32)
        for i in np.nonzero((scores > lowest[:, None]).any(axis=1))[0].tolist():  # the rows an added chunk enters
            units, kept = self._hits[paths[i]]
            keep = rows[i] >= 0
            arrivals = sorted(zip(added_position[rows[i][keep]].tolist(), added[rows[i][keep]].tolist(),
                                  scores[i][keep].tolist()))
            units, kept, ties = _scan_on(list(zip(position(units).tolist(), units.tolist(), kept.tolist())),
                                         arrivals, self.width, self._ties.get(paths[i], ()))
            self._hits[paths[i]] = (units, kept)
            self._set_ties(paths[i], ties)

    def _search(self, paths: list[str]) -> None:
        """Search afresh. A few chunks more than kept are asked for, to see which share the last score;
        for lists tied at the end FAISS's own pick at the kept width is taken."""
        paths = [path for path in paths if self.index.entry(path).unit_ids]
        if not paths:
            return
        width = self.width
        found = self._faiss(paths, width + _TIE_ROOM)
        tied = [i for i, hits in enumerate(found) if len(hits) > width and hits[width][1] == hits[width - 1][1]]
        for i, hits in zip(tied, self._faiss([paths[i] for i in tied], width)):
            last = hits[-1][1]
            kept = {unit for unit, _ in hits}
            outside = tuple(unit for unit, score in found[i] if score == last and unit not in kept)
            unseen = len(found[i]) == width + _TIE_ROOM and found[i][-1][1] == last  # the ties may go on
            self._set_ties(paths[i], None if unseen else outside)
            found[i] = hits
        tied_paths = {paths[i] for i in tied}
        for path, hits in zip(paths, found):
            if path not in tied_paths:
                self._ties.pop(path, None)
            hits = hits[:width]
            self._hits[path] = (np.array([u for u, _ in hits], dtype=np.int64),
                                np.array([s for _, s in hits], dtype=np.float32))
        self._dirty = True

    def _set_ties(self, path: str, ties: tuple[int, ...] | None) -> None:
        if ties == ():
            self._ties.pop(path, None)
        else:
            self._ties[path] = ties

    def _faiss(self, paths: list[str], width: int) -> list[list[tuple[int, float]]]:
        if not paths:
            return []
        queries = self._query_vectors(paths)
        padding = np.repeat(queries[:1], max(0, _BLAS_ROWS - len(paths)), axis=0)
        return self.index.search_units_many(np.vstack([queries, padding]), width)[: len(paths)]

    def _query_vectors(self, paths: list[str]) -> np.ndarray:
        firsts = np.array([self.index.entry(path).unit_ids[0] for path in paths], dtype=np.int64)
        return self.index.unit_vectors(firsts)

    # -- on disk ---------------------------------------------------------------------------

    def _meta(self) -> dict[str, object]:
        # The generation too: a rebuilt index stores its chunks in another order, and ties follow that order.
        return {"format": FORMAT, "embedder": self.index.embedder.id, "width": self.width,
                "generation": self.index.generation.name}

    def _load(self) -> None:
        self._hashes, self._hits, self._ties = None, {}, {}
        try:
            with np.load(self.path, allow_pickle=False) as data:
                if json.loads(str(data["meta"])) != self._meta():
                    return
                hashes = dict(zip(data["paths"].tolist(), data["hashes"].tolist()))
                units, scores, lengths = data["units"], data["scores"], data["lengths"]
                queried = data["queried"].tolist()
                self._hits = {path: (units[i, :n].copy(), scores[i, :n].copy())
                              for i, (path, n) in enumerate(zip(queried, lengths.tolist()))}
                ties, offsets, unknown = data["ties"].tolist(), data["tie_offsets"].tolist(), data["ties_unknown"].tolist()
                self._ties = {path: None if unknown[i] else tuple(ties[offsets[i]:offsets[i + 1]])
                              for i, path in enumerate(queried) if unknown[i] or offsets[i + 1] > offsets[i]}
                self._hashes = hashes
        except FileNotFoundError:
            return
        except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            log.info("ignoring %s (%s): the neighbour lists are computed again", self.path, exc)
            self._hits, self._ties = {}, {}

    def _ties_arrays(self, queried: list[str]) -> dict[str, np.ndarray]:
        lists = [_never_none(self._ties.get(path, ())) for path in queried]
        return {"ties": np.array([u for ties in lists for u in ties], dtype=np.int64),
                "tie_offsets": np.cumsum([0] + [len(ties) for ties in lists], dtype=np.int64),
                "ties_unknown": np.array([path in self._ties and self._ties[path] is None for path in queried], dtype=bool)}

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
                 units=units, scores=scores, lengths=lengths, **self._ties_arrays(queried))
        try:
            atomic.write_state(self.path, buffer.getvalue(), durable=False)
        except OSError as exc:  # a read-only vault still answers, it only cannot keep the lists
            log.info("could not keep the neighbour lists in %s: %s", self.path, exc)
        self._dirty = False


def _never_none(ties: tuple[int, ...] | None) -> tuple[int, ...]:
    return ties or ()


def _scan_on(heap: list[tuple[int, int, float]], arrivals: list[tuple[int, int, float]], width: int,
             ties: tuple[int, ...] | None) -> tuple[np.ndarray, np.ndarray, tuple[int, ...] | None]:
    """FAISS's flat scan continued from a kept top list over further (position, unit, score) chunks in
    stored order: a chunk enters when the list is short or it beats the lowest score strictly, and
    pushes out the earliest stored of the lowest scores; the list reads best first, equal scores
    latest stored first (checked against FAISS in tests/indexer/test_neighbourhood.py). Also the
    chunks now left outside with the list's last score (None: unknown, as `ties` was)."""
    lowest = min((hit[2] for hit in heap), default=None)
    outside: list[tuple[int, float]] = []
    for position, unit, score in arrivals:
        if len(heap) >= width:
            out = min(heap, key=lambda hit: (hit[2], hit[0]))
            if not score > out[2]:
                outside.append((unit, score))
                continue
            heap.remove(out)
            outside.append((out[1], out[2]))
        heap.append((position, unit, score))
    heap.sort(key=lambda hit: (-hit[2], -hit[0]))
    last = heap[-1][2] if len(heap) >= width else None
    tied = tuple(unit for unit, score in outside if score == last)
    if last is not None and last == lowest:  # the old ties are still ties
        tied = None if ties is None else ties + tied
    units = np.array([u for _, u, _ in heap], dtype=np.int64)
    return units, np.array([s for _, _, s in heap], dtype=np.float32), tied


def _search(base: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every query's scores against a few vectors, computed as the vault-wide FAISS search computes them."""
    flat = faiss.IndexFlatIP(base.shape[1])
    flat.add(np.ascontiguousarray(base, dtype=np.float32))
    padding = np.repeat(queries[:1], max(0, _BLAS_ROWS - len(queries)), axis=0)
    scores, rows = flat.search(np.ascontiguousarray(np.vstack([queries, padding]), dtype=np.float32), k)
    return scores[: len(queries)], rows[: len(queries)]
