"""A pull's sync pauses the cyclic garbage collector only while it reads, chunks and stages its batch (issue 32
item 4): the collector is every thread's, and a watcher cutting a long pull into batches kept it off while they
waited in line behind an earlier keyword commit. Pauses of several threads overlap correctly, and a batch that
fails gives its pause back."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from indexer.embed import HashingEmbedder
from indexer.index import Index
from vault import Vault

from .helpers import rebuilt_state, state
from .test_pull_three_batches import third_part
from .test_pull_two_batches import BOUND, commit_held_open, first_part, second_part


def _part_of(docs) -> str:  # type: ignore[no-untyped-def]
    """Which part of the pull a keyword write's documents are (the third rewrites one of the second's notes)."""
    ids = {memory.id for memory, _ in docs}
    return "third" if any(i.startswith("m-third") for i in ids) else "second" if any(
        i.startswith("m-late") for i in ids) else "first"


class _Pull:
    """Three syncs of a pull cut in three batches, each on its own thread, the first's Whoosh commit held open."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.committing, self.release, _ = commit_held_open(index)
        self.handed_on = {part: threading.Event() for part in ("first", "second", "third")}
        self.failed: dict[str, BaseException] = {}
        self.threads: list[threading.Thread] = []

    def start(self, part: str, paths: list[str]) -> None:
        def run() -> None:
            try:
                self.index.sync(paths, keyword_commit_began=self.handed_on[part].set)
            except BaseException as exc:  # noqa: BLE001 - the test looks at it
                self.failed[part] = exc
                self.handed_on[part].set()

        self.threads.append(threading.Thread(target=run))
        self.threads[-1].start()

    def finish(self) -> None:
        self.release.set()
        for thread in self.threads:
            thread.join(BOUND)
        assert not any(thread.is_alive() for thread in self.threads)


@pytest.fixture
def index(hashing_example: Path):  # type: ignore[no-untyped-def]
    assert gc.isenabled()
    opened = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    yield opened
    opened.close()
    gc.enable()  # a failing test must not leave it off for the tests after it


def test_the_collector_is_on_while_a_pull_batch_waits_behind_an_earlier_commit(index: Index, hashing_example: Path):
    pull = _Pull(index)
    try:
        pull.start("first", first_part(hashing_example))
        assert pull.committing.wait(BOUND)
        assert gc.isenabled(), "off while the first batch's Whoosh commit runs"
        pull.start("second", second_part(hashing_example))
        assert pull.handed_on["second"].wait(BOUND)  # read, chunked and staged: it waits for the first's commit
        assert gc.isenabled(), "off while the second batch waits in line"
    finally:
        pull.finish()
    assert gc.isenabled()
    assert not pull.failed


def test_a_batch_that_fails_gives_the_collector_back_while_others_still_wait_and_the_line_moves_on(
        index: Index, hashing_example: Path):
    keyword = index._keyword
    staging = keyword.stage_ahead

    def failing_for_the_third(docs, removed=()):  # type: ignore[no-untyped-def]
        if _part_of(docs) == "third":
            raise OSError("disk gone while the third batch staged")
        return staging(docs, removed)

    keyword.stage_ahead = failing_for_the_third  # type: ignore[method-assign]
    pull = _Pull(index)
    merged = threading.Thread(target=index.merge_keywords)
    try:
        pull.start("first", first_part(hashing_example))
        assert pull.committing.wait(BOUND)
        pull.start("second", second_part(hashing_example))
        assert pull.handed_on["second"].wait(BOUND)
        pull.start("third", third_part(hashing_example))
        assert pull.handed_on["third"].wait(BOUND)
        assert isinstance(pull.failed.get("third"), OSError)
        assert gc.isenabled(), "off after the third batch failed in its paused staging"
        merged.start()  # a writer after the failed batch: it must not wait for a batch that left
    finally:
        pull.finish()
    merged.join(BOUND)
    assert not merged.is_alive()
    assert gc.isenabled()
    assert set(pull.failed) == {"third"}


def test_two_batches_staging_on_two_threads_keep_the_collector_off_until_both_have_staged(
        index: Index, hashing_example: Path, tmp_path: Path):
    keyword = index._keyword
    staging = keyword.stage_ahead
    inside = {part: threading.Event() for part in ("second", "third")}
    go_on = {part: threading.Event() for part in ("second", "third")}

    def held_in_staging(docs, removed=()):  # type: ignore[no-untyped-def]
        part = _part_of(docs)
        inside[part].set()
        assert go_on[part].wait(BOUND)
        return staging(docs, removed)

    keyword.stage_ahead = held_in_staging  # type: ignore[method-assign]
    pull = _Pull(index)
    try:
        pull.start("first", first_part(hashing_example))
        assert pull.committing.wait(BOUND)
        pull.start("second", second_part(hashing_example))
        assert inside["second"].wait(BOUND)
        pull.start("third", third_part(hashing_example))
        assert inside["third"].wait(BOUND)
        assert not gc.isenabled(), "on while two batches stage"
        go_on["second"].set()
        assert pull.handed_on["second"].wait(BOUND)
        assert not gc.isenabled(), "on while the third batch still stages"
        go_on["third"].set()
        assert pull.handed_on["third"].wait(BOUND)
        assert gc.isenabled(), "off while both batches only wait in line behind the first's commit"
    finally:
        for event in go_on.values():
            event.set()
        pull.finish()
    assert gc.isenabled()
    assert not pull.failed
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(hashing_example, tmp_path)
