"""The vector index: cosine search over unit embeddings with FAISS IndexIDMap2(IndexFlatIP).

Flat is exact and, for a personal vault (10k–100k memories), fast enough; IDMap2 gives each
unit (see chunking) a stable int64 id that can be removed, re-added and read back. FAISS allows
concurrent searches but not mutation during a search, so one lock guards both.

The units live in two parts. A search scans only the *searched* one, a FAISS index: one vector per
chunk (the whole chunk). Sentence and neighbour units are *stored* apart, in a float16 file read
back by id to score the candidates exactly (stored_vectors.py: 5/6 of the vectors, kept out of RAM).
Past FIRST_PASS_ABOVE chunks, a search first narrows the chunks by sign codes (first_pass.py) and
FAISS scores only those, exactly. A flat scan costs its size in memory traffic: at 10k memories
the sentence units made the scan 63k vectors (6 ms); chunks alone are 10k (0.75 ms), and taking
candidates from them left LoCoMo retrieval where it was (hybrid Recall@10 0.770 both ways).

On disk, a generation holds a snapshot of both parts and a log of what changed since. A sync
appends its changes to the log (a few KB) instead of rewriting the snapshot, which grows with the
vault (about 55 MB at 10k memories, 0.54 GB at 100k since the stored part is float16; rewriting it took 80 ms per saved file at 10k
and made a save take 1.8 s to become searchable at 100k). When the log outgrows half the snapshot,
the snapshot is rewritten and the log starts over. Every open replays the log before it can answer, so the
owner also folds it in off the write path once it passes SETTLE_SHARE: after its reconcile, while idle (idle_fold.py)
and when it closes, within a time budget (`Index.settle_vectors`, `fold`: written beside searches and syncs). Each log record carries its length and a CRC:
a record torn by a crash is ignored (the manifest, written after the log, does not yet know
that change, so the next start indexes it again). Every record sets the state of the ids it names
whatever came before, so replaying a log over a newer snapshot gives that snapshot again.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
import time
import zlib
from pathlib import Path
from typing import Callable, Iterable, Sequence

import faiss
import numpy as np

from .arrays import sorted_contains, sorted_insert, sorted_remove
from .first_pass import SignCodes
from .stored_vectors import LentRows, StoredVectors, release_pages

# One thread: a single-query flat search is sub-millisecond on one core, while OpenMP's
# second thread on a busy 2-core machine made the same search 60x slower (measured).
faiss.omp_set_num_threads(1)

SEARCHED_FILE, STORED_FILE = "vectors.faiss", "units.f16"  # inside an index generation's folder
FAISS_STORED_FILE = "units.faiss"  # the stored part before it moved out of RAM: read once, then replaced
LOG_FILE = "vectors.log"  # changes since the two snapshots were written
COPY_SLICE = 4 << 20  # bytes of the searched part a fold copies per hold of the lock
FOLD_SUFFIX = ".fold.tmp"  # a fold's snapshot parts before they are renamed (not save()'s ".tmp": both may run at once)
COMPACT_SHARE = 0.5  # rewrite the snapshots when the log is larger than this share of them
# Past this share the log is folded in off the write path (`Index.settle_vectors`: after the owner's reconcile, and at
# its close): every open replays the log before it can answer, 1.3 CPU s for 112 MB at 100k memories, while the
# rewrite at COMPACT_SHARE waits inside a sync. 2% of the snapshot is ~10 MB at 100k, replayed in ~0.05 s.
SETTLE_SHARE = 0.02
PENDING_CAP = 32 << 20  # past this many bytes of unwritten changes (a build), a snapshot is due anyway
# The first pass (first_pass.py) pays past this many searched units: a flat scan of 20k chunks is a few
# ms, while the first pass and its exact re-scoring cost ~2 ms whatever the size (bench/vector_layer.py).
FIRST_PASS_ABOVE = 20_000
FIRST_PASS_MIN, FIRST_PASS_FACTOR = 2048, 20  # candidates the first pass keeps for an exact top k
FIRST_PASS_EXCLUDED_SHARE = 8  # past 1/8 of the searched units left out, a search scans the rest in full instead
_RECORD = struct.Struct("<II")  # payload length, CRC-32 of the payload
_COUNT = struct.Struct("<cI")  # b"A" (add) or b"R" (remove), number of ids


class VectorIndex:
    def __init__(self, dim: int, searched: faiss.Index | None = None, stored: StoredVectors | None = None) -> None:
        self.dim = dim
        self._searched = searched if searched is not None else _flat(dim)
        self._stored = stored if stored is not None else StoredVectors(dim)
        self._first_pass: SignCodes | None = None  # kept while the searched part is large (see _fit_first_pass)
        # The last full scan's filter of the units left out, and the array it was made of (held, so its identity is
        # not another's): a searcher passes the same array while its hidden memories stay the same (search).
        self._left_out: tuple[np.ndarray, faiss.IDSelectorBatch, faiss.IDSelectorNot, faiss.SearchParameters] | None = None
        # Which part holds a unit, sorted: reads look a unit up here, and a removal asks FAISS only for
        # ids it holds (its remove_ids scans the whole part: 170 ms at 100k memories, even for an id it lacks).
        self._searched_ids = _ascending(faiss.vector_to_array(self._searched.id_map))
        self._stored_ids = self._stored.ids()
        self._lock = threading.RLock()
        self._pending: list[bytes] = []  # log records of the changes not yet on disk
        self._pending_bytes = 0
        self._snapshot_due = False  # the changes outgrew PENDING_CAP: their records were dropped
        self._log_end = 0  # bytes of the log that hold whole records (a torn tail lies past it)
        # Bumped by every change and every snapshot written: a fold written beside them is kept only if none came.
        self._version = 0
        # time.monotonic() of the last change (an idle fold waits for quiet): an open is a change, not the machine's
        # boot, or an owner opened with a log folded at its first look, beside its open's own fold (review of s11)
        self.changed_at = time.monotonic()
        # One fold at a time: two wrote the same temp files, and the second's truncation left zeroed rows in the
        # snapshot the first put in place, its log removed (review of session 11). A second one is not waited for.
        self._folding = threading.Lock()

    @classmethod
    def load(cls, folder: Path, dim: int, owner: bool = False) -> "VectorIndex":
        """The snapshot, with the log's changes replayed over it (`owner`: by the process that alone changes the log)."""
        searched = _read_faiss(folder / SEARCHED_FILE, dim)
        if not (folder / STORED_FILE).exists() and (folder / FAISS_STORED_FILE).exists():
            # A generation written before the stored part left FAISS: its rows spill beside it, not in the temp
            # folder (a tmpfs there is RAM, and the rows are the vault's).
            loaded = cls(dim, searched, StoredVectors(dim, folder))
            old = _read_faiss(folder / FAISS_STORED_FILE, dim)
            ids = faiss.vector_to_array(old.id_map)
            loaded._insert(ids, np.zeros(len(ids), dtype=bool), np.empty((0, dim), dtype=np.float32),
                           old.index.reconstruct_n(0, old.ntotal))
            loaded._snapshot_due = True  # the next persist writes the new file
        else:
            loaded = cls(dim, searched, StoredVectors.open(folder / STORED_FILE, dim))
        loaded._replay(folder / LOG_FILE, owner)
        loaded._fit_first_pass()
        return loaded

    def save(self, folder: Path) -> None:
        """Write a new snapshot of both parts (each to a temp file, then renamed, so a crash never
        leaves a half-written file), then drop the log it includes. A crash before the log is gone
        replays it over the new snapshot, which gives the same state."""
        with self._lock:
            temp = folder / (SEARCHED_FILE + ".tmp")
            faiss.write_index(self._searched, str(temp))
            os.replace(temp, folder / SEARCHED_FILE)
            self._stored.write(folder / STORED_FILE)
            self._log_folded(folder)

    def _log_folded(self, folder: Path) -> None:
        """The new snapshot is in place: the log it includes goes last (the commit point of a save or fold)."""
        (folder / LOG_FILE).unlink(missing_ok=True)
        (folder / FAISS_STORED_FILE).unlink(missing_ok=True)
        self._forget_pending()
        self._log_end = 0
        self._version += 1

    def fold(self, folder: Path, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Write a new snapshot of both parts beside the searches and writes, then put it in place of the snapshot and
        its log (returns whether it did). Only slices of a copy of the searched part in memory hold the lock (FAISS
        changes in place); the files, with the stored part from a frozen view (`StoredVectors.frozen`), are written
        outside it. Abandoned, temp files removed and the log left as it was, when `cancelled` says so between two
        slices or when a change came meanwhile (the snapshot written would lack it, and its log record be lost).
        Each rename is safe alone, as in save(): the log goes last, and replayed over either snapshot it gives the
        same state."""
        if not self._folding.acquire(blocking=False):
            return False  # another fold is under way: it writes what this one would
        try:
            return self._fold(folder, cancelled)
        finally:
            self._folding.release()

    def retire(self) -> None:
        """This index is being replaced by another generation's: a fold under way gives up at its next slice."""
        with self._lock:
            self._version += 1

    def _fold(self, folder: Path, cancelled: Callable[[], bool]) -> bool:
        searched_temp, stored_temp = (folder / (name + FOLD_SUFFIX) for name in (SEARCHED_FILE, STORED_FILE))
        with self._lock:
            if self._pending or cancelled():
                return False  # a sync between its change and its persist: its own persist writes it
            version = self._version
            frozen = self._stored.frozen()

        def given_up() -> bool:
            return cancelled() or self._version != version

        try:
            searched = self._searched_copy(given_up)
            written = searched is not None
            if searched is not None:
                faiss.write_index(searched, str(searched_temp))
                del searched  # 154 MB at 100k memories: not held through the stored part's write
            written = written and not given_up() and frozen.write_rows(stored_temp, given_up)
        finally:
            frozen.close()
        replaced: list[int | None] = []
        old_stored: StoredVectors | None = None
        try:
            with self._lock:
                if not written or given_up():
                    searched_temp.unlink(missing_ok=True)
                    stored_temp.unlink(missing_ok=True)
                    return False
                # The replaced files stay open until the lock is let go: freeing their 0.6 GB of blocks at the
                # rename or unlink kept searches waiting 0.2 s at load 16.
                replaced = [_open_or_none(folder / name) for name in (SEARCHED_FILE, LOG_FILE)]
                old_stored = self._stored.frozen()
                os.replace(searched_temp, folder / SEARCHED_FILE)
                os.replace(stored_temp, folder / STORED_FILE)
                self._stored.reopen(folder / STORED_FILE)
                self._log_folded(folder)
            return True
        finally:
            if old_stored is not None:
                old_stored.close()
            for fd in replaced:
                if fd is not None:
                    os.close(fd)

    def _searched_copy(self, given_up: Callable[[], bool]) -> faiss.Index | None:
        """A copy of the searched part in memory (+154 MB at 100k memories, for a fold's length), taken a slice at a
        time, each under the lock: a search waits for one slice, not the whole (writing the file under the lock
        kept searches waiting 0.9 s at load 11, a clone 0.3-0.5 s). None when a change came meanwhile (given_up)."""
        with self._lock:
            ids, size = faiss.vector_to_array(self._searched.id_map), self._searched.ntotal * self.dim * 4
        copy = _flat(self.dim)
        flat = faiss.downcast_index(copy.index)
        flat.codes.resize(size)  # zeroed outside the lock: the page faults are most of a copy's time
        target = faiss.rev_swig_ptr(flat.codes.data(), size)
        for start in range(0, size, COPY_SLICE):
            with self._lock:
                if given_up():
                    return None
                # Looked up again each time: a change between two slices may have moved FAISS's array (given_up then).
                source = faiss.rev_swig_ptr(faiss.downcast_index(self._searched.index).codes.data(), size)
                target[start:start + COPY_SLICE] = source[start:start + COPY_SLICE]
        flat.ntotal = copy.ntotal = len(ids)
        faiss.copy_array_to_vector(ids, copy.id_map)
        copy.construct_rev_map()
        return copy

    def _log(self, payload: bytes) -> None:
        """Keep a change for the next persist (a build's worth of them only as "snapshot due")."""
        if self._snapshot_due:
            return
        record = _RECORD.pack(len(payload), zlib.crc32(payload)) + payload
        self._pending.append(record)
        self._pending_bytes += len(record)
        if self._pending_bytes > PENDING_CAP:
            self._forget_pending()
            self._snapshot_due = True

    def _changed(self) -> None:
        self._version += 1
        self.changed_at = time.monotonic()

    def _forget_pending(self) -> None:
        self._pending.clear()
        self._pending_bytes = 0
        self._snapshot_due = False

    def persist(self, folder: Path) -> None:
        """Put the changes made since the last persist on disk: appended to the log, or, once the log
        has outgrown its share of the snapshot, as a new snapshot."""
        with self._lock:
            if not self._pending and not self._snapshot_due:
                return
            snapshot = sum(_size(folder / name) for name in (SEARCHED_FILE, STORED_FILE))
            if self._snapshot_due or self._log_end + self._pending_bytes > COMPACT_SHARE * snapshot:
                self.save(folder)
                return
            with open(folder / LOG_FILE, "ab") as log:
                log.truncate(self._log_end)  # a tail torn by a crash: never replayed, so never kept
                log.write(b"".join(self._pending))
            self._log_end += self._pending_bytes
            self._forget_pending()

    def log_share(self, folder: Path) -> float:
        """The log's whole records with the changes not yet written, as a share of the snapshot's size (infinite
        when a snapshot is owed anyway: changes past PENDING_CAP, or a stored part still in its old file)."""
        with self._lock:
            if self._snapshot_due:
                return float("inf")
            snapshot = sum(_size(folder / name) for name in (SEARCHED_FILE, STORED_FILE))
            unsaved = self._log_end + self._pending_bytes
            return unsaved / snapshot if snapshot else float(unsaved > 0)

    def _replay(self, path: Path, owner: bool = False) -> None:
        """Apply the log's whole records. Each id ends in the state its last record gave it, so a long log costs one
        removal and one addition, not one per record. The records are read as arrays over the log's bytes, and only
        the rows that survive are copied once (a per-unit dict and one stack of every row made replaying a 112 MB log
        0.6-1.3 CPU s and +540 MB of peak at 100k memories, bench/results/s10-firstlog10.md); the owner's stored rows
        are not even copied (LentRows)."""
        if not owner:  # the owner may cut a torn tail off the log while a reader maps it, which would fault
            try:
                self._log_end = self._replay_records(path.read_bytes())
            except FileNotFoundError:
                pass
            return
        try:
            file = open(path, "rb")
        except FileNotFoundError:
            return
        with file:
            size = os.fstat(file.fileno()).st_size
            if not size:
                return
            # The owner maps it rather than reading it: the records are arrays over the file's pages and only the rows
            # that survive are copied (read whole, the 112 MB a killed 100k server left were copied first).
            data = mmap.mmap(file.fileno(), size, access=mmap.ACCESS_READ)
        # The stored rows that survive are lent, not copied (LentRows): the mapping lives as long as they do. The pages
        # the CRCs read leave the resident set until a read needs them again.
        self._log_end = self._replay_records(data, lend=data)
        release_pages(data)

    def _replay_records(self, data: bytes | mmap.mmap, lend: mmap.mmap | None = None) -> int:
        """Apply the whole records of a log's bytes; returns where they end. `_apply_last` copies the rows that
        survive, or with `lend` (the log mapped: `data`) keeps the stored ones where they lie."""
        records, offset = [], 0
        with memoryview(data) as view:
            while offset + _RECORD.size <= len(data):
                length, crc = _RECORD.unpack_from(data, offset)
                start = offset + _RECORD.size
                if start + length > len(data) or zlib.crc32(view[start:start + length]) != crc:
                    break  # torn by a crash: the manifest, written after the log, does not know this change
                records.append(_LogRecord.read(data, start, self.dim))
                offset = start + length
        if records:
            self._apply_last(records, lend)
        return offset

    def _apply_last(self, records: list["_LogRecord"], lend: mmap.mmap | None = None) -> None:
        """Set each id the records name to the state of its last record: removed, then added again if that
        record adds it, in the order of those last records (the order a live index, which appends each add, had).
        With `lend` (the mapped log), the stored part keeps its rows where the records lie (LentRows) and rounds them
        as it reads."""
        ids = np.concatenate([record.ids for record in records])
        starts = np.cumsum([0] + [len(record.ids) for record in records])
        _, from_end = np.unique(ids[::-1], return_index=True)
        last = np.sort(len(ids) - 1 - from_end)  # each id's last mention, in log order
        self._drop(ids[last])
        bounds = np.searchsorted(last, starts)
        added_ids, added_scanned, searched_rows, stored_rows = [], [], [], []
        for number, record in enumerate(records):
            if record.vectors is None or bounds[number] == bounds[number + 1]:
                continue
            places = last[bounds[number]:bounds[number + 1]] - starts[number]
            scanned = record.scanned[places]
            added_ids.append(record.ids[places])
            added_scanned.append(scanned)
            searched_rows.append(record.vectors[places[scanned]])
            stored_rows.append((record.vectors, places[~scanned]))
        if added_ids:
            lent = LentRows(self.dim, stored_rows, lend)
            self._insert(np.concatenate(added_ids), np.concatenate(added_scanned), np.concatenate(searched_rows),
                         lent if lend is not None else lent.copied())

    def close(self) -> None:
        """Let go of the stored part's file (a closed vault holds no descriptor into it)."""
        with self._lock:
            self._stored.close()
            self._version += 1  # a fold under way is not put in place

    def __len__(self) -> int:
        return int(self._searched.ntotal) + len(self._stored)

    def ids(self) -> set[int]:
        return set(self.sorted_ids().tolist())

    def sorted_ids(self) -> np.ndarray:
        """Every unit held, ascending (no set of Python ints: 530k units at 100k memories)."""
        with self._lock:
            return np.union1d(self._searched_ids, self._stored_ids)

    def add(self, ids: Iterable[int], vectors: np.ndarray, searched: Sequence[bool]) -> None:
        """Add (or replace) units; `searched` says, per unit, whether searches scan it or it is only read back."""
        id_array = np.fromiter(ids, dtype=np.int64)
        if len(id_array) == 0:
            return
        scanned = np.asarray(searched, dtype=bool)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with self._lock:
            self._log(_COUNT.pack(b"A", len(id_array)) + id_array.tobytes() + scanned.astype(np.uint8).tobytes()
                      + vectors.tobytes())
            self._changed()
            self._drop(id_array)  # FAISS accepts duplicate ids silently: always remove first
            self._insert(id_array, scanned, vectors[scanned], vectors[~scanned])
            self._fit_first_pass()

    def remove(self, ids: Iterable[int]) -> int:
        id_array = np.fromiter(ids, dtype=np.int64)
        if len(id_array) == 0:
            return 0
        with self._lock:
            self._log(_COUNT.pack(b"R", len(id_array)) + id_array.tobytes())
            self._changed()
            return self._drop(id_array)

    def _insert(self, ids: np.ndarray, scanned: np.ndarray, searched_rows: np.ndarray,
                stored_rows: "np.ndarray | LentRows") -> None:
        """Add units that are in neither part (callers drop them first); their rows come split by `scanned`, in the
        order of `ids`: the searched ones' and the stored ones'."""
        if scanned.any():
            self._searched.add_with_ids(np.ascontiguousarray(searched_rows, dtype=np.float32), ids[scanned])
            if self._first_pass is not None:
                self._first_pass.add(ids[scanned], searched_rows)
        if not scanned.all():
            self._stored.add(ids[~scanned], stored_rows)
        self._searched_ids = sorted_insert(self._searched_ids, ids[scanned])
        self._stored_ids = sorted_insert(self._stored_ids, ids[~scanned])

    def _drop(self, ids: np.ndarray) -> int:
        ids = np.unique(ids)
        removed = 0
        held_searched = ids[sorted_contains(self._searched_ids, ids)]
        if len(held_searched):
            removed += int(self._searched.remove_ids(held_searched))
            if self._first_pass is not None:
                self._first_pass.remove(held_searched)
            self._searched_ids = sorted_remove(self._searched_ids, held_searched)
        held_stored = ids[sorted_contains(self._stored_ids, ids)]
        if len(held_stored):
            self._stored.remove(held_stored)
            removed += len(held_stored)
            self._stored_ids = sorted_remove(self._stored_ids, held_stored)
        return removed

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
            # A unit still waiting for its vector (Index.backfill) is a row of zeros: cosine 0 to anything.
            stored = ~scanned & sorted_contains(self._stored_ids, ids)
            if scanned.any():
                out[scanned] = self._searched.reconstruct_batch(np.ascontiguousarray(ids[scanned]))
            if stored.any():
                out[stored] = self._stored.read(ids[stored])
        return out

    def search(self, query: np.ndarray, k: int, allowed: Iterable[int] | None = None,
               excluded: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top-k (unit id, cosine) pairs among the searched units; with `allowed`, only those ids compete, and none of
        `excluded` (sorted ids) does (filters before top-k)."""
        with self._lock:
            if self._searched.ntotal == 0 or k <= 0:
                return []
            if excluded is not None and not len(excluded):
                excluded = None
            params = None
            if allowed is not None:
                allowed_ids = np.fromiter(allowed, dtype=np.int64)
                if excluded is not None:
                    allowed_ids = allowed_ids[~sorted_contains(excluded, allowed_ids)]
                if len(allowed_ids) == 0:
                    return []
                params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed_ids))
            k = min(k, int(self._searched.ntotal))
            query = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
            few_left_out = excluded is None or len(excluded) <= self._searched.ntotal // FIRST_PASS_EXCLUDED_SHARE
            if params is None and self._first_pass is not None and few_left_out:
                # Exact scores of the first pass's candidates, by the same FAISS code as the full scan, so the
                # result is the full scan's whenever its top k are among the candidates (see first_pass). The units
                # left out (superseded memories: a vault has a few) widen the list by as many, then leave it: a
                # filter of every other unit skipped the first pass and scanned the whole index (100k memories).
                width = first_pass_width(k) + (0 if excluded is None else len(excluded))
                candidates = self._first_pass.candidates(query[0], width)
                if excluded is not None:
                    candidates = candidates[~sorted_contains(excluded, candidates)]
                params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(candidates))
            elif params is None and excluded is not None:
                params = self._scan_leaving_out(excluded)
            scores, ids = self._searched.search(query, k, params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0]) if i >= 0]


    def _scan_leaving_out(self, excluded: np.ndarray) -> faiss.SearchParameters:
        """A full scan's filter of every unit but `excluded`, kept for the next search given the same array: making
        FAISS's set of 50k memories' units cost each search ~30-60 ms (bench/results/s20-open20.md)."""
        kept = self._left_out
        if kept is not None and kept[0] is excluded:
            return kept[3]
        left_out = faiss.IDSelectorBatch(excluded)
        others = faiss.IDSelectorNot(left_out)
        params = faiss.SearchParameters(sel=others)
        self._left_out = (excluded, left_out, others, params)  # each referenced as long as the filter is
        return params

    def searched_order(self) -> np.ndarray:
        """The searched units' ids in FAISS's storage order. Among equal scores a search keeps the
        earliest stored and lists them latest first; a caller merging hits of its own must do the same."""
        with self._lock:
            return faiss.vector_to_array(self._searched.id_map)

    def search_many(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        """`search` for many queries in one FAISS call (a vault-wide neighbour pass at 10k would
        otherwise make 10k calls)."""
        with self._lock:
            if self._searched.ntotal == 0 or k <= 0 or len(queries) == 0:
                return [[] for _ in range(len(queries))]
            k = min(k, int(self._searched.ntotal))
            scores, ids = self._searched.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        return [[(int(i), float(s)) for i, s in zip(row_ids, row_scores) if i >= 0]
                for row_ids, row_scores in zip(ids, scores)]


    def _fit_first_pass(self) -> None:
        """Keep a first pass while the searched part is past FIRST_PASS_ABOVE units (built from the vectors
        it holds when it gets there); below, every search is the exact full scan."""
        large = self._searched.ntotal >= FIRST_PASS_ABOVE
        if large and self._first_pass is None:
            self._first_pass = SignCodes.of_index(self._searched, self.dim)
        elif not large and self._first_pass is not None and self._searched.ntotal < FIRST_PASS_ABOVE // 2:
            self._first_pass = None  # hysteresis: a vault hovering at the threshold does not rebuild it each sync


class _LogRecord:
    """One whole record of the log, as arrays over the log's bytes (nothing copied): the ids it names, and for an
    addition whether each is searched and its float32 row."""

    def __init__(self, ids: np.ndarray, scanned: np.ndarray | None, vectors: np.ndarray | None) -> None:
        self.ids, self.scanned, self.vectors = ids, scanned, vectors

    @classmethod
    def read(cls, data: bytes, start: int, dim: int) -> "_LogRecord":
        kind, count = _COUNT.unpack_from(data, start)
        ids = np.frombuffer(data, dtype=np.int64, count=count, offset=start + _COUNT.size)
        if kind == b"R":
            return cls(ids, None, None)
        flags = start + _COUNT.size + 8 * count
        scanned = np.frombuffer(data, dtype=np.uint8, count=count, offset=flags).astype(bool)
        vectors = np.frombuffer(data, dtype=np.float32, count=count * dim, offset=flags + count).reshape(count, dim)
        return cls(ids, scanned, vectors)


def _flat(dim: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def first_pass_width(k: int) -> int:
    return max(FIRST_PASS_MIN, FIRST_PASS_FACTOR * k)


def _read_faiss(path: Path, dim: int) -> faiss.Index:
    index = faiss.read_index(str(path))
    if index.d != dim:
        raise ValueError(f"{path} holds {index.d}-dimensional vectors, expected {dim}")
    return index


def _open_or_none(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _ascending(ids: np.ndarray) -> np.ndarray:
    """The distinct ids, ascending: a sort (FAISS holds each id once), np.unique's hashing only if one repeats."""
    ordered = np.sort(ids)
    return np.unique(ordered) if len(ordered) > 1 and bool(np.any(ordered[1:] == ordered[:-1])) else ordered
