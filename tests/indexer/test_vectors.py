"""The vector index: searches scan chunk vectors, every unit's vector reads back, both parts survive a reload."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from indexer.vectors import LOG_FILE, VectorIndex


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
    # stored units (11, 12) are kept in float16: each component within its half-precision rounding
    assert np.allclose(rows, np.stack([_unit(8, 0, 0.1), _unit(8, 0), _unit(8, 6), _unit(8, 4)]), rtol=0, atol=1e-3)
    assert np.array_equal(rows[1], _unit(8, 0)) and np.array_equal(rows[3], _unit(8, 4))  # searched: exact
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
    assert np.allclose(loaded.vector(12), _unit(8, 0, 0.1), rtol=0, atol=1e-3)
    assert not list(tmp_path.glob("*.tmp"))


def _state(index: VectorIndex) -> dict[int, tuple[bool, tuple[float, ...]]]:
    ids = sorted(index.ids())
    rows = index.vectors(np.array(ids, dtype=np.int64))
    searched = {u for u, _ in index.search(_unit(index.dim, 0), 100)} if len(index) else set()
    return {u: (u in searched, tuple(np.round(row, 6))) for u, row in zip(ids, rows)}


def _snapshot_files(folder: Path) -> dict[str, int]:
    return {name: (folder / name).stat().st_ino for name in ("vectors.faiss", "units.f16")}


def _changed(index: VectorIndex) -> None:
    index.add([11, 4], np.stack([_unit(8, 3), _unit(8, 5)]), [False, True])
    index.remove([2])


def test_changes_after_a_snapshot_are_appended_to_a_log_and_survive_a_reload(tmp_path: Path):
    index = _filled()
    index.save(tmp_path)
    snapshot = _snapshot_files(tmp_path)
    _changed(index)
    index.persist(tmp_path)
    assert _snapshot_files(tmp_path) == snapshot and (tmp_path / "vectors.log").stat().st_size > 0
    assert _state(VectorIndex.load(tmp_path, 8)) == _state(index) and 2 not in index.ids()


def test_a_log_record_torn_by_a_crash_is_ignored_and_cut_before_the_next_append(tmp_path: Path):
    index = _filled()
    index.save(tmp_path)
    index.add([20], _unit(8, 1)[None, :], [True])
    index.persist(tmp_path)
    after_first = _state(index)
    log = tmp_path / "vectors.log"
    whole = log.stat().st_size
    index.remove([1, 3])
    index.persist(tmp_path)
    with open(log, "r+b") as f:
        f.truncate(whole + 5)  # the crash cut the second record short
    reloaded = VectorIndex.load(tmp_path, 8)
    assert _state(reloaded) == after_first
    reloaded.add([21], _unit(8, 7)[None, :], [True])
    reloaded.persist(tmp_path)
    assert _state(VectorIndex.load(tmp_path, 8)) == _state(reloaded) and 21 in reloaded.ids()


def test_a_log_replayed_over_the_snapshot_that_already_holds_it_changes_nothing(tmp_path: Path):
    index = _filled()
    index.save(tmp_path)
    _changed(index)
    index.persist(tmp_path)
    log = (tmp_path / "vectors.log").read_bytes()
    index.save(tmp_path)  # a crash after the new snapshot, before the log was dropped:
    (tmp_path / "vectors.log").write_bytes(log)
    assert _state(VectorIndex.load(tmp_path, 8)) == _state(index)


def test_the_log_is_folded_into_a_new_snapshot_once_it_outgrows_its_share(tmp_path: Path):
    index = _filled()
    index.save(tmp_path)
    snapshot = _snapshot_files(tmp_path)
    for n in range(200):
        index.add([100 + n], _unit(8, n % 8, 0.01 * n)[None, :], [n % 2 == 0])
        index.persist(tmp_path)
    assert _snapshot_files(tmp_path) != snapshot  # rewritten at least once
    log = tmp_path / "vectors.log"
    snapshot_bytes = sum((tmp_path / name).stat().st_size for name in ("vectors.faiss", "units.f16"))
    assert (log.stat().st_size if log.exists() else 0) <= 0.5 * snapshot_bytes
    assert _state(VectorIndex.load(tmp_path, 8)) == _state(index) and len(index) == 205


def test_a_unit_re_added_to_the_other_part_moves_there_and_is_held_once(tmp_path: Path):
    index = _filled()
    index.add([11, 1], np.stack([_unit(8, 7), _unit(8, 1)]), [True, False])  # 11: stored -> searched, 1: back
    assert {u for u, _ in index.search(_unit(8, 7), 10)} == {2, 3, 11}
    assert index.ids() == {1, 2, 3, 11, 12} and len(index) == 5
    assert np.allclose(index.vectors(np.array([1, 11], dtype=np.int64)), np.stack([_unit(8, 1), _unit(8, 7)]), atol=1e-3)
    assert index.remove([11, 11, 1]) == 2 and index.ids() == {2, 3, 12} and len(index) == 3
    index.save(tmp_path)
    assert _state(VectorIndex.load(tmp_path, 8)) == _state(index)


def test_a_log_naming_units_many_times_replays_to_each_ones_last_state_in_the_live_indexs_order(tmp_path: Path):
    index = VectorIndex(8)
    index.add([1, 2, 3, 4, 11, 12], np.stack([_unit(8, n) for n in range(6)]), [True, True, True, True, False, False])
    filler = np.arange(1000, 1400)  # a snapshot large enough that the steps below stay in the log
    index.add(filler, np.stack([_unit(8, n % 8, 0.01 * n) for n in range(len(filler))]), [False] * len(filler))
    index.save(tmp_path)
    snapshot = (tmp_path / "units.f16").stat().st_ino
    steps = [
        lambda: index.add([3], _unit(8, 6)[None, :], [True]),  # re-added: moves to the end of the searched part
        lambda: index.add([2, 11], np.stack([_unit(8, 7), _unit(8, 1, 0.3)]), [True, False]),
        lambda: index.remove([4, 12]),
        lambda: index.add([3, 12], np.stack([_unit(8, 2, 0.5), _unit(8, 3, 0.2)]), [True, False]),  # again, and back
        lambda: index.add([11], _unit(8, 5, 0.1)[None, :], [True]),  # a stored unit now searched
        lambda: index.remove([1]),
    ]
    for step in steps:
        step()
        index.persist(tmp_path)
    assert (tmp_path / "units.f16").stat().st_ino == snapshot  # every step is in the log
    with open(tmp_path / LOG_FILE, "ab") as log:
        log.write(b"\x40\x00\x00\x00torn")  # a crash mid-record: never replayed
    ids = np.array(sorted(index.ids()), dtype=np.int64)
    # A reader reads the log, the owner maps it (it alone cuts the log): both replay to the live index's state.
    for replayed in (VectorIndex.load(tmp_path, 8), VectorIndex.load(tmp_path, 8, owner=True)):
        assert replayed.ids() == index.ids() == {2, 3, 11, 12} | set(filler.tolist())
        assert replayed.searched_order().tolist() == index.searched_order().tolist()  # ties break alike after a restart
        assert np.allclose(replayed.vectors(ids), index.vectors(ids), rtol=0, atol=1e-3)
        assert replayed._log_end == (tmp_path / LOG_FILE).stat().st_size - 8  # the torn tail lies past it


def test_the_owner_reads_the_stored_rows_its_log_replays_where_they_lie_and_keeps_and_folds_the_same_values(tmp_path: Path):
    # A killed owner's log: stored rows added after the snapshot. The owner's open lends them from the mapped log
    # instead of rounding and writing them to its scratch file; what it reads and the snapshot it writes are the
    # values a copied replay holds, after a torn tail is cut, more changes come and the log is folded away.
    rng = np.random.default_rng(7)
    index = VectorIndex(8)
    index.add(np.arange(1, 5), rng.normal(size=(4, 8)).astype(np.float32), [True] * 4)
    filler = np.arange(1000, 2000)  # a snapshot large enough that the changes below stay in the log
    index.add(filler, rng.normal(size=(len(filler), 8)).astype(np.float32), [False] * len(filler))
    (tmp_path / "owner").mkdir()
    index.save(tmp_path / "owner")
    logged = np.arange(100, 160)
    index.add(logged, rng.normal(size=(60, 8)).astype(np.float32), [n % 4 == 0 for n in range(60)])
    index.add(logged[:10], rng.normal(size=(10, 8)).astype(np.float32), [False] * 10)  # named again: the last wins
    index.persist(tmp_path / "owner")
    snapshot = (tmp_path / "owner" / "units.f16").stat().st_ino
    with open(tmp_path / "owner" / LOG_FILE, "ab") as log:
        log.write(b"\x40\x00\x00\x00torn")
    shutil.copytree(tmp_path / "owner", tmp_path / "reader")
    owner = VectorIndex.load(tmp_path / "owner", 8, owner=True)
    assert (tmp_path / "owner" / "units.f16").stat().st_ino == snapshot  # the changes are in the log
    copied = VectorIndex.load(tmp_path / "reader", 8)  # a reader: the rows copied out of the log it read
    assert owner._stored._new_rows._fd == -1  # nothing written to the scratch file: the rows stay in the log
    ids = np.array(sorted(index.ids()), dtype=np.int64)
    assert np.array_equal(owner.vectors(ids), copied.vectors(ids))
    later = rng.normal(size=(3, 8)).astype(np.float32)
    for replayed, folder in ((owner, tmp_path / "owner"), (copied, tmp_path / "reader")):
        replayed.add([200, 201, 102], later, [False, False, False])  # after the lent rows, and one of them replaced
        replayed.remove([103, 1])
        replayed.persist(folder)  # the owner cuts the torn tail and appends: the lent rows' pages stay as they were
    ids = np.array(sorted(owner.ids()), dtype=np.int64)
    assert np.array_equal(owner.vectors(ids), copied.vectors(ids))
    assert (tmp_path / "owner" / "units.f16").stat().st_ino == snapshot  # still in the log
    frozen = owner._stored.frozen()
    owner.save(tmp_path / "owner")  # the log is gone; the frozen copy still reads the rows it was lent
    assert not (tmp_path / "owner" / LOG_FILE).exists() and owner._stored._new_rows._lent is None
    some = np.array([100, 104, 200], dtype=np.int64)
    assert np.array_equal(frozen.read(some), copied.vectors(some))
    frozen.close()
    copied.save(tmp_path / "reader")
    assert (tmp_path / "owner" / "units.f16").read_bytes() == (tmp_path / "reader" / "units.f16").read_bytes()
    assert np.array_equal(VectorIndex.load(tmp_path / "owner", 8).vectors(ids), copied.vectors(ids))
