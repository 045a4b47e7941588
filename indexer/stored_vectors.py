"""The stored units' vectors (sentence and neighbour units): float16 rows in a file, read back by id.

These units are never scanned; a search reads back the few hundred of its candidates' units by id
to score them. Held in FAISS they were 5/6 of the vault's vectors in RAM (0.77 GB at 100k memories,
float32). Here the snapshot is a file, and a read fetches only its rows (one pread each): the process
holds the sorted ids (8 bytes a unit); the rows searches read stay in the kernel's page cache, shared
and reclaimable. Tried and dropped (bench/vector_layer.py at 100k): mapping the file. Every page a
search touched stayed in the process's resident set, and a fault maps the whole cached folio around
the row (5,000 rows read put 384 MB of the 389 MB file there); releasing the pages with madvise
(DONTNEED) every 512 rows bounded that, but the re-faults made a 300-row read 42 ms instead of ~1.

float16 keeps a unit vector's components to within 2^-11 of their value (cosine within 1e-4);
rows are rounded to float16 as they are added, so what a search reads is the same before and after
a reload, and an incremental index equals a rebuild.

File layout (one file, replaced whole by a rename, so a crash leaves the old one or the new one):
    magic (8 bytes) | count (uint64) | dim (uint64) | ids (int64 x count, ascending) | rows (float16 x count x dim)
Rows added since the snapshot (and, for crash safety, VectorIndex's log) wait for the next snapshot to
fold them in. They are appended to a scratch file beside the snapshot, not held in RAM: a build adds a
vault's worth of them before its snapshot (411 MB of float16 rows at 100k memories, 384 dimensions, held
in RAM to the build's end, bench/results/scale.md, issue 32 item 1). The file has no name (O_TMPFILE where the file
system allows it, else unlinked at once), so a crash leaves nothing behind; the log, not this file, is what
a reload replays. Its pages sit in the kernel's page cache, reclaimable, like the snapshot's.
The rows the owner's open replays from the log are not copied there: they stay where they are, float32 in the
mapped log (`LentRows`), and are rounded to float16 as they are read. Rounding and writing them was 0.3 of a
cold open's CPU seconds after a killed server at 100k memories (64k rows, bench/results/s15-cold15.md).
"""

from __future__ import annotations

import mmap
import os
import struct
import tempfile
import weakref
from pathlib import Path
from typing import Callable

import numpy as np

MAGIC = b"MDVEC16\x00"
_HEADER = struct.Struct("<8sQQ")
_SLICE = 16384  # rows written at a time


class StoredVectors:
    def __init__(self, dim: int, folder: Path | None = None) -> None:
        """An empty store; rows added go to a scratch file in `folder` (the generation's; None: the temp folder)."""
        self.dim = dim
        self._row_bytes = 2 * dim
        self._fd = -1  # the snapshot, open for reads: a writer's later rename never changes what it reads
        self._closer: weakref.finalize | None = None
        self._rows_at = 0  # byte offset of its first row
        self._base_ids = np.zeros(0, dtype=np.int64)  # the snapshot's ids, ascending
        self._base_live = np.zeros(0, dtype=bool)  # False once removed since the snapshot
        self._new_ids = np.zeros(0, dtype=np.int64)  # units added since, in the order they came (rows alike)
        self._new_live = np.zeros(0, dtype=bool)
        self._new_rows = _Spill(dim, folder)
        self._lookup: tuple[np.ndarray, np.ndarray] | None = None  # live added ids ascending, their positions
        self._count = 0

    @classmethod
    def open(cls, path: Path, dim: int) -> "StoredVectors":
        """Open a snapshot; a file of the wrong size or order is damaged (ValueError), never half read."""
        store = cls(dim)
        store._open(path)
        return store

    def _open(self, path: Path) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            head = os.pread(fd, _HEADER.size, 0)
            if len(head) < _HEADER.size:
                raise ValueError(f"{path}: truncated header")
            magic, count, dim = _HEADER.unpack(head)
            if magic != MAGIC or dim != self.dim:
                raise ValueError(f"{path}: not a {self.dim}-dimensional vector file")
            if size != _HEADER.size + count * (8 + self._row_bytes):
                raise ValueError(f"{path}: {size} bytes where {count} vectors need "
                                 f"{_HEADER.size + count * (8 + self._row_bytes)}")
            ids = np.frombuffer(os.pread(fd, 8 * count, _HEADER.size), dtype=np.int64).copy()
            if count > 1 and not (np.diff(ids) > 0).all():
                raise ValueError(f"{path}: ids out of order")
        except BaseException:
            os.close(fd)
            raise
        self.close()
        self._fd, self._rows_at = fd, _HEADER.size + 8 * int(count)
        self._closer = weakref.finalize(self, os.close, fd)  # also when the index is dropped unclosed
        self._base_ids, self._base_live = ids, np.ones(int(count), dtype=bool)
        self._new_ids, self._new_live = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        self._new_rows, self._lookup = _Spill(self.dim, path.parent), None  # beside the snapshot
        self._count = int(count)

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
            self._closer, self._fd = None, -1
        self._new_rows.close()

    def __len__(self) -> int:
        return self._count

    def ids(self) -> np.ndarray:
        """Every unit held, ascending."""
        base = self._base_ids[self._base_live]
        if not len(self._new_ids) and bool(np.all(base[1:] > base[:-1])):  # as a snapshot writes them: 0.4 s less
            # of a cold open at 530k units than sorting them again (bench/results/first-answer.md, issue 32 item 5)
            return base
        return np.union1d(base, self._new_ids[self._new_live])

    def add(self, ids: np.ndarray, vectors: "np.ndarray | LentRows") -> None:
        """Add units held nowhere yet (the caller removes a unit before adding it again); `vectors` float16 rows, or
        rows lent where they lie (kept so only by a store that has no added rows yet, else copied)."""
        if len(ids):
            self._new_rows.append(vectors)  # first: a full disk leaves the store as it was
            self._new_ids = np.concatenate([self._new_ids, np.asarray(ids, dtype=np.int64)])
            self._new_live = np.concatenate([self._new_live, np.ones(len(ids), dtype=bool)])
            self._lookup = None
            self._count += len(ids)

    def remove(self, ids: np.ndarray) -> None:
        """Remove units that are held (the caller knows which)."""
        if not len(ids):
            return
        place = _positions(self._base_ids, ids)
        in_base = place >= 0
        in_base[in_base] = self._base_live[place[in_base]]
        self._base_live[place[in_base]] = False
        rest = ids[~in_base]
        if len(rest):
            sorted_ids, positions = self._added()
            self._new_live[positions[_positions(sorted_ids, rest)]] = False
            self._lookup = None
        self._count -= len(ids)

    def read(self, ids: np.ndarray) -> np.ndarray:
        """float32 rows of held units, in the order asked."""
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        sorted_ids, positions = self._added()
        in_new = _positions(sorted_ids, ids)
        found = in_new >= 0
        if found.any():
            out[found] = self._new_rows.take(positions[in_new[found]])
        if not found.all():
            place = _positions(self._base_ids, ids[~found])
            if (place < 0).any():
                raise KeyError(f"units not stored: {ids[~found][place < 0][:5].tolist()}")
            out[~found] = self._base_take(place)  # float16, widened as it is copied in: no float32 copy between
        return out

    def write(self, path: Path) -> None:
        """Write every held unit as a new snapshot (temp file, fsync, rename), then read from it."""
        temp = path.with_name(path.name + ".tmp")
        self.write_rows(temp)
        os.replace(temp, path)
        self._open(path)

    def write_rows(self, temp: Path, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Write every held unit to `temp` as a snapshot file, synced to disk; False (and no file) when `cancelled`
        said so between two slices of rows."""
        base = np.flatnonzero(self._base_live)
        new = np.flatnonzero(self._new_live)
        ids = np.concatenate([self._base_ids[base], self._new_ids[new]])
        order = np.argsort(ids, kind="stable")
        with open(temp, "wb") as file:
            file.write(_HEADER.pack(MAGIC, len(ids), self.dim))
            file.write(ids[order].tobytes())
            for start in range(0, len(order), _SLICE):  # bounded copies: the rows never sit in RAM whole
                if cancelled():
                    break
                part = order[start:start + _SLICE]
                from_base = part < len(base)
                rows = np.empty((len(part), self.dim), dtype=np.float16)
                rows[from_base] = self._base_take(base[part[from_base]])
                rows[~from_base] = self._new_rows.take(new[part[~from_base] - len(base)])
                file.write(rows.tobytes())
            else:
                file.flush()
                os.fsync(file.fileno())
                return True
        temp.unlink(missing_ok=True)
        return False

    def frozen(self) -> "StoredVectors":
        """This store as it is now, which its later changes leave alone: for writing a snapshot beside them
        (VectorIndex.fold). Its own descriptors on the same files: a snapshot file is never changed in place, and
        the added rows' file is only appended to. Close it after use."""
        copy = StoredVectors(self.dim)
        copy._fd = os.dup(self._fd) if self._fd >= 0 else -1
        if copy._fd >= 0:
            copy._closer = weakref.finalize(copy, os.close, copy._fd)
        copy._rows_at, copy._base_ids, copy._base_live = self._rows_at, self._base_ids, self._base_live.copy()
        copy._new_ids, copy._new_live = self._new_ids, self._new_live.copy()  # ids are replaced whole, never changed
        copy._new_rows, copy._count = self._new_rows.frozen(), self._count
        return copy

    def reopen(self, path: Path) -> None:
        """Read from this snapshot from now on: a file that holds exactly what this store holds."""
        self._open(path)

    def _added(self) -> tuple[np.ndarray, np.ndarray]:
        """The live units added since the snapshot: ids ascending, and where each one's row is."""
        if self._lookup is None:
            positions = np.flatnonzero(self._new_live)
            order = np.argsort(self._new_ids[positions], kind="stable")
            self._lookup = (self._new_ids[positions][order], positions[order])
        return self._lookup

    def _base_take(self, places: np.ndarray) -> np.ndarray:
        """float16 rows of the snapshot at these places (read-only): one read for a dense ascending run (a snapshot's
        rewrite), else one pread a row (a search's few hundred)."""
        if not len(places):
            return np.zeros((0, self.dim), dtype=np.float16)
        fd, size = self._fd, self._row_bytes
        low, high = int(places.min()), int(places.max()) + 1
        if high - low <= 2 * len(places):
            block = os.pread(fd, (high - low) * size, self._rows_at + low * size)
            rows = np.frombuffer(block, dtype=np.float16).reshape(high - low, self.dim)[places - low]
        else:
            block = b"".join([os.pread(fd, size, self._rows_at + place * size) for place in places.tolist()])
            rows = np.frombuffer(block, dtype=np.float16).reshape(len(places), self.dim)
        return rows


class LentRows:
    """Rows left where they lie, float32 (arrays over the owner's mapped log): parts of arrays, the chosen rows of
    each, in order. Read back rounded to float16, the value a copy into the scratch file would have held. The arrays
    keep the mapping alive; the owner only ever appends to its log or cuts a torn tail past the rows it replayed, and
    a fold unlinks the file (a mapping outlives that), so the pages under them stay as they were. With `mapping` (the
    mmap under the arrays), the pages a read touched leave the process's resident set after it (still in the page
    cache): a fold reads every row, and the mapping would otherwise keep them resident as the spill's preads do not."""

    def __init__(self, dim: int, parts: list[tuple[np.ndarray, np.ndarray]], mapping: mmap.mmap | None = None) -> None:
        self.dim = dim
        self._mapping = mapping
        self._arrays = [array for array, _ in parts]
        self._chosen = [chosen for _, chosen in parts]
        self._starts = np.cumsum([0] + [len(chosen) for chosen in self._chosen])

    def __len__(self) -> int:
        return int(self._starts[-1])

    def take(self, positions: np.ndarray) -> np.ndarray:
        out = np.empty((len(positions), self.dim), dtype=np.float16)
        part = np.searchsorted(self._starts, positions, side="right") - 1
        for number in np.unique(part).tolist():
            here = part == number
            out[here] = self._arrays[number][self._chosen[number][positions[here] - self._starts[number]]]
        if self._mapping is not None:
            release_pages(self._mapping)
        return out

    def copied(self) -> np.ndarray:
        return self.take(np.arange(len(self)))


class _Spill:
    """Rows appended to a nameless scratch file in `folder` (made with the first row), read back by position.
    Reads are preads, as the snapshot's: one read for a dense run of positions, else one a row. Rows lent to an empty
    spill (`LentRows`, the owner's replayed log) are its first positions and are not written."""

    def __init__(self, dim: int, folder: Path | None) -> None:
        self.dim = dim
        self._row_bytes = 2 * dim
        self._folder = folder
        self._fd = -1
        self._closer: weakref.finalize | None = None
        self._count = 0
        self._lent: LentRows | None = None  # positions 0..len-1 when set; the file holds the positions after them
        self._lent_count = 0

    def append(self, rows: "np.ndarray | LentRows") -> None:
        if not len(rows):
            return
        if isinstance(rows, LentRows):
            if not self._count:
                self._lent, self._lent_count, self._count = rows, len(rows), len(rows)
                return
            rows = rows.copied()
        if self._closer is None:
            self._fd = _scratch(self._folder)
            self._closer = weakref.finalize(self, os.close, self._fd)  # also when the store is dropped unclosed
        data = memoryview(np.ascontiguousarray(rows, dtype=np.float16)).cast("B")  # no copy of the rows' bytes
        at, written = (self._count - self._lent_count) * self._row_bytes, 0
        while written < len(data):
            written += os.pwrite(self._fd, data[written:], at + written)
        self._count += len(rows)  # after the write: a full disk leaves the count as it was

    def take(self, positions: np.ndarray) -> np.ndarray:
        if self._lent is not None:
            lent = positions < self._lent_count
            if lent.any():
                out = np.empty((len(positions), self.dim), dtype=np.float16)
                out[lent] = self._lent.take(positions[lent])
                out[~lent] = self._written(positions[~lent] - self._lent_count)
                return out
            positions = positions - self._lent_count
        return self._written(positions)

    def _written(self, positions: np.ndarray) -> np.ndarray:
        if not len(positions):
            return np.zeros((0, self.dim), dtype=np.float16)
        size = self._row_bytes
        low, high = int(positions.min()), int(positions.max()) + 1
        if high - low <= 2 * len(positions):
            block = os.pread(self._fd, (high - low) * size, low * size)
            return np.frombuffer(block, dtype=np.float16).reshape(high - low, self.dim)[positions - low]
        block = b"".join([os.pread(self._fd, size, place * size) for place in positions.tolist()])
        return np.frombuffer(block, dtype=np.float16).reshape(len(positions), self.dim)

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
            self._closer, self._fd = None, -1
        self._count = 0
        self._lent, self._lent_count = None, 0  # the mapping under them goes with the last array over it

    def frozen(self) -> "_Spill":
        """The rows appended so far, on a descriptor of its own (later appends and a close leave them be)."""
        copy = _Spill(self.dim, self._folder)
        if self._closer is not None:
            copy._fd = os.dup(self._fd)
            copy._closer = weakref.finalize(copy, os.close, copy._fd)
        copy._count, copy._lent, copy._lent_count = self._count, self._lent, self._lent_count  # lent rows never change
        return copy


def release_pages(mapping: mmap.mmap) -> None:
    """Let a read-only file mapping's pages leave the process's resident set (they stay in the page cache and are
    read again on demand)."""
    if hasattr(mmap, "MADV_DONTNEED"):
        mapping.madvise(mmap.MADV_DONTNEED)


def _scratch(folder: Path | None) -> int:
    """A file descriptor of a new file with no name in `folder` (the system's temp folder if None)."""
    where = str(folder) if folder is not None else tempfile.gettempdir()
    try:
        return os.open(where, os.O_TMPFILE | os.O_RDWR, 0o600)
    except (AttributeError, OSError):  # not Linux, or a file system without O_TMPFILE: named, then unlinked
        fd, name = tempfile.mkstemp(dir=where, prefix="units-added-")
        os.unlink(name)
        return fd


def _positions(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Each needle's index in `haystack` (ascending), -1 where absent."""
    if not len(haystack):
        return np.full(len(needles), -1, dtype=np.int64)
    place = np.minimum(np.searchsorted(haystack, needles), len(haystack) - 1)
    return np.where(haystack[place] == needles, place, -1)
