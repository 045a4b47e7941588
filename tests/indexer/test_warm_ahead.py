"""While a served vault is idle, what a search would decode the first time it reads it is decoded ahead: the most
frequent terms' keyword postings, then the manifest rows an open left as rows (indexer/warm_ahead.py)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Callable

import pytest

import indexer.keyword as keyword
from indexer.chunking import chunks_for
from indexer.in_flight import BUSY
from indexer.keyword import KeywordIndex, PostingsCache
from indexer.live import LiveIndex
from indexer.settings import WatchSettings
from indexer.warm_ahead import WarmAhead
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, reader
from tests.indexer.test_lazy_rows import answers, decoded_rows, root  # noqa: F401 - root is a fixture
from tests.indexer.test_keyword import memory
from vault.parse import parse

TIMEOUT = 20.0
GO_ON = lambda: True  # noqa: E731
STOP = lambda: False  # noqa: E731


def built(folder: Path, count: int = 300) -> None:
    """Three segments, one with deletions; "note" is in every title, so its lists span several blocks."""
    index = KeywordIndex.create(folder)
    memories = [memory(n, "history") for n in range(count)]
    for start in range(0, count, count // 3):
        index.replace([(m, chunks_for(m)) for m in memories[start:start + count // 3]])
    index.replace([], removed_ids=[memories[1].id, memories[count - 2].id])
    index.close()


def decoded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The (field, term) of every posting list decoded from Whoosh from now on."""
    seen: list[tuple[str, str]] = []
    real = keyword._postings

    def counted(reader, field, term, read_blocks=True):  # type: ignore[no-untyped-def]
        seen.append((field, term))
        return real(reader, field, term, read_blocks)

    monkeypatch.setattr(keyword, "_postings", counted)
    return seen


def test_after_warming_a_search_decodes_no_posting_list_and_answers_as_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    built(tmp_path / "kw")
    cold, warm = KeywordIndex.open(tmp_path / "kw"), KeywordIndex.open(tmp_path / "kw")
    steps = []
    added = warm.warm_postings(1.0, lambda: steps.append(1) or True)
    assert added == warm.cached_postings() > 0
    assert len(steps) > added // 128, "a list of several blocks lets a request go first between them"
    seen = decoded(monkeypatch)
    for text in ("postgres lock", "note celery retry worker queue", "deploy the vault index"):
        assert warm.search(text, 1000, None, 0, 0.35) == cold.search(text, 1000, None, 0, 0.35)
        assert all(h.own_terms for h in warm.search(text, 10))
    assert seen and all(field in keyword.SEARCH_FIELDS for field, _ in seen)  # the cold index decoded them
    seen.clear()
    warm.search("note celery retry worker queue", 1000, None, 0, 0.35)
    assert seen == []
    cold.close(), warm.close()


def test_warming_stops_at_its_share_of_the_cache_with_the_most_frequent_terms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    built(tmp_path / "kw")
    index = KeywordIndex.open(tmp_path / "kw")
    room = 400
    added = index.warm_postings(room / PostingsCache().limit, GO_ON)
    assert 0 < added == index.cached_postings() <= room
    seen = decoded(monkeypatch)
    index.search("note", 10)  # in every title: the most frequent term of all, warmed first
    assert ("title", "note") not in seen
    index.search("statement", 10)  # in a share of the titles only: left to the search
    assert ("title", "statement") in seen
    index.close()


def test_a_term_in_fewer_than_its_share_of_a_segments_documents_is_left_to_the_searches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    index = KeywordIndex.create(tmp_path / "kw")
    memories = [memory(n, "history") for n in range(int(2.5 / keyword.COMMON_SHARE))]
    rare = parse(b"---\nid: m-0000ffff\ncollection: history\ntype: learning\ntitle: Zebra\n---\nA zebra crossing.\n",
                 "history/zebra.md")
    index.replace([(m, chunks_for(m)) for m in [*memories, rare]])
    assert index.warm_postings(1.0, GO_ON) > 0
    seen = decoded(monkeypatch)
    index.search("zebra note", 10)
    assert ("body", "zebra") in seen and ("title", "note") not in seen
    index.close()


def test_warming_cancelled_or_on_a_closed_index_decodes_nothing(tmp_path: Path):
    built(tmp_path / "kw")
    index = KeywordIndex.open(tmp_path / "kw")
    assert index.warm_postings(1.0, STOP) == 0 == index.cached_postings()
    index.close()
    assert index.warm_postings(1.0, GO_ON) == 0


def test_rows_decoded_ahead_are_those_an_open_left_and_a_search_then_decodes_none(root: Path, monkeypatch: pytest.MonkeyPatch):
    open_index(root).close()
    index = reader(root)
    whole = reader(root)
    list(whole.all_memories())
    decoded = decoded_rows(monkeypatch)
    assert index.decode_rows_ahead(GO_ON) == index.memory_count() - 2  # two decoded by the open
    assert sorted(decoded) == sorted(set(decoded)) and len(decoded) == index.memory_count() - 2
    decoded.clear()
    assert answers(index) == answers(whole)
    assert decoded == [] and index.decode_rows_ahead(GO_ON) == 0
    index.close(), whole.close()


def test_decoding_rows_ahead_stops_when_cancelled(root: Path, monkeypatch: pytest.MonkeyPatch):
    open_index(root).close()
    index = reader(root)
    decoded = decoded_rows(monkeypatch)
    assert index.decode_rows_ahead(STOP) == 0 and decoded == []
    index.close()


def live_vault(root: Path, count: int = 30) -> None:
    for n in range(count):
        path = write(root, f"history/note{n}.md", memory_text(f"m-{n:08x}", f"Note {n}", "deploy the worker queue"))
        os.utime(path, (path.stat().st_mtime - 3600,) * 2)  # not within the mtime's tick: the reconcile decodes no row
    open_index(root).close()


def watched(ahead: WarmAhead, on_step: Callable[[], None]) -> list[float]:
    """Calls `on_step` at each step the decoding is let take; returns the index's quiet seconds at each."""
    quiet: list[float] = []
    real = ahead._go_on

    def go_on() -> bool:
        going = real()
        if going:
            quiet.append(ahead.index.quiet_seconds())
            on_step()
        return going

    ahead._go_on = go_on  # type: ignore[method-assign]
    return quiet


def test_nothing_is_decoded_while_a_search_is_in_flight_and_it_starts_after_the_quiet_period(hashing_root: Path, monkeypatch: pytest.MonkeyPatch):
    live_vault(hashing_root)
    index = open_index(hashing_root)
    whole = reader(hashing_root)
    list(whole.all_memories())
    decoded = decoded_rows(monkeypatch)
    ahead = WarmAhead(index, quiet=0.2)
    quiet_at_steps = watched(ahead, lambda: None)
    with index.searches.running():
        ahead.start()
        assert ahead.wait_held_back(2, TIMEOUT)
        assert index._keyword.cached_postings() == 0 and decoded == [] and quiet_at_steps == []
    assert ahead.done.wait(TIMEOUT)
    assert min(quiet_at_steps) >= 0.2
    assert ahead.postings > 0 and index._keyword.cached_postings() >= ahead.postings
    assert ahead.rows == 30 == len(set(decoded))
    assert answers(index) == answers(whole)
    ahead.stop()
    index.close(), whole.close()


def test_a_request_that_comes_mid_way_holds_every_later_step_back_until_the_quiet_period(hashing_root: Path):
    live_vault(hashing_root)
    index = open_index(hashing_root)
    ahead = WarmAhead(index, quiet=0.05)
    request = contextlib.ExitStack()
    came = threading.Event()
    busy_at_steps: list[int] = []

    def step() -> None:
        busy_at_steps.append(BUSY.count())
        if len(busy_at_steps) == 3:  # a hook's request arrives between two steps
            request.enter_context(BUSY.running())
            came.set()

    watched(ahead, step)
    ahead.start()
    assert came.wait(TIMEOUT)
    held = ahead.held_back
    assert ahead.wait_held_back(held + 2, TIMEOUT)  # waiting, not stepping
    steps_while_asked = len(busy_at_steps)
    request.close()
    assert ahead.done.wait(TIMEOUT)
    assert steps_while_asked == 3 and busy_at_steps[3:] and not any(busy_at_steps[3:])
    assert ahead.rows == 30
    index.close()


def test_a_live_index_stopped_while_its_decoding_is_held_back_ends_it_with_nothing_decoded(hashing_root: Path, monkeypatch: pytest.MonkeyPatch):
    live_vault(hashing_root)
    index = open_index(hashing_root)
    decoded = decoded_rows(monkeypatch)
    with index.searches.running():
        live = LiveIndex(index, WatchSettings(rescan_seconds=0.0)).start()
        assert live.ahead.wait_held_back(1, TIMEOUT)
        live.stop()
    assert live.ahead.done.is_set() and live.ahead.postings == 0 == live.ahead.rows and decoded == []
    assert index._keyword.cached_postings() == 0
    index.close()


def files_open_under(folder: Path) -> list[str]:
    """The descriptors this process holds on files in `folder` (deleted ones too)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(str(folder) + os.sep):
                found.append(target)
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors through /proc")
def test_a_reindex_under_the_decoding_ahead_lets_the_old_generation_go_and_warms_the_new_one(hashing_root: Path):
    from indexer.rebuild import reindex

    live_vault(hashing_root)
    index = open_index(hashing_root)
    old, old_keyword = index.generation, index._keyword
    ahead = WarmAhead(index, quiet=0.05)
    with BUSY.running():  # a request in flight: every step is held back
        ahead.start()
        assert ahead.wait_held_back(1, TIMEOUT)  # in its first step: readers of the old segments are open
        assert files_open_under(old / "keyword")
        reindex(index)  # `memdir reindex` through the server: a new generation swapped in, the old one removed
        assert index.generation != old and not old.exists()
        assert ahead.wait_held_back(ahead.held_back + 2, TIMEOUT)  # it looked again since
        assert files_open_under(old) == [], "the old generation's deleted files are held open"
    assert ahead.done.wait(TIMEOUT)
    assert old_keyword.cached_postings() == 0, "a closed generation's postings were decoded"
    assert index._keyword.cached_postings() > 0 and ahead.postings > 0, "the new generation is not warmed"
    assert index._entries._undecoded == 0
    index.close()


def test_warming_between_a_merges_commit_and_its_switch_to_the_merged_segment_leaves_the_merged_ones_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A merge commits beside the searches and takes the lock only to switch to its segment; meanwhile the searcher
    still reads the segments it merged, whose files the commit deleted."""
    from whoosh.writing import SegmentWriter

    built(tmp_path / "kw")
    index = KeywordIndex.open(tmp_path / "kw")
    committed = threading.Event()
    real = SegmentWriter.commit

    def commit(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        real(self, *args, **kwargs)
        committed.set()

    monkeypatch.setattr(SegmentWriter, "commit", commit)
    merge = threading.Thread(target=index.compact)
    with index._lock:  # the merge waits here to switch searchers
        merge.start()
        assert committed.wait(TIMEOUT)
        assert index.warm_postings(1.0, GO_ON) == 0  # every segment it would read was merged away
    merge.join(TIMEOUT)
    assert not merge.is_alive()
    assert index.warm_postings(1.0, GO_ON) > 0  # the merged segment, once switched to
    cold = KeywordIndex.open(tmp_path / "kw")
    assert index.search("note celery retry", 100) == cold.search("note celery retry", 100)
    index.close(), cold.close()
