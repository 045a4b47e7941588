"""Editors that save in place (truncate, then write) racing memdir's reads: the index ends on the finished file.

The interleavings are driven by hooks (the index's read, the writer's pause between two looks),
never by sleeping; coarse file-system timestamps are simulated by setting an mtime back with utime.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexer.curator import Curator
from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, top_ids
from vault import atomic
from vault.errors import ParseError
from vault.parse import parse
from vault import write as vault_write
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
PATH = "history/locks.md"
MARK = "Edited by a human while memdir was scoring."


def locks(body: str = "Imports take pg_advisory_xact_lock keyed by account.", uses: int = 2) -> str:
    return memory_text("m-00000001", "Import lock", body, extra=f"uses: {uses}\n")


def same_tick(path: Path, as_of: os.stat_result) -> None:
    """Give `path` the mtime `as_of` had: what a file system with a coarse clock does within one tick."""
    os.utime(path, ns=(as_of.st_atime_ns, as_of.st_mtime_ns))


@pytest.fixture
def index(hashing_root: Path):
    write(hashing_root, PATH, locks())
    index = open_index(hashing_root)
    yield index
    index.close()


def test_a_save_of_the_same_size_within_one_mtime_tick_is_indexed(index: Index):
    path = index.root / PATH
    before = path.stat()
    path.write_text(locks(uses=7))  # same size, same mtime: only the content tells
    same_tick(path, before)
    index.sync()
    assert index.get("m-00000001").uses == 7


def test_a_file_untouched_for_longer_than_the_coarsest_tick_is_not_read_again(index: Index, monkeypatch):
    path = index.root / PATH
    old = path.stat().st_mtime_ns - 3_000_000_000
    os.utime(path, ns=(old, old))
    index.sync()  # records the old mtime
    reads: list[Path] = []
    real_read = atomic.read_bytes
    monkeypatch.setattr(atomic, "read_bytes", lambda p: reads.append(p) or real_read(p))
    index.sync()
    assert reads == [] and index.get("m-00000001").uses == 2


def test_a_sync_that_reads_a_file_mid_save_keeps_the_memory_then_indexes_the_finished_file_of_the_same_size_and_mtime(
        index: Index, monkeypatch):
    path = index.root / PATH
    before = path.stat()
    finished = locks(body="Imports take pg_advisory_xact_lock keyed by the file")
    assert len(finished) == before.st_size
    real_read = atomic.read_bytes

    def editor_truncates_after_the_stat(p: Path) -> bytes | None:
        if p == path and path.stat().st_size:
            path.write_bytes(b"")  # the editor opened the file for writing: the index reads it empty
        return real_read(p)

    monkeypatch.setattr(atomic, "read_bytes", editor_truncates_after_the_stat)
    report = index.sync([PATH])
    monkeypatch.setattr(atomic, "read_bytes", real_read)
    assert report.held == [PATH]  # it read an empty file: the memory is kept as it was, to be looked at again
    assert index.get("m-00000001").body.startswith("Imports take pg_advisory_xact_lock keyed by account")
    path.write_text(finished)  # the editor's save lands: same size, and within the same tick
    same_tick(path, before)
    index.sync()
    assert index.get("m-00000001").body.startswith("Imports take pg_advisory_xact_lock keyed by the file")
    assert top_ids(index, "advisory lock keyed by file") == ["m-00000001"]


def curator_for(index: Index) -> Curator:
    return Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())


def test_scoring_while_an_editor_saves_in_place_keeps_the_memory_its_counters_and_the_edit(
        index: Index, monkeypatch):
    path = index.root / PATH
    real_sync = index.sync
    saves: list[str] = []

    def editor_truncates_before_our_sync(*args, **kwargs):
        if not saves:  # memdir's write landed; the editor (which reloaded it) opens the file to save
            saves.append(path.read_text().rstrip("\n") + f"\n\n{MARK}\n")
            path.write_bytes(b"")
        return real_sync(*args, **kwargs)

    monkeypatch.setattr(index, "sync", editor_truncates_before_our_sync)
    monkeypatch.setattr(vault_write, "pause", lambda seconds: path.write_text(saves[0]))  # ... and writes it
    [scored] = curator_for(index).score({"m-00000001": "worked"}, now=NOW)
    memory = index.get("m-00000001")
    assert scored.changes["uses"] == 3 and memory.uses == 3 and MARK in memory.body


def test_a_memory_broken_for_good_right_after_a_score_is_reported_with_file_line_and_reason(
        index: Index, monkeypatch):
    path = index.root / PATH
    real_sync = index.sync
    broken = locks().replace("title: Import lock", "title: [unclosed")

    def editor_breaks_it(*args, **kwargs):
        path.write_text(broken)
        return real_sync(*args, **kwargs)

    monkeypatch.setattr(index, "sync", editor_breaks_it)
    monkeypatch.setattr(vault_write, "pause", lambda seconds: None)
    [scored] = curator_for(index).score({"m-00000001": "worked"}, now=NOW)
    assert scored.changes["uses"] == 3  # written, then broken by someone else
    with pytest.raises(ParseError) as broken_file:
        parse(broken.encode(), PATH)
    assert [(p.path, p.line, p.reason) for p in index.problems()] == [(PATH, 6, broken_file.value.reason)]
    assert path.read_text() == broken and "m-00000001" not in [m.id for m in index.all_memories()]


def test_a_save_from_a_copy_older_than_a_score_is_kept_as_saved_and_the_next_score_builds_on_it(index: Index):
    """The stale editor buffer: memdir does not re-apply the counters the save dropped (bench/results/trust.md, "Issue
    17: saves in place racing memdir"): by their content such a save and a deliberate revert (git stash, git
    restore, undo and save) are the same file, and writing into the second breaks the user's next step."""
    path = index.root / PATH
    buffer = path.read_text()  # the editor read the file ...
    curator = curator_for(index)
    curator.score({"m-00000001": "worked"}, now=NOW)  # ... memdir's score landed (uses 2 -> 3) ...
    saved = buffer.rstrip("\n") + f"\n\n{MARK}\n"
    path.write_text(saved)  # ... and the editor saved its buffer in place, without reloading
    index.sync()
    assert path.read_text() == saved and index.get("m-00000001").uses == 2
    curator.score({"m-00000001": "worked"}, now=NOW)
    memory = index.get("m-00000001")
    assert memory.uses == 3 and MARK in memory.body


def test_the_live_index_takes_the_finished_save_after_reading_it_mid_save(hashing_root: Path, monkeypatch):
    from indexer.live import LiveIndex
    from indexer.settings import WatchSettings

    write(hashing_root, PATH, locks())
    index = open_index(hashing_root)
    path = index.root / PATH
    before = path.stat()
    finished = locks(body="Imports take pg_advisory_xact_lock keyed by the file")
    real_read = atomic.read_bytes

    def editor_truncates_after_the_stat(p: Path) -> bytes | None:
        monkeypatch.setattr(atomic, "read_bytes", real_read)
        path.write_bytes(b"")
        return real_read(p)

    with LiveIndex(index, WatchSettings(debounce_seconds=0.1, max_wait_seconds=1.0, rescan_seconds=0.0)) as live:
        seen = live.syncs
        monkeypatch.setattr(atomic, "read_bytes", editor_truncates_after_the_stat)
        index.sync([PATH])  # a sync (the curator's, or a batch flushed by max_wait) catches the save half done
        path.write_text(finished)  # the save lands: same size, same mtime tick
        same_tick(path, before)
        while "m-00000001" not in index or "by the file" not in index.get("m-00000001").body:
            assert live.wait_for_sync(seen, 20.0), "the finished save never reached the index"
            seen = live.syncs
    assert top_ids(index, "advisory lock keyed by file") == ["m-00000001"]
    index.close()


def test_a_memory_whose_file_is_found_empty_mid_save_stays_searchable_and_is_not_embedded_again(hashing_root: Path):
    write(hashing_root, PATH, locks())
    embedder = HashingEmbedder()
    index = open_index(hashing_root, embedder)
    embedded = embedder.texts_embedded
    path = index.root / PATH
    path.write_bytes(b"")  # the editor truncated the file to save it in place; its write has not landed yet
    report = index.sync([PATH])
    assert report.held == [PATH] and report.removed == 0 and report.added == 0
    assert embedder.texts_embedded == embedded
    assert top_ids(index, "advisory lock keyed by account") == ["m-00000001"]  # still found meanwhile
    embedded = embedder.texts_embedded  # (the query)
    path.write_text(locks(uses=3))  # the save lands
    assert index.sync([PATH]).held == [] and index.get("m-00000001").uses == 3
    assert embedder.texts_embedded == embedded  # a counter change, and nothing in between: nothing to embed
    index.close()


def test_a_memory_file_emptied_on_purpose_is_indexed_as_empty_once_it_is_no_longer_fresh(index: Index):
    path = index.root / PATH
    path.write_bytes(b"")
    long_ago = path.stat().st_mtime_ns - 5_000_000_000  # emptied seconds ago and left so: no save in progress
    os.utime(path, ns=(long_ago, long_ago))
    report = index.sync([PATH])
    assert report.held == [] and "m-00000001" not in index


def test_an_empty_file_stamped_within_a_coarse_clock_tick_is_still_taken_for_a_save_in_progress(index: Index):
    path = index.root / PATH
    path.write_bytes(b"")
    a_tick_ago = time.time_ns() - 1_500_000_000  # FAT stamps in 2 s steps
    os.utime(path, ns=(a_tick_ago, a_tick_ago))
    assert index.sync([PATH]).held == [PATH] and "m-00000001" in index


def test_an_empty_file_with_a_future_mtime_is_held_no_longer_than_memdirs_own_save_window(index: Index, monkeypatch):
    import indexer.index as index_module

    path = index.root / PATH
    path.write_bytes(b"")
    ahead = time.time_ns() + 30_000_000_000  # a skewed clock, an archive restore, touch -d
    os.utime(path, ns=(ahead, ahead))
    clock = [1000.0]
    monkeypatch.setattr(index_module, "held_clock", lambda: clock[0])
    assert index.sync([PATH]).held == [PATH]
    clock[0] += index_module.SAVE_IN_PROGRESS_SECONDS + 0.1
    assert index.sync([PATH]).held == [] and "m-00000001" not in index


def test_once_nothing_is_held_the_index_equals_a_rebuild_of_the_emptied_file(index: Index, monkeypatch):
    import indexer.index as index_module
    from tests.reliability.harness import drift

    (index.root / PATH).write_bytes(b"")
    clock = [1000.0]
    monkeypatch.setattr(index_module, "held_clock", lambda: clock[0])
    assert index.sync().held == [PATH]
    clock[0] += index_module.SAVE_IN_PROGRESS_SECONDS
    assert index.sync().held == [] and drift(index) == []


def test_the_live_index_looks_again_at_a_file_left_empty_and_then_indexes_it_as_empty(hashing_root: Path):
    from indexer.live import LiveIndex
    from indexer.settings import WatchSettings

    write(hashing_root, PATH, locks())
    index = open_index(hashing_root)
    path = index.root / PATH
    with LiveIndex(index, WatchSettings(debounce_seconds=0.05, max_wait_seconds=0.5, rescan_seconds=0.0)) as live:
        seen = live.syncs
        path.write_bytes(b"")  # emptied and left so: first taken for a save in progress, then for what it is
        held_once = False
        while "m-00000001" in index:
            assert live.wait_for_sync(seen, 20.0), "the emptied file never reached the index"
            seen = live.syncs
            held_once = held_once or bool(live.last_report and live.last_report.held)
    assert held_once and "m-00000001" not in index
    index.close()
