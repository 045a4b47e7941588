"""The kept neighbour lists answer exactly as a search from scratch, after adds, edits, deletes and restarts."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from indexer.neighbourhood import STATE_DIR, Neighbourhood
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index

WORDS = [f"{stem}{n}" for stem in ("ledger", "deploy", "queue", "token", "cache", "schema", "review", "worker")
         for n in range(12)]
WIDTH = 6


# Few words: many exact ties between scores (ties are where a kept list could go wrong). Many words:
# hardly any, for the test that counts what is searched again (a list tied at its end is, on any removal).
MANY_WORDS = [f"{stem}{n}" for stem in WORDS[::12] for n in range(80)]


def text(rng: random.Random, words: list[str] = WORDS) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(4, 9) if words is WORDS else rng.randint(12, 20))) + "."


def fill(root: Path, count: int, rng: random.Random, words: list[str] = WORDS) -> None:
    for i in range(count):
        write(root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", text(rng, words)))


def from_scratch(index, tmp_path: Path) -> dict:
    scratch = tmp_path / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    return Neighbourhood(index, WIDTH, scratch).hits(index.memory_ids())


def test_kept_lists_equal_a_fresh_search_after_adds_edits_and_deletes_in_one_process(hashing_root, tmp_path):
    rng = random.Random(3)
    fill(hashing_root, 40, rng)
    index = open_index(hashing_root)
    try:
        kept = Neighbourhood(index, WIDTH)
        assert kept.hits(index.memory_ids()) == from_scratch(index, tmp_path)
        for round_ in range(12):  # adds alone, edits alone, deletes alone, then all three at once
            if round_ % 4 in (0, 3):
                write(hashing_root, f"history/new{round_}.md", memory_text(f"m-a{round_:07x}", f"New {round_}", text(rng)))
            if round_ % 4 in (1, 3):
                write(hashing_root, f"history/n{round_ * 3}.md", memory_text(f"m-{round_ * 3:08x}", "Edited", text(rng)))
            if round_ % 4 in (2, 3):
                (hashing_root / f"history/n{round_ * 3 + 1}.md").unlink()
            index.sync()
            assert kept.hits(index.memory_ids()) == from_scratch(index, tmp_path)
    finally:
        index.close()


def test_a_new_process_reuses_the_kept_lists_and_recomputes_only_what_changed(hashing_root, tmp_path, monkeypatch):
    rng = random.Random(5)
    fill(hashing_root, 40, rng, MANY_WORDS)
    index = open_index(hashing_root)
    Neighbourhood(index, WIDTH).hits(index.memory_ids())
    index.close()
    assert (hashing_root / STATE_DIR / f"neighbours-{WIDTH}.npz").is_file()

    write(hashing_root, "history/n7.md", memory_text("m-00000007", "Edited", text(rng, MANY_WORDS)))
    write(hashing_root, "history/fresh.md", memory_text("m-0f0f0f0f", "Fresh", text(rng, MANY_WORDS)))
    (hashing_root / "history/n11.md").unlink()
    index = open_index(hashing_root)
    try:
        searched: list[str] = []
        original = Neighbourhood._faiss
        monkeypatch.setattr(Neighbourhood, "_faiss", lambda self, paths, width: searched.extend(paths) or original(self, paths, width))
        restarted = Neighbourhood(index, WIDTH).hits(index.memory_ids())
        assert "history/n7.md" in searched and "history/fresh.md" in searched
        assert len(set(searched)) < index.memory_count() / 2  # the others kept their lists
        monkeypatch.setattr(Neighbourhood, "_faiss", original)
        assert restarted == from_scratch(index, tmp_path)
    finally:
        index.close()


@pytest.mark.parametrize("damage", [b"", b"not a zip file", None])
def test_a_missing_or_damaged_state_file_only_means_searching_again(hashing_root, tmp_path, damage):
    fill(hashing_root, 20, random.Random(7))
    index = open_index(hashing_root)
    try:
        Neighbourhood(index, WIDTH).hits(index.memory_ids())
        state = hashing_root / STATE_DIR / f"neighbours-{WIDTH}.npz"
        if damage is None:
            shutil.rmtree(hashing_root / STATE_DIR)
        else:
            state.write_bytes(damage)
        assert Neighbourhood(index, WIDTH).hits(index.memory_ids()) == from_scratch(index, tmp_path)
        assert state.stat().st_size > 100  # written whole again
    finally:
        index.close()


def test_the_curator_reads_each_memorys_closest_others_off_the_kept_hits(hashing_root):
    from tests.indexer.test_curator import curator_for

    fill(hashing_root, 30, random.Random(9))
    write(hashing_root, "history/twin.md", memory_text("m-7717771e", "Twin", (hashing_root / "history/n4.md").read_text()
                                                       .split("---\n")[-1]))
    index = open_index(hashing_root)
    try:
        curator = curator_for(index)
        table = curator.neighbours(index.memory_ids(), k=3)
        hits = Neighbourhood(index, 9).hits(index.memory_ids())
        assert table == {memory_id: curator._owners(found, {memory_id}, 3) for memory_id, found in hits.items()}
        assert table["m-7717771e"][0].id == "m-00000004"  # the same body under another title
        close = curator.neighbours(index.memory_ids(), k=3, at_least=0.5)
        assert close == {memory_id: [s for s in similar if s.similarity >= 0.5 - 1e-4] for memory_id, similar in table.items()}
    finally:
        index.close()


def test_after_a_reindex_the_lists_follow_the_rebuilt_index(hashing_root, tmp_path):
    from indexer.rebuild import reindex

    fill(hashing_root, 30, random.Random(11))
    index = open_index(hashing_root)
    try:
        kept = Neighbourhood(index, WIDTH)
        kept.hits(index.memory_ids())
        (hashing_root / "history/n0.md").unlink()
        write(hashing_root, "history/late.md", memory_text("m-1a7e1a7e", "Late", text(random.Random(12))))
        reindex(index)  # a new generation stores the chunks in another order
        assert kept.hits(index.memory_ids()) == from_scratch(index, tmp_path)
        assert Neighbourhood(index, WIDTH).hits(index.memory_ids()) == from_scratch(index, tmp_path)
    finally:
        index.close()


@pytest.mark.model
def test_with_the_real_model_a_changed_value_is_an_update_and_a_negation_a_contradiction_after_a_restart(tmp_path):
    from datetime import datetime, timedelta, timezone

    from indexer.review import Inbox
    from tests.indexer.helpers import default_curator, empty_real_model_index

    index = empty_real_model_index(tmp_path)
    try:
        curator = default_curator(index)
        day = datetime(2026, 11, 1, tzinfo=timezone.utc)
        texts = ["The nightly ledger export keeps 14 days of files.", "We deploy the billing service with blue-green releases.",
                 "The nightly ledger export keeps 30 days of files.", "We do not deploy the billing service with blue-green releases."]
        ids = [curator.add(text, type="decision", now=day + timedelta(days=n)).memory.id for n, text in enumerate(texts)]
        first = {(i.kind, i.ids) for i in Inbox(curator).items()}
    finally:
        index.close()
    from indexer.index import Index
    from indexer.onnx_minilm import OnnxMiniLM as MiniLM
    from vault import Vault

    index = Index.open(Vault(tmp_path / "vault"), MiniLM())  # a new process: the kept lists and verdicts are read back
    try:
        again = {(i.kind, i.ids) for i in Inbox(default_curator(index)).items()}
    finally:
        index.close()
    expected = {("supersede", tuple(sorted((ids[0], ids[2])))), ("contradiction", tuple(sorted((ids[1], ids[3]))))}
    assert first == again == expected


def test_lists_kept_while_vectors_were_still_waiting_are_computed_again_once_they_arrive(hashing_root, tmp_path):
    from indexer.chunking import WHOLE, unit_id
    from indexer.embed import HashingEmbedder
    from indexer.index import Index
    from vault import Vault

    fill(hashing_root, 80, random.Random(5))  # 80 units: more than a sync embeds at once
    index = Index.open(Vault(hashing_root), HashingEmbedder(), defer_embedding=True)
    try:
        assert index.waiting_units()
        kept = Neighbourhood(index, WIDTH)
        kept.hits(index.memory_ids())  # asked for during the backfill: most memories have no vector yet
        while index.backfill(8):
            pass
        assert kept.hits(index.memory_ids()) == from_scratch(index, tmp_path)
    finally:
        index.close()


def test_the_kept_lists_are_read_while_a_captures_vectors_wait_and_follow_once_they_arrive(hashing_root):
    """The review inbox asked for the kept lists right after a capture, before the backfill embedded it: the capture's
    chunk was placed among the searched ones it was not yet part of (IndexError; CI of session 9)."""
    from indexer.chunking import WHOLE, unit_id
    from indexer.embed import HashingEmbedder
    from indexer.index import Index
    from vault import Vault

    rng = random.Random(5)
    fill(hashing_root, 20, rng)
    index = Index.open(Vault(hashing_root), HashingEmbedder(), defer_embedding=True)
    try:
        index.backfill()
        kept = Neighbourhood(index, WIDTH)
        kept.hits(index.memory_ids())
        searched = index.searched_units()
        # A capture whose chunk id sorts after every searched one: placed among them, it fell off their end.
        memory_id = next(f"m-0ca{n:05x}" for n in range(1 << 16) if all(
            unit_id(f"m-0ca{n:05x}", key, WHOLE, 0) > searched.max() for key in ("", "history/capture.md")))
        write(hashing_root, "history/capture.md", memory_text(memory_id, "Captured", text(rng)))
        index.sync(["history/capture.md"], later=True)  # as a capture: its vectors left to the backfill
        [whole] = [unit for unit, _, role in index.entry("history/capture.md").units if role == WHOLE]
        assert whole > searched.max() and whole not in index.searched_units()  # its vectors are not in yet
        kept.hits(index.memory_ids())  # the inbox's question while the capture waits: an answer, not an IndexError
        while index.waiting_units():
            index.backfill()
        assert kept.hits(index.memory_ids()) == Neighbourhood(index, WIDTH, hashing_root / "scratch").hits(index.memory_ids())
    finally:
        index.close()
