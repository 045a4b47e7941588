"""The keyword index: Whoosh BM25F over titles, bodies, tags, aliases and neighbours, one document per chunk.

One writer per index (Whoosh takes a file lock); readers use the last committed state and
never wait. Queries are built from analysed terms, not parsed, so a user's `AND`, quotes or
colons cannot break them; filters become a Whoosh filter query so BM25's top-N is taken
over the filtered set.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Iterable, Sequence

from whoosh import index as whoosh_index
from whoosh import query as q
from whoosh import scoring
from whoosh.analysis import StemmingAnalyzer
from whoosh.fields import ID, KEYWORD, NUMERIC, TEXT, Schema

from vault.model import Memory

from .chunking import Chunk
from .stopwords import STOP_WORDS

ANALYZER = StemmingAnalyzer(stoplist=STOP_WORDS)
SEARCH_FIELDS = ("title", "body", "context")
MAX_QUERY_TERMS = 64


def schema() -> Schema:
    return Schema(
        chunk=ID(unique=True, stored=True),
        memory=ID(stored=True),
        # Three searched fields, not five: Whoosh matches each term in each field in pure Python,
        # so tags and aliases ride along in the (short, boosted) title field.
        title=TEXT(analyzer=ANALYZER, field_boost=2.0),
        body=TEXT(analyzer=ANALYZER),
        # The neighbours' texts (see chunking): weighted at query time, so the weight is a setting.
        context=TEXT(analyzer=ANALYZER),
        tags=KEYWORD(lowercase=True, commas=True),  # for filtering only
        type=ID(),
        collection=ID(),
        status=ID(),
        privacy=ID(),
        created_at=NUMERIC(int, bits=64, signed=True, stored=True),
    )


@dataclass(frozen=True, slots=True)
class KeywordFilter:
    """Memory-level filters pushed into the keyword search (None means no constraint)."""

    collections: frozenset[str] | None = None
    types: frozenset[str] | None = None
    tags: frozenset[str] | None = None
    statuses: frozenset[str] | None = None
    privacy: frozenset[str] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    memory_ids: frozenset[str] | None = None
    excluded_ids: frozenset[str] = frozenset()  # hidden memories (superseded through the graph, private, ...)

    def mask(self) -> q.Query | None:
        return q.Or([q.Term("memory", i) for i in self.excluded_ids]) if self.excluded_ids else None

    def query(self) -> q.Query | None:
        parts: list[q.Query] = []
        for field, values in (
            ("collection", self.collections), ("type", self.types), ("status", self.statuses),
            ("privacy", self.privacy), ("memory", self.memory_ids),
        ):
            if values is not None:
                parts.append(q.Or([q.Term(field, v) for v in values]) if values else q.NullQuery)
        if self.tags:
            parts.append(q.Or([q.Term("tags", t.lower()) for t in self.tags]))
        if self.created_after or self.created_before:
            start = math.floor(self.created_after.timestamp()) if self.created_after else None
            end = math.ceil(self.created_before.timestamp()) if self.created_before else None
            parts.append(q.NumericRange("created_at", start, end))  # a superset; the caller filters exactly
        return q.And(parts) if parts else None


class KeywordIndex:
    def __init__(self, ix: whoosh_index.Index, b: float = 0.75, k1: float = 1.2) -> None:
        self._ix = ix
        self._lock = threading.RLock()
        self._weighting = scoring.BM25F(B=b, K1=k1)
        self._searcher = ix.searcher(weighting=self._weighting)

    @classmethod
    def create(cls, folder: Path) -> "KeywordIndex":
        folder.mkdir(parents=True, exist_ok=True)
        return cls(whoosh_index.create_in(str(folder), schema()))

    @classmethod
    def open(cls, folder: Path, b: float = 0.75, k1: float = 1.2) -> "KeywordIndex":
        return cls(whoosh_index.open_dir(str(folder)), b, k1)

    def set_weighting(self, b: float, k1: float) -> None:
        """BM25 parameters are a property of the search, not of the stored index."""
        with self._lock:
            self._weighting = scoring.BM25F(B=b, K1=k1)
            self._reopen()

    def _reopen(self) -> None:
        # refresh() of a searcher over an empty index fails in whoosh-reloaded 2.7.5 (its empty
        # reader has no segments), so open a new searcher after each commit instead.
        old = self._searcher
        self._searcher = self._ix.searcher(weighting=self._weighting)
        old.close()

    def close(self) -> None:
        with self._lock:
            self._searcher.close()

    def replace(self, memories_and_chunks: Sequence[tuple[Memory, Sequence[Chunk]]], removed_ids: Iterable[str] = ()) -> None:
        """Delete every chunk of the given memories (and of removed ones), then add their chunks; one commit."""
        with self._lock:
            writer = self._ix.writer(timeout=30.0)
            try:
                for memory_id in removed_ids:
                    writer.delete_by_term("memory", memory_id)
                for memory, chunks in memories_and_chunks:
                    writer.delete_by_term("memory", memory.id)
                    for chunk in chunks:
                        writer.add_document(**_document(memory, chunk))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            self._reopen()

    def compact(self) -> None:
        """Merge segments and purge deleted documents, so BM25 statistics equal a fresh build's."""
        with self._lock:
            writer = self._ix.writer(timeout=30.0)
            writer.commit(optimize=True)
            self._reopen()

    def deleted_share(self) -> float:
        """How much of the index is deleted-but-not-purged documents (they skew BM25 statistics)."""
        with self._lock:
            reader = self._searcher.reader()
            total = reader.doc_count_all()
            return (total - reader.doc_count()) / total if total else 0.0

    def delete_chunks(self, chunk_ids: Iterable[int]) -> None:
        with self._lock:
            writer = self._ix.writer(timeout=30.0)
            for chunk in chunk_ids:
                writer.delete_by_term("chunk", str(chunk))
            writer.commit()
            self._reopen()

    def chunk_ids(self) -> set[int]:
        with self._lock:
            return {int(fields["chunk"]) for fields in self._searcher.reader().all_stored_fields()}

    def postings(self) -> set[tuple[int, str, str]]:
        """Every (chunk id, field, term) the index holds: what two indices must share to rank alike."""
        with self._lock:
            reader = self._searcher.reader()
            chunk_of = {doc: int(fields["chunk"]) for doc, fields in reader.iter_docs()}
            return {(chunk_of[doc], field, term.decode() if isinstance(term, bytes) else term)
                    for field in SEARCH_FIELDS for term in reader.field_terms(field)
                    for doc in reader.postings(field, term).all_ids() if doc in chunk_of}

    def search(self, text: str, k: int, filters: KeywordFilter | None = None,
               postings_budget: int = 0, context_boost: float = 0.0) -> list[KeywordHit]:
        """Top-k chunks for the analysed terms of `text` (OR semantics).

        With a `postings_budget`, terms are taken rarest first while their posting lists fit the
        budget: the most common terms carry the least BM25 weight but cost the most, because
        Whoosh matches postings in pure Python. A small vault keeps every term. A term found in
        the context field (the neighbours' texts) counts `context_boost` times its score.
        """
        terms = query_terms(text)
        if not terms or k <= 0:
            return []
        fields = {"title": 1.0, "body": 1.0, **({"context": context_boost} if context_boost > 0 else {})}
        with self._lock:
            terms = self._selective(terms, postings_budget, tuple(fields))
            query = q.Or([q.Term(field, term, boost=boost) for term in terms for field, boost in fields.items()])
            filter_query = filters.query() if filters else None
            mask_query = filters.mask() if filters else None
            # No terms=True: asking which terms each hit matched turns off Whoosh's block-max
            # pruning and made it score every matching document (3x slower at 10k).
            hits = self._searcher.search(query, limit=k, filter=filter_query, mask=mask_query)
            return [KeywordHit(int(hit["chunk"]), float(hit.score)) for hit in hits]

    def _selective(self, terms: list[str], budget: int, fields: Sequence[str]) -> list[str]:
        if budget <= 0:
            return terms
        cost = {t: sum(self._searcher.doc_frequency(f, t) for f in fields) for t in terms}
        kept: list[str] = []
        spent = 0
        for term in sorted(terms, key=lambda t: cost[t]):
            if kept and spent + cost[term] > budget:
                break
            kept.append(term)
            spent += cost[term]
        return [t for t in terms if t in kept]

    def idf(self, terms: Sequence[str]) -> dict[str, float]:
        """Inverse document frequency of each term in the body field (rare terms count more)."""
        with self._lock:
            return {term: float(self._searcher.idf("body", term)) for term in terms}


@dataclass(frozen=True, slots=True)
class KeywordHit:
    chunk_id: int
    score: float


def analysed(text: str) -> frozenset[str]:
    return frozenset(token.text for token in ANALYZER(text))


def query_terms(text: str) -> list[str]:
    """The query's analysed (lower-cased, stemmed, stop-word-free) terms, de-duplicated, bounded."""
    seen: dict[str, None] = {}
    for token in ANALYZER(text):
        seen.setdefault(token.text, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)


def signature(memory: Memory, chunks: Sequence[Chunk]) -> tuple[object, ...]:
    """Everything the keyword documents of a memory hold: an equal signature → no rewrite needed.

    Outcome counters are deliberately not in Whoosh: scoring rewrites them on every turn, and
    each Whoosh update leaves a deleted document that skews BM25 until segments merge. Ranking
    reads counters from the index's in-memory table, which comes from the files.
    """
    return (
        tuple((c.chunk_id, c.title, c.text, c.context) for c in chunks), memory.tags, memory.aliases, memory.type,
        memory.collection, memory.status, memory.privacy, memory.created_at,
    )


def _document(memory: Memory, chunk: Chunk) -> dict[str, object]:
    document = {
        "chunk": str(chunk.chunk_id),
        "memory": memory.id,
        "title": " ".join((chunk.title, *memory.tags, *memory.aliases)),
        "body": chunk.text,
        "context": chunk.context or None,
        "tags": ",".join(t.lower() for t in memory.tags),
        "type": memory.type,
        "collection": memory.collection,
        "status": memory.status,
        "privacy": memory.privacy,
        "created_at": int(memory.created_at.timestamp()) if memory.created_at else None,
    }
    return {key: value for key, value in document.items() if value is not None}
