"""A pull the watcher cuts in two batches (issue 32 item 4): the second batch is read, and keyword-searchable,
while Whoosh still commits the first; its answers then are the answers after both commits, and the index
ends equal to a rebuild."""

from __future__ import annotations

import threading
from pathlib import Path

from indexer.embed import HashingEmbedder
from indexer.index import KEYWORD_BESIDE_SEARCHES, Index
from indexer.live import LiveIndex
from indexer.settings import WatchSettings
from vault import Vault

from .helpers import rebuilt_state, state, top_ids

BOUND = 60.0  # seconds: never reached unless the second batch waits for the first one's commit
PART = KEYWORD_BESIDE_SEARCHES + 20  # each part is a big write: committed beside searches
QUERIES = ("zanzibar5", "zanzibar6", "zanzibar7", "wombat", "quokka3", "celery retries idempotent")


def note(root: Path, name: str, memory_id: str, title: str, body: str, front: str = "") -> None:
    """Write a fact memory in memory_bank/ (`front`: more frontmatter lines)."""
    (root / "memory_bank" / name).write_text(
        f"---\nid: {memory_id}\ncollection: memory_bank\ntype: fact\ntitle: {title}\n{front}---\n{body}\n")


def first_part(root: Path) -> list[str]:
    """New memories, and a teammate deleted one (m-a4c81f63, celery retries)."""
    for n in range(PART):
        note(root, f"pulled-{n}.md", f"m-pull{n:04d}", f"Pulled note {n}", f"The zanzibar{n} service answers on port {8000 + n}.")
    (root / "patterns" / "retry-celery-tasks-idempotently.md").unlink()
    return [f"memory_bank/pulled-{n}.md" for n in range(PART)] + ["patterns/retry-celery-tasks-idempotently.md"]


def second_part(root: Path) -> list[str]:
    """More new memories, and two of the first part's again: one changed, one deleted (written twice in one pull)."""
    for n in range(PART):
        note(root, f"later-{n}.md", f"m-late{n:04d}", f"Later note {n}", f"The quokka{n} flag is set.")
    note(root, "pulled-5.md", "m-pull0005", "Pulled note 5", "Edited: the wombat service moved to port 9005.")
    (root / "memory_bank" / "pulled-6.md").unlink()
    return [f"memory_bank/later-{n}.md" for n in range(PART)] + ["memory_bank/pulled-5.md", "memory_bank/pulled-6.md"]


def commit_held_open(index: Index) -> tuple[threading.Event, threading.Event, threading.Event]:
    """(committing, release, staged_ahead): the first big keyword write's Whoosh commit sets `committing` and waits
    for `release`; `staged_ahead` is set once a later write made its documents searchable ahead of its own write."""
    committing, release, staged_ahead = threading.Event(), threading.Event(), threading.Event()
    keyword = index._keyword
    real_writer, real_stage_ahead = keyword._ix.writer, keyword.stage_ahead

    def writer(*args, **options):  # type: ignore[no-untyped-def]
        opened = real_writer(*args, **options)
        real_commit = opened.commit

        def commit(*a, **k):  # type: ignore[no-untyped-def]
            if not committing.is_set() and opened.docnum >= KEYWORD_BESIDE_SEARCHES:  # documents it added
                committing.set()
                release.wait(BOUND)
            return real_commit(*a, **k)

        opened.commit = commit
        return opened

    def stage_ahead(*args, **options):  # type: ignore[no-untyped-def]
        staged = real_stage_ahead(*args, **options)
        staged_ahead.set()
        return staged

    keyword._ix.writer = writer  # type: ignore[method-assign]
    keyword.stage_ahead = stage_ahead  # type: ignore[method-assign]
    return committing, release, staged_ahead


def staged_until(index: Index, staged_ahead: threading.Event, expected: dict[str, list[str]]) -> None:
    """Wait (bounded) until the keyword answers are `expected`, looking again after each staging ahead: a part
    written on a busy machine can reach the watcher in more than one batch, each staged while the first commits."""
    while True:
        staged_ahead.clear()  # cleared before looking: a staging after the look sets it again
        if {query: top_ids(index, query, mode="keyword") for query in expected} == expected:
            return
        assert staged_ahead.wait(BOUND), "a later batch waited for the first one's commit"


def answers(index: Index) -> dict[str, list[str]]:
    return {query: top_ids(index, query, mode="keyword") for query in QUERIES}


def test_a_second_batch_is_searchable_while_the_first_commits_and_both_end_as_a_rebuild(hashing_example: Path,
                                                                                       tmp_path: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    committing, release, staged_ahead = commit_held_open(index)
    began = threading.Event()
    try:
        first = threading.Thread(target=index.sync, args=(first_part(hashing_example),),
                                 kwargs={"keyword_commit_began": began.set})
        first.start()
        assert committing.wait(BOUND) and began.is_set()
        second = threading.Thread(target=index.sync, args=(second_part(hashing_example),))
        second.start()
        assert staged_ahead.wait(BOUND), "the second batch waited for the first one's commit before staging"
        during = answers(index)
        release.set()
        first.join(BOUND)
        second.join(BOUND)
        assert not first.is_alive() and not second.is_alive()
        after = answers(index)
        current = {k: v for k, v in state(index).items() if k != "vectors"}
    finally:
        release.set()
        index.close()
    assert during["wombat"] == ["m-pull0005"] and during["zanzibar5"] == []  # the second batch's version of it
    assert during["zanzibar6"] == [] and during["quokka3"] == ["m-late0003"] and during["zanzibar7"] == ["m-pull0007"]
    assert "m-a4c81f63" not in during["celery retries idempotent"]
    assert during == after
    assert current == rebuilt_state(hashing_example, tmp_path)


def test_the_watcher_hands_on_the_next_batch_while_the_first_commits(hashing_example: Path, tmp_path: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    committing, release, staged_ahead = commit_held_open(index)
    # A quiet second before a batch: on a busy machine a 0.1 s pause while the first part is written cut it into
    # batches under KEYWORD_BESIDE_SEARCHES, and no commit was held open (the second part may come in several)
    live = LiveIndex(index, WatchSettings(debounce_seconds=1.0, max_wait_seconds=10.0, rescan_seconds=0.0)).start()
    try:
        first_part(hashing_example)
        assert committing.wait(BOUND)
        second_part(hashing_example)
        assert staged_ahead.wait(BOUND), "the watcher's next batch waited for the first batch's commit"
        staged_until(index, staged_ahead, {"quokka3": ["m-late0003"], "wombat": ["m-pull0005"]})
        release.set()
    finally:
        release.set()
        live.stop()  # applies what is pending, and waits for every batch being applied
    try:
        current = {k: v for k, v in state(index).items() if k != "vectors"}
    finally:
        index.close()
    assert current == rebuilt_state(hashing_example, tmp_path)
