"""Captures commit their keyword documents without merging Whoosh segments; the merger merges them later, off
the write path, when the index is idle or the segments pass their bound (issue 32 item 6: under nine sessions a
capture's commit merged segments for up to a second while holding the index lock, and the prompts waited)."""

from __future__ import annotations

import threading
from pathlib import Path

from indexer.embed import HashingEmbedder
from indexer.index import SEGMENTS_BOUND, Index
from indexer.keyword import KeywordIndex, tail_to_merge
from indexer.search import SearchRequest, Searcher
from indexer.segment_merger import SegmentMerger
from indexer.settings import SearchSettings
from vault import Vault

from .helpers import default_curator, rebuilt_state, state

BOUND = 60.0  # seconds: never reached unless something waits for what it must not
NEVER_IDLE = 3600.0


def captures(index: Index, count: int, sessions: int = 3, start: int = 0,
             previous: dict[int, str] | None = None) -> list[str]:
    """`count` captured exchanges from a few sessions, each linked to its session's previous one (as the Stop hook
    stores them: the previous exchange's neighbour text changes, so its keyword documents are rewritten too)."""
    curator = default_curator(index)
    previous = {} if previous is None else previous  # session -> its last exchange
    ids = []
    for n in range(start, start + count):
        session = n % sessions
        extra = {"session": f"s{session}", **({"previous": previous[session]} if session in previous else {})}
        added = curator.add(f"User: why does the walrus{n} deploy fail\n\nAssistant: the walrus{n} image was stale.",
                            title=f"Exchange: walrus{n}", type="history", collection="working", extra=extra,
                            compare=False)
        previous[session] = added.memory.id
        ids.append(added.memory.id)
    return ids


def search(index: Index, query: str) -> list[str]:
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    return [h.memory.id for h in searcher.search(SearchRequest(query=query, mode="keyword", limit=10))]


def opened(root: Path) -> Index:
    return Index.open(Vault(root), HashingEmbedder(), defer_embedding=True)


def test_a_capture_does_not_merge_segments_while_holding_the_index_lock(hashing_example: Path):
    index = opened(hashing_example)
    merger = SegmentMerger(index, idle=NEVER_IDLE, bound=10 * SEGMENTS_BOUND).start()  # serves, but never merges
    try:
        counts = [index.keyword_segments()]
        for n in range(SEGMENTS_BOUND + 4):
            captures(index, 1, start=n)
            counts.append(index.keyword_segments())
        # Each capture's commit adds its one segment and merges none (Whoosh's default merged on about every fifth).
        assert counts == list(range(counts[0], counts[0] + SEGMENTS_BOUND + 5))
        assert merger.wait_settled(BOUND) and merger.merges == 0  # ... it is left for the merger, when idle
    finally:
        merger.stop()
        index.close()


def test_while_segments_merge_a_search_answers_and_a_capture_waits_without_the_index_lock(hashing_example: Path):
    index = opened(hashing_example)
    captures(index, 4)
    merging, release = threading.Event(), threading.Event()
    real_merge = index._keyword.merge_segments

    def merge_held_open() -> int:
        merging.set()
        release.wait(BOUND)
        return real_merge()

    index._keyword.merge_segments = merge_held_open  # type: ignore[method-assign]
    try:
        merge = threading.Thread(target=index.merge_keywords)
        merge.start()
        assert merging.wait(BOUND)
        found: list[list[str]] = []
        probe = threading.Thread(target=lambda: found.append(search(index, "walrus2 deploy")))
        probe.start()
        probe.join(BOUND / 2)
        assert not probe.is_alive(), "a search waited for the merge"
        capture = threading.Thread(target=captures, args=(index, 1), kwargs={"start": 9})
        capture.start()
        capture.join(0.5)  # bounded: it must still wait for the merge, Whoosh's one writer
        assert capture.is_alive()
        assert index.lock.acquire(timeout=BOUND / 2), "the waiting capture held the index lock"
        index.lock.release()
        release.set()
        merge.join(BOUND)
        capture.join(BOUND)
        assert not merge.is_alive() and not capture.is_alive()
        assert found[0][:1] == search(index, "walrus2")[:1]
        assert len(search(index, "walrus9")) == 1
    finally:
        release.set()
        index.close()


def test_segments_are_merged_when_idle_and_a_search_returns_the_same_results_before_and_after(
        hashing_example: Path, tmp_path: Path):
    index = opened(hashing_example)
    merger = SegmentMerger(index, idle=NEVER_IDLE, bound=10 * SEGMENTS_BOUND).start()
    try:
        captures(index, 12)
        before = {q: search(index, q) for q in ("walrus3 image", "walrus11 deploy", "deploy pipeline", "celery retries")}
        assert index.keyword_segments() > 10
        merger.stop()
        merger = SegmentMerger(index, idle=0.0).start()  # no write for 0 s: idle now
        index.merge_wanted.set()
        assert merger.wait_settled(BOUND)
        assert merger.merges >= 1
        assert index.keyword_segments() <= 2
        assert {q: search(index, q) for q in before} == before
        after = {k: v for k, v in state(index).items() if k != "vectors"}
    finally:
        merger.stop()
        index.close()
    assert after == rebuilt_state(hashing_example, tmp_path)


def test_segment_count_stays_bounded_after_many_small_commits(hashing_example: Path):
    index = opened(hashing_example)
    merger = SegmentMerger(index, idle=NEVER_IDLE, bound=4).start()  # writes never stop long enough to be idle
    try:
        captures(index, 30)
        assert merger.wait_settled(BOUND)
        assert index.keyword_segments() <= 4
        assert merger.merges >= 2
        assert search(index, "walrus17")[:1] == [m.id for m in index.all_memories() if "walrus17" in m.title]
    finally:
        merger.stop()
        index.close()


def test_without_a_merger_a_write_merges_once_segments_pass_their_bound(hashing_example: Path):
    index = opened(hashing_example)  # a CLI process: no LiveIndex, no merger thread
    try:
        counts = []
        for n in range(2 * SEGMENTS_BOUND):
            captures(index, 1, start=n)
            counts.append(index.keyword_segments())
        assert max(counts) <= SEGMENTS_BOUND
    finally:
        index.close()


def test_the_merged_tail_keeps_segments_logarithmic_and_old_big_ones_untouched():
    assert tail_to_merge([500, 1, 1, 1, 1]) == 4  # the small new ones, not the big old one
    assert tail_to_merge([500, 4, 1]) == 1  # one segment: nothing to merge
    assert tail_to_merge([500, 4, 2, 1, 1]) == 4  # 1+1 take the 2, then the 4: together as big as each
    assert tail_to_merge([3, 2, 2]) == 3
    sizes: list[int] = []
    for _ in range(1000):  # a merge after every one-document commit
        sizes.append(1)
        tail = tail_to_merge(sizes)
        if tail >= 2:
            sizes[-tail:] = [sum(sizes[-tail:])]
    assert sum(sizes) == 1000 and len(sizes) <= 11  # log2(1000) + 1


def test_a_capture_reopens_only_the_segments_it_changed_and_searches_as_a_fresh_open(hashing_example: Path):
    index = opened(hashing_example)
    index.merge_later = True  # as under a merger: segments pile up between merges
    try:
        sessions: dict[int, str] = {}
        captures(index, 6, previous=sessions)
        keyword = index._keyword
        before = {leaf.segment().segment_id(): leaf for leaf, _ in keyword._searcher.reader().leaf_readers()}
        captures(index, 1, start=6, previous=sessions)  # session 0's exchange: its previous one (in an older segment) is rewritten
        after = {leaf.segment().segment_id(): leaf for leaf, _ in keyword._searcher.reader().leaf_readers()}
        taken_over = [sid for sid in before if sid in after and after[sid] is before[sid]]
        assert len(after) == len(before) + 1 and len(taken_over) == len(before) - 1  # one changed, one new
        assert all(not leaf.is_closed for leaf in after.values())
        fresh = KeywordIndex.open(index.generation / "keyword")
        try:
            for query in ("walrus3 image", "walrus6 deploy", "deploy pipeline", "celery retries"):
                assert [(h.chunk_id, round(h.score, 9)) for h in keyword.search(query, 10)] == \
                    [(h.chunk_id, round(h.score, 9)) for h in fresh.search(query, 10)]
        finally:
            fresh.close()
    finally:
        index.close()


class LockWatchingEmbedder(HashingEmbedder):
    """Notes, for every text it embeds, whether the index lock was held meanwhile."""

    def __init__(self) -> None:
        super().__init__()
        self.index: Index | None = None
        self.under_lock: list[bool] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        assert self.index is not None
        self.under_lock += [self.index.lock._is_owned()] * len(texts)  # type: ignore[attr-defined]
        return super().embed(texts)


def test_a_capture_embeds_nothing_while_holding_the_index_lock(hashing_example: Path):
    embedder = LockWatchingEmbedder()
    index = Index.open(Vault(hashing_example), embedder, defer_embedding=True)
    embedder.index, embedder.under_lock = index, []
    try:
        captures(index, 6)  # new exchanges, and their previous ones whose neighbour text changed
        assert index.waiting_units() > 0 and not any(embedder.under_lock)
        while index.backfill(64):  # the background embedding: outside the lock
            pass
        assert embedder.under_lock and not any(embedder.under_lock)
    finally:
        index.close()


def test_a_small_edit_in_a_served_vault_is_embedded_at_once_with_the_index_lock_let_go(hashing_example: Path):
    embedder = LockWatchingEmbedder()
    index = Index.open(Vault(hashing_example), embedder, defer_embedding=True)
    embedder.index = index
    try:
        while index.backfill(64):
            pass
        embedder.under_lock = []
        memory = next(m for m in index.all_memories() if m.collection != "working")
        path = hashing_example / memory.path
        path.write_text(path.read_text() + "\nOne more sentence about the quokka connection pool.\n")
        report = index.sync([memory.path])  # as the watcher syncs a saved file
        assert report.embedded > 0 and report.deferred == 0 and not index.waiting_units()  # searchable by meaning now
        assert embedder.under_lock and not any(embedder.under_lock)
    finally:
        index.close()
