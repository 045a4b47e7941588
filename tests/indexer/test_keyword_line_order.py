"""Keyword writers take their turn first come first served (issue 32 item 4): a pull the watcher cuts into batches
that keep arriving does not keep a remember or a merge of segments waiting for as long as the pull lasts; each
goes ahead of the batches that came after it. The batches are still searchable while they wait, and the index
still ends equal to a rebuild."""

from __future__ import annotations

import threading
from pathlib import Path

from indexer.embed import HashingEmbedder
from indexer.index import Index
from vault import Vault

from .helpers import default_curator, rebuilt_state, state, top_ids
from .test_pull_three_batches import third_part
from .test_pull_two_batches import BOUND, commit_held_open, first_part, second_part


def _writes_in_order(index: Index, merger: threading.Thread) -> list[str]:
    """The keyword writes as they happen: each pull part's by its memories, anything else as "remember", and the
    merge of segments that `merger` runs (a write's own merge past SEGMENTS_BOUND is not counted)."""
    keyword = index._keyword
    replace, merge = keyword.replace, keyword.merge_segments
    order: list[str] = []

    def replacing(docs, *args, **kwargs):  # type: ignore[no-untyped-def]
        ids = {memory.id for memory, _ in docs}
        prefixes = {"m-third": "third", "m-late": "second", "m-pull": "first"}
        order.append(next((part for prefix, part in prefixes.items() if any(i.startswith(prefix) for i in ids)),
                          "remember"))
        return replace(docs, *args, **kwargs)

    def merging() -> int:
        if threading.current_thread() is merger:
            order.append("merge")
        return merge()

    keyword.replace = replacing  # type: ignore[method-assign]
    keyword.merge_segments = merging  # type: ignore[method-assign]
    return order


def _waiting(index: Index) -> dict[threading.Thread, threading.Event]:
    """thread -> an event set once that thread waits for its keyword turn (the lock let go)."""
    condition = index._keyword_idle
    wait = condition.wait
    waiting: dict[threading.Thread, threading.Event] = {}

    def waits(timeout=None):  # type: ignore[no-untyped-def]
        event = waiting.get(threading.current_thread())
        if event is not None:
            event.set()
        return wait(timeout)

    condition.wait = waits  # type: ignore[method-assign]
    return waiting


def test_a_remember_and_a_merge_asked_for_during_a_pull_go_ahead_of_the_batches_that_came_after_them(
        hashing_example: Path, tmp_path: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    committing, release, _ = commit_held_open(index)
    waiting = _waiting(index)
    handed_on = {part: threading.Event() for part in ("first", "second", "third")}
    remembered: list[str] = []
    remember = threading.Thread(target=lambda: remembered.append(default_curator(index).add(
        "The heron cache is warmed before each deploy.", title="Heron cache", compare=False).memory.id))
    merger = threading.Thread(target=index.merge_keywords)
    order = _writes_in_order(index, merger)
    syncs: list[threading.Thread] = []

    def sync_in_background(part: str, paths: list[str]) -> None:
        syncs.append(threading.Thread(target=index.sync, args=(paths,),
                                      kwargs={"keyword_commit_began": handed_on[part].set}))
        syncs[-1].start()

    try:
        sync_in_background("first", first_part(hashing_example))
        assert committing.wait(BOUND)
        sync_in_background("second", second_part(hashing_example))
        assert handed_on["second"].wait(BOUND)
        for writer in (remember, merger):  # in this order, each waiting in line before the next comes
            waiting[writer] = threading.Event()
            writer.start()
            assert waiting[writer].wait(BOUND)
        sync_in_background("third", third_part(hashing_example))
        assert handed_on["third"].wait(BOUND)
        during = top_ids(index, "yak4", mode="keyword")  # the third batch, searchable while it waits
        release.set()
        for thread in (*syncs, remember, merger):
            thread.join(BOUND)
        assert not any(thread.is_alive() for thread in (*syncs, remember, merger))
        current = {k: v for k, v in state(index).items() if k != "vectors"}
        heron = top_ids(index, "heron", mode="keyword")
    finally:
        release.set()
        index.close()
    assert order == ["first", "second", "remember", "merge", "third"]
    assert during == ["m-third0004"]
    assert heron == remembered
    assert current == rebuilt_state(hashing_example, tmp_path)
