"""A server answers before a fresh vault is embedded, and ends with the index a full build gives."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from indexer.backfill import Backfill
from indexer.embed import HashingEmbedder
from indexer.index import DEFER_ABOVE, Index
from indexer.live import LiveIndex
from indexer.settings import WatchSettings
from indexer.vectors import VectorIndex
from vault import Vault

from tests.conftest import memory_text, write
from .helpers import fresh_rebuild, state, top_ids


class CountingEmbedder(HashingEmbedder):
    """The test embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return super().embed(texts)


def deferred(root: Path, embedder: HashingEmbedder | None = None) -> Index:
    return Index.open(Vault(root), embedder or HashingEmbedder(), defer_embedding=True)


def drain(index: Index) -> None:
    while index.backfill(8):
        pass


def full_build_state(root: Path, tmp_path: Path) -> dict:
    copy = tmp_path / "full"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memdir"))
    index = fresh_rebuild(copy)
    try:
        return state(index)
    finally:
        index.close()


def test_a_fresh_vault_opened_for_a_server_calls_the_model_for_no_text_and_answers_by_keyword_at_once(example_root: Path):
    embedder = CountingEmbedder()
    index = deferred(example_root, embedder)
    try:
        assert embedder.texts == 0
        assert index.waiting_units() == index.unit_count() > DEFER_ABOVE
        assert "m-8e2c4b07" in top_ids(index, "pg_try_advisory_lock job locking")[:3]  # by keyword alone
    finally:
        index.close()


def test_after_the_backfill_the_index_equals_a_full_build(example_root: Path, tmp_path: Path):
    index = deferred(example_root)
    try:
        drain(index)
        assert not index.waiting_units()
        assert state(index) == full_build_state(example_root, tmp_path)
    finally:
        index.close()


def test_a_memory_edited_while_its_vectors_wait_ends_with_the_vectors_of_its_new_text(example_root: Path, tmp_path: Path):
    index = deferred(example_root)
    try:
        index.backfill(8)
        edited = sorted(index.all_memories(), key=lambda m: m.path)[5]
        path = example_root / edited.path
        path.write_text(path.read_text().replace(edited.body.strip().split()[0], "Rewritten", 1))
        deleted = sorted(index.all_memories(), key=lambda m: m.path)[9]
        (example_root / deleted.path).unlink()
        index.sync([edited.path, deleted.path])
        drain(index)
        assert state(index) == full_build_state(example_root, tmp_path)
    finally:
        index.close()


def test_a_server_stopped_midway_embeds_the_rest_when_it_opens_the_vault_again(example_root: Path, tmp_path: Path):
    index = deferred(example_root)
    index.backfill(8)
    left = index.waiting_units()
    index.close()
    again = deferred(example_root)
    try:
        assert again.waiting_units() == left
        drain(again)
        assert state(again) == full_build_state(example_root, tmp_path)
    finally:
        again.close()


def test_a_command_opening_a_half_embedded_vault_embeds_the_rest_before_it_answers(example_root: Path, tmp_path: Path):
    deferred(example_root).close()
    index = Index.open(Vault(example_root), HashingEmbedder())
    try:
        assert not index.waiting_units()
        assert state(index) == full_build_state(example_root, tmp_path)
    finally:
        index.close()


def test_a_small_change_is_embedded_at_once_even_in_a_server(example_root: Path):
    index = deferred(example_root)
    try:
        drain(index)
        memory = next(iter(index.all_memories()))
        path = example_root / memory.path
        path.write_text(path.read_text() + "\nOne more sentence about pgbouncer pools.\n")
        report = index.sync([memory.path])
        assert report.deferred == 0 and report.embedded > 0
        assert not index.waiting_units()
    finally:
        index.close()


def test_the_live_index_fills_the_vectors_in_behind_and_says_when_it_is_done(example_root: Path, tmp_path: Path):
    index = deferred(example_root)
    live = LiveIndex(index, WatchSettings(debounce_seconds=0.05, rescan_seconds=0)).start()
    try:
        assert live.backfill is not None and live.backfill.wait_done(timeout=60)
        assert state(index) == full_build_state(example_root, tmp_path)
    finally:
        live.stop()
        index.close()


def test_a_unit_still_waiting_for_its_vector_reads_as_zeros():
    vectors = VectorIndex(4)
    vectors.add([1], np.ones((1, 4), dtype=np.float32), [True])
    rows = vectors.vectors(np.array([1, 2], dtype=np.int64))
    assert rows[0].tolist() == [1.0] * 4 and rows[1].tolist() == [0.0] * 4


@pytest.mark.model
def test_with_the_real_model_deferred_vectors_equal_those_of_a_full_build(example_root: Path, tmp_path: Path):
    from indexer.onnx_minilm import OnnxMiniLM as MiniLM

    model = MiniLM()
    index = Index.open(Vault(example_root), model, defer_embedding=True)
    try:
        drain(index)
        units = np.array(sorted(u for u, _ in index.unit_owners()), dtype=np.int64)
        texts = index._unit_texts(units.tolist())
        sample = units[:: max(1, len(units) // 12)]
        direct = model.embed([texts[int(u)][0] for u in sample])
        searched = np.isin(sample, index.searched_units())
        read = index.unit_vectors(sample)
        np.testing.assert_allclose(read[searched], direct[searched], atol=1e-5)
        # stored (sentence, neighbour) units are kept in float16: within its rounding, 2^-12 below 0.5
        np.testing.assert_allclose(read[~searched], direct[~searched], rtol=0, atol=2.5e-4)
        assert not index.waiting_units() and len(index._vectors) == len(units)
    finally:
        index.close()


def test_a_unit_a_sync_queues_again_while_its_batch_is_embedded_keeps_waiting(example_root: Path, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    import indexer.index as index_module

    index = deferred(example_root)
    monkeypatch.setattr(index_module, "DEFER_ABOVE", 0)  # every sync defers, as a big pull would
    first = next(iter(index._unembedded))
    memory = index.memory(index.unit_owner(first)[0])
    path = example_root / memory.path
    inner = index.embedder.embed

    def embed_while_the_file_changes(texts):  # the backfill's model call runs outside the index lock
        if path.read_text().count("Changed meanwhile.") == 0:
            path.write_text(path.read_text() + "\nChanged meanwhile.\n")
            index.sync([memory.path])
        return inner(texts)

    monkeypatch.setattr(index.embedder, "embed", embed_while_the_file_changes)
    try:
        index.backfill(8)
        monkeypatch.setattr(index.embedder, "embed", inner)
        drain(index)
        assert state(index) == full_build_state(example_root, tmp_path)
    finally:
        index.close()


def test_a_reader_of_the_index_in_another_process_sees_the_backfilled_vectors(example_root: Path):
    owner = deferred(example_root)
    reader = Index.open(Vault(example_root), HashingEmbedder(), writable=False)
    try:
        drain(owner)
        reader.refresh()
        assert reader._vectors.ids() == owner._vectors.ids() and len(reader._vectors) == owner.unit_count()
    finally:
        reader.close()
        owner.close()


class HeldEmbedder(HashingEmbedder):
    """The test embedder, recording how many texts each document call brought; the first call waits (bounded)
    until the test says every capture is in, as a model still busy with the first one would."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.all_in = threading.Event()

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.batches.append(len(texts))
        if len(self.batches) == 1:
            self.all_in.wait(30)
        return super().embed(texts)


def captured(root: Path, index: Index, number: int) -> int:
    """A captured exchange as the hooks store it: a new file indexed with its vectors left for the backfill;
    returns how many units it left waiting."""
    before = index.waiting_units()
    write(root, f"working/exchange-{number}.md", memory_text(
        f"m-0000000{number}", f"Retries in session {number}",
        f"User: are the celery retries of session {number} safe?\n\nAssistant: yes, the task is idempotent now.",
        collection="working", type="history"))
    index.sync([f"working/exchange-{number}.md"], later=True)
    return index.waiting_units() - before


def test_exchanges_captured_one_after_another_reach_the_model_in_one_call(hashing_root: Path):
    embedder = HeldEmbedder()
    index = deferred(hashing_root, embedder)
    first = captured(hashing_root, index, 1)  # before the backfill runs: how many units one exchange leaves
    backfill = Backfill(index, batch=3 * first).start()
    try:
        captured(hashing_root, index, 2)
        captured(hashing_root, index, 3)
        embedder.all_in.set()
        assert backfill.wait_done(timeout=30)
        # One model call for the three, not one per exchange: a call's CPU is mostly its own, not its texts'.
        assert len(embedder.batches) == 1 and not index.waiting_units()
    finally:
        embedder.all_in.set()
        backfill.stop()
        index.close()


def test_a_lone_capture_still_gets_its_vectors_when_no_batch_fills(hashing_root: Path):
    embedder = HeldEmbedder()
    embedder.all_in.set()
    index = deferred(hashing_root, embedder)
    backfill = Backfill(index, gather=0.1).start()
    try:
        units = captured(hashing_root, index, 1)
        assert backfill.wait_done(timeout=30)
        assert units and len(embedder.batches) == 1 and not index.waiting_units()
    finally:
        backfill.stop()
        index.close()


def test_a_capture_while_the_backfill_embeds_the_exchange_before_it_keeps_that_exchanges_unchanged_vectors(
        hashing_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    embedder = HashingEmbedder()
    index = deferred(hashing_root, embedder)
    captured(hashing_root, index, 1)
    earlier = index.units_of("m-00000001")
    inner = embedder.embed

    def embed_while_the_next_exchange_is_captured(texts):  # the backfill's model call runs outside the index lock
        monkeypatch.setattr(embedder, "embed", inner)
        write(hashing_root, "working/exchange-2.md", memory_text(
            "m-00000002", "Retries in session 2", "User: and the beat schedule?\n\nAssistant: it runs once a minute.",
            collection="working", type="history", extra="previous: m-00000001\n"))
        index.sync(["working/exchange-2.md"], later=True)  # the earlier exchange gains its `next` unit
        return inner(texts)

    monkeypatch.setattr(embedder, "embed", embed_while_the_next_exchange_is_captured)
    try:
        index.backfill(len(earlier))
        # Its texts did not change: their vectors went in (on main they were dropped, and the units waited for
        # another batch and another FAISS add).
        assert not any(index.is_waiting(unit) for unit, _, _ in earlier)
        assert [role for unit, _, role in index.units_of("m-00000001") if index.is_waiting(unit)] == ["next"]
        drain(index)
        assert state(index) == full_build_state(hashing_root, tmp_path)
    finally:
        index.close()
