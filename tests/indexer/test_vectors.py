"""The vector index: searches scan chunk vectors, every unit's vector reads back, both parts survive a reload."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexer.vectors import VectorIndex


def _unit(dim: int, axis: int, tilt: float = 0.0) -> np.ndarray:
    vector = np.zeros(dim, dtype=np.float32)
    vector[axis] = 1.0
    vector[(axis + 1) % dim] = tilt
    return vector / np.linalg.norm(vector)


def _filled(dim: int = 8) -> VectorIndex:
    index = VectorIndex(dim)
    # ids 1-3 are whole chunks (searched), 11-12 sentence units of chunk 1 (only read back)
    index.add([1, 2, 3, 11, 12], np.stack([_unit(dim, 0), _unit(dim, 2), _unit(dim, 4), _unit(dim, 6), _unit(dim, 0, 0.1)]),
              [True, True, True, False, False])
    return index


def test_a_search_finds_chunk_vectors_and_never_a_stored_unit():
    index = _filled()
    hits = index.search(_unit(8, 6), 10)
    assert {unit for unit, _ in hits} == {1, 2, 3}
    assert index.search(_unit(8, 0), 1)[0][0] == 1


def test_every_units_vector_reads_back_in_the_order_asked():
    index = _filled()
    rows = index.vectors(np.array([12, 1, 11, 3], dtype=np.int64))
    assert np.allclose(rows, np.stack([_unit(8, 0, 0.1), _unit(8, 0), _unit(8, 6), _unit(8, 4)]))
    assert np.allclose(index.vector(11), _unit(8, 6)) and index.ids() == {1, 2, 3, 11, 12} and len(index) == 5


def test_re_adding_a_unit_replaces_it_and_removing_takes_it_from_its_part():
    index = _filled()
    index.add([11, 2], np.stack([_unit(8, 3), _unit(8, 5)]), [False, True])
    assert len(index) == 5 and np.allclose(index.vector(11), _unit(8, 3))
    assert index.search(_unit(8, 5), 1)[0][0] == 2
    assert index.remove([2, 11, 99]) == 2
    assert index.ids() == {1, 3, 12} and {u for u, _ in index.search(_unit(8, 2), 10)} == {1, 3}


def test_a_filter_restricts_the_search_before_top_k():
    assert [u for u, _ in _filled().search(_unit(8, 0), 1, allowed=[3, 11])] == [3]


def test_both_parts_survive_a_save_and_load(tmp_path: Path):
    _filled().save(tmp_path)
    loaded = VectorIndex.load(tmp_path, 8)
    assert loaded.ids() == {1, 2, 3, 11, 12}
    assert {u for u, _ in loaded.search(_unit(8, 6), 10)} == {1, 2, 3}
    assert np.allclose(loaded.vector(12), _unit(8, 0, 0.1))
    assert not list(tmp_path.glob("*.tmp"))
