"""The keyword channel scores with numpy what Whoosh's own BM25F search would score."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from whoosh import query as q

from indexer.chunking import Neighbours, chunks_for
from indexer.keyword import BLOCK_READER, KeywordFilter, KeywordIndex, _postings, query_terms, rarest_first
from vault.model import Memory
from vault.parse import parse

WORDS = "postgres lock retry celery deploy worker import statement queue cache index vault search".split()


def memory(number: int, collection: str) -> Memory:
    body = " ".join(WORDS[(number * k) % len(WORDS)] for k in range(1, 2 + number % 7))
    text = (f"---\nid: m-{number:08x}\ncollection: {collection}\ntype: learning\ntitle: note {WORDS[number % len(WORDS)]}\n"
            f"created_at: 2026-11-01T08:00:00Z\n---\n{body}\n")
    return parse(text.encode(), f"{collection}/m{number}.md")


def whoosh_scores(index: KeywordIndex, text: str, k: int, filters: KeywordFilter | None) -> dict[int, float]:
    fields = {"title": 1.0, "body": 1.0, "context": 0.35}
    query = q.Or([q.Term(f, t, boost=b) for t in query_terms(text) for f, b in fields.items()])
    hits = index._searcher.search(query, limit=None, filter=filters.query() if filters else None,
                                  mask=filters.mask() if filters else None)
    return {int(h["chunk"]): h.score for h in hits}


@pytest.mark.parametrize("b, k1", [(0.0, 0.5), (0.75, 1.2)])
def test_scores_equal_whoosh_search_across_segments_deletions_and_filters(tmp_path: Path, b: float, k1: float):
    index = KeywordIndex.create(tmp_path / "kw")
    index.set_weighting(b, k1)
    memories = [memory(n, "history" if n % 2 else "patterns") for n in range(60)]
    for start in range(0, 60, 20):  # three commits: three segments
        index.replace([(m, chunks_for(m)) for m in memories[start:start + 20]])
    index.replace([], removed_ids=[memories[3].id, memories[40].id])  # deleted, not yet purged
    filters = KeywordFilter(collections=frozenset({"history"}), excluded_ids=frozenset({memories[5].id}))
    for text in ("postgres lock", "celery retry worker queue", "deploy the vault index", "nothing matches zzz"):
        for chosen in (None, filters):
            expected = whoosh_scores(index, text, 1000, chosen)
            found = {h.chunk_id: h.score for h in index.search(text, 1000, chosen, 0, 0.35)}
            assert found.keys() == expected.keys()
            assert all(found[c] == pytest.approx(expected[c], rel=1e-9) for c in expected)


def test_top_k_keeps_the_best_scores_best_first(tmp_path: Path):
    index = KeywordIndex.create(tmp_path / "kw")
    memories = [memory(n, "history") for n in range(40)]
    index.replace([(m, chunks_for(m)) for m in memories])
    everything = index.search("postgres lock retry", 1000)
    top = index.search("postgres lock retry", 5)
    assert [h.score for h in top] == sorted((h.score for h in top), reverse=True)
    assert [round(h.score, 9) for h in top] == [round(h.score, 9) for h in everything[:5]]


def test_remembered_postings_stay_right_as_segments_are_added_deleted_from_and_merged(tmp_path: Path):
    index = KeywordIndex.create(tmp_path / "kw")
    memories = [memory(n, "history") for n in range(80)]
    for start in range(0, 80, 10):  # each commit adds a segment; Whoosh merges small ones as it goes
        index.replace([(m, chunks_for(m)) for m in memories[start:start + 10]])
        index.replace([], removed_ids=[memories[start].id])
        for text in ("postgres lock", "celery retry worker queue"):
            expected = whoosh_scores(index, text, 1000, None)  # Whoosh reads its postings afresh each time
            found = {h.chunk_id: h.score for h in index.search(text, 1000, None, 0, 0.35)}
            assert found.keys() == expected.keys()
            assert all(found[c] == pytest.approx(expected[c], rel=1e-9) for c in expected)
    index.compact()
    assert {h.chunk_id for h in index.search("postgres lock", 1000, None, 0, 0.35)} == set(
        whoosh_scores(index, "postgres lock", 1000, None))


def test_a_postings_budget_keeps_the_terms_whooshs_own_counts_keep_as_segments_are_added_deleted_from_and_merged(
        tmp_path: Path):
    index = KeywordIndex.create(tmp_path / "kw")
    memories = [memory(n, "history") for n in range(80)]
    fields = {"title": 1.0, "body": 1.0, "context": 0.35}
    text, budget = "postgres lock retry celery deploy worker queue", 40
    for start in range(0, 80, 10):  # each commit adds a segment; Whoosh merges small ones as it goes
        index.replace([(m, chunks_for(m)) for m in memories[start:start + 10]])
        index.replace([], removed_ids=[memories[start].id])
        counts = {t: sum(index._searcher.doc_frequency(f, t) for f in fields) for t in query_terms(text)}
        kept = rarest_first(query_terms(text), counts, budget)
        assert 0 < len(kept) < len(counts) or start < 20  # the budget leaves terms out once the index has grown
        query = q.Or([q.Term(f, t, boost=b) for t in kept for f, b in fields.items()])
        expected = {int(h["chunk"]): h.score for h in index._searcher.search(query, limit=None)}
        found = {h.chunk_id: h.score for h in index.search(text, 1000, None, budget, 0.35)}
        assert found.keys() == expected.keys()
        assert all(found[c] == pytest.approx(expected[c], rel=1e-9) for c in expected)


@pytest.mark.parametrize("question", ["dedupe_key", "dedupe key", "sms_outbox.dedupe_key", "outbox"])
def test_an_identifier_is_found_by_its_parts_as_well_as_whole(tmp_path: Path, question: str):
    index = KeywordIndex.create(tmp_path / "kw")
    text = ("---\nid: m-0000000a\ncollection: patterns\ntype: learning\ntitle: Retries\n---\n"
            "SMS actors are idempotent through `sms_outbox.dedupe_key`, so a retry never sends twice.\n")
    memories = [parse(text.encode(), "patterns/a.md"), *(memory(n, "patterns") for n in range(5))]
    index.replace([(m, chunks_for(m)) for m in memories])
    wanted = {c.chunk_id for c in chunks_for(memories[0])}
    assert [h.chunk_id for h in index.search(question, 10)] == list(wanted)


def built_across_segments_with_deletions(folder: Path) -> list[Memory]:
    """A real index as the indexer leaves it: several commits, deleted documents not yet purged, identifiers
    split into parts, tags in the boosted title, neighbours' text in the context field."""
    index = KeywordIndex.create(folder)
    memories = [memory(n, "history" if n % 2 else "patterns") for n in range(45)]
    coded = parse(("---\nid: m-000000ff\ncollection: patterns\ntype: learning\ntitle: Retry queue\ntags: [celery, ops]\n"
                   "---\nActors dedupe through `sms_outbox.dedupe_key`; a postgres lock guards the retry queue.\n").encode(),
                  "patterns/coded.md")
    for start in range(0, 45, 15):
        index.replace([(m, chunks_for(m, Neighbours(previous="celery worker deploy"))) for m in memories[start:start + 15]])
    index.replace([(coded, chunks_for(coded))], removed_ids=[memories[7].id, memories[30].id])
    index.close()
    return [*memories, coded]


@pytest.mark.parametrize("b, k1", [(0.0, 0.5), (0.75, 1.2)])
def test_whooshs_public_api_gives_the_same_hits_as_its_block_readers(tmp_path: Path, b: float, k1: float):
    """The block readers are Whoosh internals; without them the public matcher API must rank identically."""
    memories = built_across_segments_with_deletions(tmp_path / "kw")
    fast = KeywordIndex.open(tmp_path / "kw", b, k1)
    public = KeywordIndex.open(tmp_path / "kw", b, k1, read_blocks=False)
    filters = KeywordFilter(collections=frozenset({"patterns"}), excluded_ids=frozenset({memories[4].id}))
    for text in ("postgres lock retry", "celery worker queue", "dedupe_key ops", "sms_outbox.dedupe_key", "zzz"):
        for chosen in (None, filters):
            for budget in (0, 20):
                expected = fast.search(text, 1000, chosen, budget, 0.35)
                found = public.search(text, 1000, chosen, budget, 0.35)
                assert [(h.chunk_id, h.own_terms, h.context_terms) for h in found] == [
                    (h.chunk_id, h.own_terms, h.context_terms) for h in expected]
                assert [h.score for h in found] == pytest.approx([h.score for h in expected], rel=1e-9)
    assert fast.search("dedupe_key", 5) and fast.search("celery", 1000, None, 0, 0.35)  # the checks above saw hits


def test_the_installed_whoosh_has_the_block_readers_the_fast_path_reads(tmp_path: Path):
    """A Whoosh release without them still ranks right (the public API), but a search over postings not yet
    cached takes about twice as long (bench/keyword_channel.py): fail loudly instead, and re-measure before
    widening the whoosh-reloaded pin."""
    built_across_segments_with_deletions(tmp_path / "kw")
    index = KeywordIndex.open(tmp_path / "kw")
    leaves = index._searcher.reader().leaf_readers()
    assert len(leaves) > 1 and any(leaf.has_deletions() for leaf, _ in leaves)
    checked = 0
    for leaf, _ in leaves:
        for field in ("title", "body", "context"):
            for term in leaf.field_terms(field):
                matcher = leaf.postings(field, term)
                matcher = getattr(matcher, "child", matcher)  # segments with deletions wrap their matchers
                assert all(callable(getattr(matcher, name, None)) for name in BLOCK_READER), type(matcher)
                # Deleted documents may or may not come along (the search zeroes them): compare the live ones.
                block, public = (dict(kept for kept in zip(*(a.tolist() for a in _postings(leaf, field, term, way)))
                                      if not leaf.is_deleted(kept[0])) for way in (True, False))
                assert block == public
                checked += 1
    assert checked > 100
    index.close()


def test_a_mask_kept_while_memories_leave_and_come_back_hides_what_a_fresh_mask_hides(tmp_path: Path, monkeypatch):
    """The hidden memories change a few at a time (the lifecycle's clock): the kept mask is moved by their documents
    alone, and a search scores as Whoosh's own masked search."""
    import random

    index = KeywordIndex.create(tmp_path / "kw")
    memories = [memory(n, "history") for n in range(80)]
    index.replace([(m, chunks_for(m)) for m in memories])
    ids = [m.id for m in memories]
    rng = random.Random(4)
    hidden = set(rng.sample(ids, 30))
    matched: list[int] = []
    real = KeywordIndex._documents_of
    monkeypatch.setattr(KeywordIndex, "_documents_of", lambda self, s, i: matched.append(len(i)) or real(self, s, i))
    for _ in range(12):
        filters = KeywordFilter(excluded_ids=frozenset(hidden))
        expected = whoosh_scores(index, "postgres lock retry deploy", 1000, filters)
        found = {h.chunk_id: h.score for h in index.search("postgres lock retry deploy", 1000, filters, 0, 0.35)}
        assert found.keys() == expected.keys()
        hidden ^= set(rng.sample(ids, 3))  # some leave, some come back
    assert matched[0] == 30 and len(matched) >= 12 and max(matched[1:]) <= 3  # then only the memories that moved


def test_the_documents_of_many_hidden_memories_stay_exact_across_adds_deletes_edits_and_merges(tmp_path: Path,
                                                                                                   monkeypatch):
    """Many hidden memories are found off a table of each segment's documents' memories (`keyword_mask`), not by their
    terms: it stays what Whoosh's own mask finds as documents are added, deleted, edited and merged, and reads each
    segment once."""
    import random

    from indexer import keyword_mask

    read: list[int] = []
    real = keyword_mask.memories_of_documents
    monkeypatch.setattr(keyword_mask, "memories_of_documents", lambda reader: read.append(reader.doc_count_all()) or real(reader))
    index = KeywordIndex.create(tmp_path / "kw")
    memories = [memory(n, "history") for n in range(150)]
    rng = random.Random(7)
    written: list[Memory] = []
    segments_seen: set[str] = set()
    for step, start in enumerate(range(0, 150, 15)):
        edited = [rng.choice(written)] if written else []
        removed = [written.pop(rng.randrange(len(written))).id] if written else []
        index.replace([(m, chunks_for(m)) for m in [*memories[start:start + 15], *edited]], removed_ids=removed)
        written += memories[start:start + 15]
        if step == 4:
            assert index.merge_segments() >= 2
        if step == 7:
            index.compact()
        ids = [m.id for m in written]
        for hidden in (frozenset(rng.sample(ids, len(ids) // 2)), frozenset(ids), frozenset({*removed, ids[0]})):
            searcher = index._searcher
            expected = np.fromiter(searcher.docs_for_query(KeywordFilter(excluded_ids=hidden).mask()), dtype=np.int64)
            assert index._documents_of(searcher, hidden).tolist() == sorted(expected.tolist())
            filters = KeywordFilter(excluded_ids=hidden)
            found = {h.chunk_id: h.score for h in index.search("postgres lock retry deploy", 1000, filters, 0, 0.35)}
            assert found.keys() == whoosh_scores(index, "postgres lock retry deploy", 1000, filters).keys()
        segments_seen |= {leaf.reader().segment().segment_id() for leaf, _ in index._searcher.leaf_searchers()}
    assert read and len(read) <= len(segments_seen)  # the table was used, and a segment read at most once
    index.close()


def test_a_segments_documents_memories_read_off_the_stored_column_equal_the_public_apis(tmp_path: Path):
    from indexer.keyword_mask import memories_of_documents

    built_across_segments_with_deletions(tmp_path / "kw")
    index = KeywordIndex.open(tmp_path / "kw")
    leaves = index._searcher.reader().leaf_readers()
    assert len(leaves) > 1 and any(leaf.has_deletions() for leaf, _ in leaves)
    for leaf, _ in leaves:
        assert memories_of_documents(leaf) == memories_of_documents(leaf, fast=False)
        assert len(memories_of_documents(leaf)) == leaf.doc_count_all()
    index.close()
