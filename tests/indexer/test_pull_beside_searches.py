"""A big pull into a served vault: searches answer while the sync writes its keyword documents (issue 32 item 4),
from the last committed keyword state, and once the sync is done the index equals a rebuild."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from indexer.embed import HashingEmbedder
from indexer.index import KEYWORD_BESIDE_SEARCHES, Index
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from vault import Vault

from .helpers import fresh_rebuild, state

BOUND = 60.0  # seconds: never reached unless a search waits for the whole sync
PULLED = KEYWORD_BESIDE_SEARCHES + 20


def pulled(root: Path) -> None:
    """What `git pull` brings: many new memories, and a teammate deleted one (m-a4c81f63, celery retries)."""
    for n in range(PULLED):
        (root / "memory_bank" / f"pulled-{n}.md").write_text(
            f"---\nid: m-pull{n:04d}\ncollection: memory_bank\ntype: fact\ntitle: Pulled note {n}\n---\n"
            f"The zanzibar{n} service answers on port {8000 + n}.\n")
    (root / "patterns" / "retry-celery-tasks-idempotently.md").unlink()


def search(index: Index, query: str, mode: str = "keyword") -> list[str]:
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    return [h.memory.id for h in searcher.search(SearchRequest(query=query, mode=mode, limit=5))]


def held_open(index: Index) -> tuple[threading.Event, threading.Event]:
    """(writing, release): a big keyword write sets `writing`, then stays in progress until `release` is set."""
    writing, release = threading.Event(), threading.Event()
    real_replace = index._keyword.replace

    def replace_held_open(docs, removed=(), **options):  # type: ignore[no-untyped-def]
        if len(docs) >= KEYWORD_BESIDE_SEARCHES:
            writing.set()
            release.wait(BOUND)
        return real_replace(docs, removed, **options)

    index._keyword.replace = replace_held_open  # type: ignore[method-assign]
    return writing, release


def test_searches_answer_while_a_big_pull_writes_its_keyword_documents(hashing_example: Path, tmp_path: Path):
    assert (hashing_example / "patterns" / "retry-celery-tasks-idempotently.md").exists()
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    writing, searched = held_open(index)  # the pull's keyword write stays in progress until the test has searched
    try:
        pulled(hashing_example)
        sync = threading.Thread(target=index.sync)
        sync.start()
        assert writing.wait(BOUND)
        during: dict[str, list[str]] = {}
        probe = threading.Thread(target=lambda: during.update(
            old=search(index, "celery retries idempotent"), new=search(index, "zanzibar7"),
            hybrid=search(index, "deploy pipeline", mode="hybrid")))
        probe.start()
        probe.join(BOUND / 2)
        answered = not probe.is_alive()
        searched.set()
        probe.join(BOUND)
        sync.join(BOUND)
        assert answered, "a search waited for the pull's keyword write"
        assert "m-a4c81f63" not in during["old"]  # deleted by the pull: its old keyword documents have no owner
        assert during["new"] == []  # not committed yet
        assert during["hybrid"]  # the rest of the vault answers as before
        assert search(index, "zanzibar7") == ["m-pull0007"]
        assert "m-a4c81f63" not in search(index, "celery retries idempotent")
        after = state(index)
    finally:
        searched.set()
        index.close()
    copy = tmp_path / "rebuilt"
    shutil.copytree(hashing_example, copy, ignore=shutil.ignore_patterns(".memdir"))
    rebuilt = fresh_rebuild(copy)
    try:
        expected = state(rebuilt)
    finally:
        rebuilt.close()
    assert {k: v for k, v in after.items() if k != "vectors"} == \
        {k: v for k, v in expected.items() if k != "vectors"}


def test_a_second_sync_waits_for_the_big_one_without_holding_the_index_lock(hashing_example: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    writing, release = held_open(index)
    try:
        pulled(hashing_example)
        big = threading.Thread(target=index.sync)
        big.start()
        assert writing.wait(BOUND)
        (hashing_example / "memory_bank" / "late.md").write_text(
            "---\nid: m-late0001\ncollection: memory_bank\ntype: fact\ntitle: Late note\n---\nThe quokka flag.\n")
        small = threading.Thread(target=index.sync, args=(["memory_bank/late.md"],))
        small.start()
        small.join(0.5)  # bounded: it must still be waiting for the big sync's keyword write
        assert small.is_alive()
        assert index.lock.acquire(timeout=BOUND / 2), "the waiting sync held the index lock"
        index.lock.release()
        release.set()
        big.join(BOUND)
        small.join(BOUND)
        assert not big.is_alive() and not small.is_alive()
        assert search(index, "quokka") == ["m-late0001"] and search(index, "zanzibar3") == ["m-pull0003"]
    finally:
        release.set()
        index.close()


def test_a_file_changed_after_the_pull_was_read_ahead_is_indexed_as_it_is_now(hashing_example: Path, tmp_path: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    real_read_ahead = index._read_ahead

    def then_edited(paths, *walk):  # type: ignore[no-untyped-def]
        ahead = real_read_ahead(paths, *walk)  # the pull's files read and parsed, before the sync takes the lock
        assert "memory_bank/pulled-5.md" in ahead
        (hashing_example / "memory_bank" / "pulled-5.md").write_text(  # an editor saves one of them meanwhile
            "---\nid: m-pull0005\ncollection: memory_bank\ntype: fact\ntitle: Pulled note 5\n---\n"
            "Edited: the wombat service moved to port 9005.\n")
        (hashing_example / "memory_bank" / "pulled-6.md").write_text("---\nid: [broken\n---\nnot yaml\n")
        return ahead

    index._read_ahead = then_edited  # type: ignore[method-assign]
    try:
        pulled(hashing_example)
        index.sync()
        assert search(index, "wombat") == ["m-pull0005"] and search(index, "zanzibar5") == []
        assert "m-pull0006" not in index and any(p.path == "memory_bank/pulled-6.md" for p in index.problems())
        after = state(index)
    finally:
        index.close()
    copy = tmp_path / "rebuilt"
    shutil.copytree(hashing_example, copy, ignore=shutil.ignore_patterns(".memdir"))
    rebuilt = fresh_rebuild(copy)
    try:
        assert after == {**state(rebuilt), "vectors": after["vectors"]}
    finally:
        rebuilt.close()
