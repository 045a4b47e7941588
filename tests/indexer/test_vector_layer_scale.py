"""The vector layer at scale: stored units stay in a float16 file read back by id, and a large searched
part is searched through a sign-code first pass whose candidates are scored exactly."""

from __future__ import annotations

import os

import subprocess
import sys
from pathlib import Path

import faiss
import numpy as np
import pytest

import indexer.vectors as vectors_module
from indexer.vectors import FAISS_STORED_FILE, STORED_FILE, VectorIndex


def _units(count: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _all_searched(vectors: np.ndarray) -> VectorIndex:
    """An index whose units are these vectors, ids 0.., every one scanned by a search."""
    index = VectorIndex(vectors.shape[1])
    index.add(np.arange(len(vectors)), vectors, [True] * len(vectors))
    return index


def _hits(index: VectorIndex, queries: np.ndarray, k: int, allowed=None) -> list[list[int]]:
    return [[u for u, _ in index.search(q, k, allowed)] for q in queries]


def test_opening_a_snapshot_reads_the_stored_units_ids_and_leaves_their_vectors_on_disk(tmp_path: Path):
    index = VectorIndex(256)
    index.add(np.arange(1, 40_001), _units(40_000, 256, 1), [False] * 40_000)
    index.save(tmp_path)
    rows_bytes = 40_000 * 256 * 2
    grew = subprocess.run([sys.executable, "-c", _LOAD_IN_A_FRESH_PROCESS, str(tmp_path)], capture_output=True,
                          text=True, check=True, timeout=120).stdout
    assert int(grew) < rows_bytes / 4  # the ids (8 bytes a unit) are read; the 20 MB of rows are not
    loaded = VectorIndex.load(tmp_path, 256)
    asked = np.array([17, 39_999, 3], dtype=np.int64)
    assert np.allclose(loaded.vectors(asked), _units(40_000, 256, 1)[asked - 1], rtol=0, atol=1e-3)


_READ_EVERY_ROW = """
import sys
import numpy as np
from pathlib import Path
from indexer.vectors import VectorIndex

def mapped_resident():  # bytes of mapped files' pages in this process's resident set
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("RssFile:")).split()[1]) * 1024

index = VectorIndex.load(Path(sys.argv[1]), 256)
ids = np.random.default_rng(0).permutation(np.arange(1, 40_001))
before = mapped_resident()  # (the first read also pages in a few MB of library code)
for start in range(0, 40_000, 250):  # as searches do: a few hundred units at a time, by id
    index.vectors(ids[start:start + 250])
print(mapped_resident() - before)
"""

_LOAD_IN_A_FRESH_PROCESS = """
import sys
from pathlib import Path
from indexer.vectors import VectorIndex

def private_resident():  # bytes of private memory in RAM; pages of a mapped file are not counted
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("RssAnon:")).split()[1]) * 1024

before = private_resident()
index = VectorIndex.load(Path(sys.argv[1]), 256)
print(private_resident() - before)
"""


def test_rows_read_back_do_not_pile_up_in_the_resident_set(tmp_path: Path):
    index = VectorIndex(256)
    index.add(np.arange(1, 40_001), _units(40_000, 256, 1), [False] * 40_000)
    index.save(tmp_path)  # 20 MB of rows
    grew = subprocess.run([sys.executable, "-c", _READ_EVERY_ROW, str(tmp_path)], capture_output=True,
                          text=True, check=True, timeout=120).stdout
    assert int(grew) < 40_000 * 256 * 2 / 2


def test_a_reader_keeps_reading_its_snapshot_after_a_writer_replaced_the_file(tmp_path: Path):
    vectors = _units(6, 8, 11)
    writer = VectorIndex(8)
    writer.add([1, 2, 3], vectors[:3], [False] * 3)
    writer.save(tmp_path)
    reader = VectorIndex.load(tmp_path, 8)
    writer.add([0, 4, 5], vectors[3:], [False] * 3)  # ids sorting before and after: every row moves
    writer.save(tmp_path)
    assert np.allclose(reader.vectors(np.array([3, 1], dtype=np.int64)), vectors[[2, 0]], atol=1e-3)


def test_a_truncated_stored_file_is_refused_on_load(tmp_path: Path):
    index = VectorIndex(8)
    index.add([1, 2, 3], _units(3, 8, 2), [True, False, False])
    index.save(tmp_path)
    stored = tmp_path / STORED_FILE
    stored.write_bytes(stored.read_bytes()[:-5])
    with pytest.raises(ValueError, match="bytes where 2 vectors need"):
        VectorIndex.load(tmp_path, 8)


def test_a_generation_with_the_stored_part_in_faiss_still_loads_and_its_next_persist_moves_it(tmp_path: Path):
    vectors = _units(4, 8, 3)
    searched = faiss.IndexIDMap2(faiss.IndexFlatIP(8))
    searched.add_with_ids(vectors[:1], np.array([1], dtype=np.int64))
    old = faiss.IndexIDMap2(faiss.IndexFlatIP(8))
    old.add_with_ids(vectors[1:], np.array([2, 3, 4], dtype=np.int64))
    faiss.write_index(searched, str(tmp_path / "vectors.faiss"))
    faiss.write_index(old, str(tmp_path / FAISS_STORED_FILE))
    loaded = VectorIndex.load(tmp_path, 8)
    assert loaded.ids() == {1, 2, 3, 4}
    assert np.allclose(loaded.vectors(np.array([3, 4], dtype=np.int64)), vectors[2:], atol=1e-3)
    # Its old rows wait for that persist in a scratch file beside the generation, not in the temp folder (a tmpfs is RAM)
    opened = []
    for fd in os.listdir("/proc/self/fd") if Path("/proc/self/fd").is_dir() else ():  # Linux: what each descriptor is
        try:
            opened.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue  # the listing's own descriptor, closed
    assert not Path("/proc/self/fd").is_dir() or any(link.startswith(str(tmp_path / "#")) or link.startswith(str(tmp_path / "units-added")) for link in opened), opened
    loaded.persist(tmp_path)
    assert (tmp_path / STORED_FILE).exists() and not (tmp_path / FAISS_STORED_FILE).exists()
    assert VectorIndex.load(tmp_path, 8).ids() == {1, 2, 3, 4}


def test_a_large_searched_part_finds_what_the_full_scan_finds(monkeypatch: pytest.MonkeyPatch):
    vectors, queries = _units(3000, 32, 4), _units(40, 32, 5)
    exact = _all_searched(vectors)
    monkeypatch.setattr(vectors_module, "FIRST_PASS_ABOVE", 1000)
    fast = VectorIndex(32)
    for start in range(0, 3000, 500):  # crosses the threshold partway, then keeps the pass in step
        fast.add(np.arange(start, start + 500), vectors[start:start + 500], [True] * 500)
    fast.remove(range(0, 3000, 7))
    exact.remove(range(0, 3000, 7))
    assert _hits(fast, queries, 10) == _hits(exact, queries, 10)
    assert [fast.search(q, 5) for q in queries] == [exact.search(q, 5) for q in queries]  # same exact scores
    allowed = list(range(1, 3000, 3))
    assert _hits(fast, queries, 10, allowed) == _hits(exact, queries, 10, allowed)
    # the pass is really in use: allowed far fewer candidates than the full scan's top k needs, it misses some
    monkeypatch.setattr(vectors_module, "FIRST_PASS_MIN", 12)
    monkeypatch.setattr(vectors_module, "FIRST_PASS_FACTOR", 1)
    assert _hits(fast, queries, 10) != _hits(exact, queries, 10)


def test_units_left_out_of_a_large_searched_part_are_found_through_the_first_pass(monkeypatch: pytest.MonkeyPatch):
    vectors, queries = _units(3000, 32, 11), _units(40, 32, 12)
    exact = _all_searched(vectors)
    monkeypatch.setattr(vectors_module, "FIRST_PASS_ABOVE", 1000)
    fast = _all_searched(vectors)
    # The units of superseded memories: every query's own best units among them, so the filter has work to do
    excluded = np.unique(np.concatenate([np.argsort(-(queries @ vectors.T), axis=1)[:, :3].ravel(),
                                         np.arange(0, 3000, 50)])).astype(np.int64)
    left_out = set(excluded.tolist())
    kept = [u for u in range(3000) if u not in left_out]
    truth = [[u for u, _ in exact.search(q, 10, kept)] for q in queries]
    assert [[u for u, _ in exact.search(q, 10, None, excluded)] for q in queries] == truth  # the full scan's filter
    assert [[u for u, _ in fast.search(q, 10, None, excluded)] for q in queries] == truth
    # and it is the first pass that found them: too narrow a pass misses some, as an unfiltered search would
    monkeypatch.setattr(vectors_module, "FIRST_PASS_MIN", 12)
    monkeypatch.setattr(vectors_module, "FIRST_PASS_FACTOR", 1)
    assert [[u for u, _ in fast.search(q, 10, None, excluded)] for q in queries] != truth
    # past an eighth of the index left out, the rest is scanned in full, whatever the pass's width
    many = np.arange(0, 3000, 2, dtype=np.int64)
    assert ([[u for u, _ in fast.search(q, 10, None, many)] for q in queries]
            == [[u for u, _ in exact.search(q, 10, range(1, 3000, 2))] for q in queries])


def test_a_small_searched_part_is_always_scanned_in_full(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(vectors_module, "FIRST_PASS_MIN", 1)
    monkeypatch.setattr(vectors_module, "FIRST_PASS_FACTOR", 1)
    vectors, queries = _units(500, 32, 6), _units(20, 32, 7)
    index = VectorIndex(32)
    index.add(np.arange(500), vectors, [True] * 500)
    truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    assert _hits(index, queries, 10) == truth.tolist()


def test_the_first_pass_is_rebuilt_on_load_of_a_large_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(vectors_module, "FIRST_PASS_ABOVE", 1000)
    vectors, queries = _units(2000, 32, 8), _units(20, 32, 9)
    index = VectorIndex(32)
    index.add(np.arange(2000), vectors, [True] * 2000)
    index.save(tmp_path)
    index.add([5000], _units(1, 32, 10), [True])
    index.persist(tmp_path)  # in the log, replayed on load
    loaded = VectorIndex.load(tmp_path, 32)
    monkeypatch.setattr(vectors_module, "FIRST_PASS_MIN", 12)
    monkeypatch.setattr(vectors_module, "FIRST_PASS_FACTOR", 1)
    assert _hits(loaded, queries, 10) == _hits(index, queries, 10)  # same codes, so the same candidates


def test_the_full_scans_filter_of_the_units_left_out_is_made_once_per_set_and_answers_as_a_new_one(
        monkeypatch: pytest.MonkeyPatch):
    """Many units left out (50k memories leaving at 100k): FAISS's set of them is kept for the next search given the
    same array, also across changes to the index, and made again for another array."""
    vectors, queries, added = _units(1200, 32, 13), _units(15, 32, 14), _units(100, 32, 15)
    index = _all_searched(vectors)
    made: list[int] = []
    real = faiss.IDSelectorBatch
    monkeypatch.setattr(faiss, "IDSelectorBatch", lambda ids: made.append(len(ids)) or real(ids))
    many = np.arange(0, 1200, 2, dtype=np.int64)
    other = np.arange(1, 1200, 3, dtype=np.int64)

    def truth(left_out: np.ndarray, units: int) -> list[list[int]]:
        scores = queries @ np.concatenate([vectors, added])[:units].T
        scores[:, left_out] = -np.inf
        return np.argsort(-scores, axis=1, kind="stable")[:, :10].tolist()

    assert [[u for u, _ in index.search(q, 10, None, many)] for q in queries] == truth(many, 1200)
    assert made.count(len(many)) == 1
    index.add(np.arange(1200, 1300), added, [True] * 100)  # a change: the same units stay left out
    assert [[u for u, _ in index.search(q, 10, None, many)] for q in queries] == truth(many, 1300)
    assert made.count(len(many)) == 1
    assert [[u for u, _ in index.search(q, 10, None, other)] for q in queries] == truth(other, 1300)
    copied = many.copy()
    assert [[u for u, _ in index.search(q, 10, None, copied)] for q in queries] == truth(many, 1300)
    assert made.count(len(many)) == 2 and made.count(len(other)) == 1  # another array: a filter of its own


def test_the_first_pass_built_from_a_flat_index_holds_the_codes_of_its_vectors_slice_by_slice(
        monkeypatch: pytest.MonkeyPatch):
    """Read from a view of the index's storage, a slice at a time (no copies of the vectors): the same codes and ids,
    in the same order, as the vectors added to a first pass directly, after removals too."""
    from indexer import first_pass

    monkeypatch.setattr(first_pass, "_SLICE", 7)
    vectors = _units(60, 40, 11)
    flat = faiss.IndexIDMap2(faiss.IndexFlatIP(40))
    flat.add_with_ids(vectors, np.arange(100, 160, dtype=np.int64))
    flat.remove_ids(np.array([100, 133, 159], dtype=np.int64))
    built = first_pass.SignCodes.of_index(flat, 40)
    kept = np.array([i for i in range(100, 160) if i not in (100, 133, 159)], dtype=np.int64)
    direct = first_pass.SignCodes(40)
    direct.add(kept, vectors[kept - 100])
    for codes in (built, direct):
        assert len(codes) == 57
    assert np.array_equal(faiss.vector_to_array(built._flat.xb), faiss.vector_to_array(direct._flat.xb))
    assert np.array_equal(faiss.vector_to_array(built._codes.id_map), faiss.vector_to_array(direct._codes.id_map))
    assert len(first_pass.SignCodes.of_index(faiss.IndexIDMap2(faiss.IndexFlatIP(40)), 40)) == 0
