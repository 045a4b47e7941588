"""A text is sent to the model once, even when two calls want it at the same moment: the second waits for the first's
vector (issue 32 item 6: under nine sessions a capture's sync and the backfill both took the same exchange's units, and
the model host embedded them twice)."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from indexer.embed import CachedEmbedder, HashingEmbedder
from indexer.index import Index
from vault import Vault

from tests.conftest import memory_text, write

BOUND = 60.0  # seconds: never reached unless something waits for what it must not


class HeldModel(HashingEmbedder):
    """The test embedder, recording every text it is sent; once `hold()` is called, the next call waits inside the
    model until `release`, and every call after it is announced (`next_call`)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: Counter[str] = Counter()
        self.inside, self.release, self.next_call = threading.Event(), threading.Event(), threading.Event()
        self._holding = False
        self.fail_held = False

    def hold(self) -> None:
        self._holding = True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.sent.update(texts)
        if self._holding:
            self._holding = False
            self.inside.set()
            assert self.release.wait(BOUND)
            if self.fail_held:
                raise RuntimeError("the model host went away")
        elif self.inside.is_set():
            self.next_call.set()
        return super().embed(texts)


def in_thread(call) -> tuple[threading.Thread, list]:  # type: ignore[no-untyped-def]
    out: list = []
    thread = threading.Thread(target=lambda: out.append(_outcome(call)))
    thread.start()
    return thread, out


def _outcome(call):  # type: ignore[no-untyped-def]
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - the test reads it
        return exc


def test_a_text_another_call_is_embedding_is_sent_to_the_model_once_and_both_calls_get_its_vector():
    model = HeldModel()
    cache = CachedEmbedder(model, None)
    model.hold()
    first, first_out = in_thread(lambda: cache.embed(["the walrus deploy failed", "the image was stale"]))
    assert model.inside.wait(BOUND)
    second, second_out = in_thread(lambda: cache.embed(["the image was stale", "we pinned the tag"]))
    assert model.next_call.wait(BOUND)  # the second call sent its own text; the shared one it waits for
    model.release.set()
    first.join(BOUND), second.join(BOUND)
    assert model.sent == Counter(["the walrus deploy failed", "the image was stale", "we pinned the tag"])
    np.testing.assert_array_equal(first_out[0][1], second_out[0][0])
    np.testing.assert_array_equal(second_out[0][0], HashingEmbedder().embed(["the image was stale"])[0])


def test_when_the_call_embedding_a_text_fails_the_call_waiting_for_it_embeds_it_itself():
    model = HeldModel()
    model.fail_held = True
    cache = CachedEmbedder(model, None)
    model.hold()
    first, first_out = in_thread(lambda: cache.embed(["the walrus deploy failed", "the image was stale"]))
    assert model.inside.wait(BOUND)
    second, second_out = in_thread(lambda: cache.embed(["the image was stale", "we pinned the tag"]))
    assert model.next_call.wait(BOUND)
    model.release.set()
    first.join(BOUND), second.join(BOUND)
    assert isinstance(first_out[0], RuntimeError)
    np.testing.assert_array_equal(second_out[0][0], HashingEmbedder().embed(["the image was stale"])[0])
    assert cache.embed(["the walrus deploy failed"]).shape == (1, HashingEmbedder.dim)  # nothing left underway


def test_an_exchange_a_sync_embeds_while_the_backfill_takes_its_units_too_goes_to_the_model_once(hashing_root: Path):
    model = HeldModel()
    index = Index.open(Vault(hashing_root), model, defer_embedding=True)
    try:
        write(hashing_root, "working/m-first.md", memory_text(
            "m-first", "\"Exchange: walrus deploy\"", "User: why does the walrus deploy fail\n\n"
            "Assistant: the walrus image was stale, so I pinned its tag.", collection="working", type="history"))
        index.sync(["working/m-first.md"], later=True)  # a capture's units: queued for the backfill
        write(hashing_root, "working/m-second.md", memory_text(
            "m-second", "\"Exchange: walrus rollback\"", "User: how do we roll the walrus back\n\n"
            "Assistant: redeploy the previous tag, then run the smoke tests.", collection="working", type="history"))
        model.hold()
        # The watcher's sync of a second exchange: few units, embedded by the sync once it lets go of the index lock.
        syncing, synced = in_thread(lambda: index.sync(["working/m-second.md"]))
        assert model.inside.wait(BOUND)
        backfilling, backfilled = in_thread(lambda: index.backfill(64))  # every queued unit, the sync's among them
        assert model.next_call.wait(BOUND)
        model.release.set()
        syncing.join(BOUND), backfilling.join(BOUND)
        assert not isinstance(synced[0], Exception) and not isinstance(backfilled[0], Exception)
        while index.backfill(64):
            pass
        assert not index.waiting_units()
        assert model.sent and max(model.sent.values()) == 1, [t for t, n in model.sent.items() if n > 1]
    finally:
        index.close()


@pytest.mark.parametrize("texts", [["one text", "one text", "another"], []])
def test_a_call_gets_one_vector_per_text_in_order_repeats_included(texts: list[str]):
    model = HeldModel()
    vectors = CachedEmbedder(model, None).embed(texts)
    assert vectors.shape == (len(texts), HashingEmbedder.dim)
    np.testing.assert_array_equal(vectors, HashingEmbedder().embed(texts) if texts else vectors)
    assert sum(model.sent.values()) == len(set(texts))
