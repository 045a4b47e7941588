"""A big pull's memories are keyword-searchable before Whoosh has committed them (issue 32 item 4): their documents
are searched beside Whoosh meanwhile (indexer/fresh_keywords.py), hide the old versions at once, and once Whoosh
has them the index equals a rebuild; a write that fails leaves nothing behind that Whoosh lacks."""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest

from indexer.chunking import chunks_for
from indexer.embed import HashingEmbedder
from indexer.index import KEYWORD_BESIDE_SEARCHES, Index
from indexer.keyword import KeywordFilter, KeywordIndex
from vault import Vault
from vault.model import Memory

from .helpers import rebuilt_state, state
from .test_pull_beside_searches import BOUND, PULLED, pulled, search

def whoosh_held_open(keyword: KeywordIndex) -> tuple[threading.Event, threading.Event]:
    """(writing, release): a big write, its documents already staged, waits for `release` before Whoosh's writer."""
    writing, release = threading.Event(), threading.Event()
    real_writer = keyword._ix.writer

    def writer_held_open(*args, **kwargs):  # type: ignore[no-untyped-def]
        if keyword._fresh:
            writing.set()
            release.wait(BOUND)
        return real_writer(*args, **kwargs)

    keyword._ix.writer = writer_held_open  # type: ignore[method-assign]
    return writing, release


def test_a_pulled_memory_is_found_by_its_words_before_whoosh_commits_it(hashing_example: Path, tmp_path: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    writing, release = whoosh_held_open(index._keyword)
    try:
        before_celery = search(index, "celery retries idempotent")
        assert "m-a4c81f63" in before_celery
        pulled(hashing_example)
        edited = hashing_example / "memory_bank" / "pulled-1.md"
        edited.write_text(edited.read_text().replace("The zanzibar1 service", "The `sms_outbox.dedupe_key` column"))
        sync = threading.Thread(target=index.sync)
        sync.start()
        assert writing.wait(BOUND)
        queries = {"new": "zanzibar7", "exact": "zanzibar42 port", "part": "dedupe_key", "whole": "sms_outbox.dedupe_key",
                   "gone": "celery retries idempotent", "many": "pulled note service port"}
        during: dict[str, list[str]] = {}
        probe = threading.Thread(target=lambda: during.update(
            {name: search(index, text) for name, text in queries.items()},
            hybrid=search(index, "zanzibar9 service", mode="hybrid")))
        probe.start()
        probe.join(BOUND)
        assert not probe.is_alive(), "a search waited for the pull's keyword write"
        assert not index._keyword.deleted_share() and index._keyword._fresh, "Whoosh has not committed yet"
        release.set()
        sync.join(BOUND)
        assert during["new"] == ["m-pull0007"] and during["exact"] == ["m-pull0042"]
        assert during["part"] == ["m-pull0001"] and during["whole"] == ["m-pull0001"]
        assert "m-a4c81f63" not in during["gone"]  # deleted by the pull: hidden at once
        assert during["hybrid"][0] == "m-pull0009"
        assert not index._keyword._fresh  # folded into Whoosh by the commit
        assert {name: search(index, text) for name, text in queries.items()} == \
            {name: during[name] for name in queries}  # what the commit would have answered
        after = {k: v for k, v in state(index).items() if k != "vectors"}
    finally:
        release.set()
        index.close()
    assert after == rebuilt_state(hashing_example, tmp_path)


def test_a_changed_memory_is_found_by_its_new_words_and_never_by_its_old_ones_meanwhile(hashing_example: Path,
                                                                                        tmp_path: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    writing, release = whoosh_held_open(index._keyword)
    try:
        pulled(hashing_example)
        (hashing_example / "patterns" / "retry-celery-tasks-idempotently.md").write_text(
            "---\nid: m-a4c81f63\ncollection: patterns\ntype: learning\ntitle: Retry with a quagga token\n---\n"
            "Retries carry a quagga token now.\n")
        sync = threading.Thread(target=index.sync)
        sync.start()
        assert writing.wait(BOUND)
        new, old = search(index, "quagga token"), search(index, "celery retries idempotent")
        release.set()
        sync.join(BOUND)
        assert new[0] == "m-a4c81f63"
        assert "m-a4c81f63" not in old  # its committed Whoosh documents still hold these words: hidden
        after = {k: v for k, v in state(index).items() if k != "vectors"}
    finally:
        release.set()
        index.close()
    assert after == rebuilt_state(hashing_example, tmp_path)


def memories(count: int, word: str) -> list[tuple[Memory, list]]:
    made = []
    for n in range(count):
        memory = Memory(id=f"m-{word}{n:04d}", path=f"notes/{word}-{n}.md", type="fact" if n % 2 else "decision",
                        collection="notes" if n % 3 else "ops", title=f"{word.title()} note {n}",
                        tags=("db",) if n % 4 == 0 else ("api",),
                        created_at=datetime(2026, 10, 1 + n % 28, 12, tzinfo=timezone.utc),
                        body=f"The {word} service runs job_{n % 5}.retry on port {8000 + n}. "
                             + "Shared words about deploys and queues. " * (1 + n % 3))
        made.append((memory, chunks_for(memory)))
    return made


def ranked(hits: list) -> list[tuple[float, int, frozenset, frozenset]]:
    """Hits by score (to 1e-9: the two sum the same terms in another order), ties by chunk id."""
    return sorted((-round(h.score, 9), h.chunk_id, h.own_terms, h.context_terms) for h in hits)


FILTERS = [None, KeywordFilter(collections=frozenset({"ops"})), KeywordFilter(types=frozenset({"fact"})),
           KeywordFilter(tags=frozenset({"DB"})), KeywordFilter(memory_ids=frozenset({"m-fresh0003", "m-old0004"})),
           KeywordFilter(excluded_ids=frozenset({"m-fresh0001"})), KeywordFilter(collections=frozenset()),
           KeywordFilter(created_after=datetime(2026, 10, 10, tzinfo=timezone.utc),
                         created_before=datetime(2026, 10, 20, tzinfo=timezone.utc))]


@pytest.mark.parametrize("filters", FILTERS, ids=range(len(FILTERS)))
def test_a_fresh_document_ranks_and_scores_as_whoosh_does_once_committed(tmp_path: Path, filters: KeywordFilter):
    keyword = KeywordIndex.create(tmp_path / "keyword")
    try:
        keyword.replace(memories(30, "old"))
        fresh = memories(12, "fresh")
        queries = ["fresh service", "deploys queues", "job_3.retry", "retry", "port 8004", "old note fresh"]
        keyword.stage(fresh)
        staged = {text: ranked(keyword.search(text, 100, filters, context_boost=0.35)) for text in queries}
        keyword.replace(fresh)
        assert not keyword._fresh
        for text in queries:  # every hit (100 > 42 documents), so a tie cut at k cannot differ
            assert staged[text] == ranked(keyword.search(text, 100, filters, context_boost=0.35)), text
        fresh_chunks = {chunk.chunk_id for _, chunks in fresh for chunk in chunks}
        found_fresh = {hit[1] for hits in staged.values() for hit in hits} & fresh_chunks
        assert found_fresh or (filters and filters.collections == frozenset())  # that one allows nothing
    finally:
        keyword.close()


def test_a_failed_keyword_write_leaves_no_fresh_documents_and_the_next_open_heals(hashing_example: Path,
                                                                                  tmp_path: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    real_writer = index._keyword._ix.writer

    def failing_writer(*args, **kwargs):  # type: ignore[no-untyped-def]
        writer = real_writer(*args, **kwargs)

        def failing_commit(**_):  # type: ignore[no-untyped-def]
            writer.cancel()  # what Whoosh leaves when its commit fails: nothing written, its files closed
            raise OSError("disk gone mid-commit")

        writer.commit = failing_commit
        return writer

    index._keyword._ix.writer = failing_writer  # type: ignore[method-assign]
    try:
        pulled(hashing_example)
        with pytest.raises(OSError, match="mid-commit"):
            index.sync()
        assert not index._keyword._fresh and search(index, "zanzibar7") == []
    finally:
        index._keyword._ix.writer = real_writer  # type: ignore[method-assign]
        index.close()
    reopened = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    try:
        assert search(reopened, "zanzibar7") == ["m-pull0007"]
        after = {k: v for k, v in state(reopened).items() if k != "vectors"}
    finally:
        reopened.close()
    assert after == rebuilt_state(hashing_example, tmp_path)
    assert PULLED >= KEYWORD_BESIDE_SEARCHES  # the pull took the big path


def test_a_stage_does_not_read_the_table_of_contents_a_merge_may_be_deleting(tmp_path: Path):
    """A stage runs with the index lock let go; a merge committing meanwhile deletes the table of contents Whoosh
    would read the schema from (review of session 8: FileNotFoundError, a batch left without keyword documents)."""
    keyword = KeywordIndex.create(tmp_path / "keyword")
    try:
        keyword.replace(memories(5, "old"))

        def toc_gone(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise FileNotFoundError("_MAIN_67.toc")

        keyword._ix._read_toc = toc_gone  # type: ignore[method-assign]
        keyword.stage(memories(3, "fresh"))
        assert keyword.search("fresh service", 10, KeywordFilter())
    finally:
        keyword.close()
