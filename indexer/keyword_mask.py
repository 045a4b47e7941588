"""The Whoosh documents of a set of memories: what the keyword channel masks when memories are hidden.

A few memories are matched by their id terms, segment by segment. Many are read off a table of every document's
memory, kept per segment: with 50k of 100k memories leaving (a vault left unserved while its working notes expired),
matching their terms cost the first search 10.3-10.7 CPU s (bench/results/s19-lifecycle19.md), and reading every
document's memory costs ~0.4 s once. A segment's documents never change (a delete only marks one), so its table
stays right until a merge replaces the segment.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
from whoosh import query as q
from whoosh.codec.whoosh3 import STORED_COLUMN
from whoosh.searching import Searcher

from .arrays import sorted_contains

# What each way costs at 100k memories (one document each, six segments; bench/results/s20-open20.md): matching one
# memory's term in one segment ~65 us, reading one document's memory off its stored fields ~4.4 us. The table is
# read when matching would cost more than reading the documents not yet in it.
READS_PER_MATCH = 15


def memories_query(memory_ids: Iterable[str]) -> q.Query:
    """The documents of these memories (their chunks)."""
    return q.Or([q.Term("memory", i) for i in memory_ids])


class MemoryTable:
    """Each segment's documents' memory ids, read when a set of memories is too many to match by term. Callers hold
    the keyword index's lock."""

    def __init__(self) -> None:
        self._of_segment: dict[str, list[str]] = {}

    def documents(self, searcher: Searcher, memory_ids: frozenset[str]) -> np.ndarray:
        """The live documents of these memories, ascending: what Whoosh's `docs_for_query(memories_query(...))`
        gives."""
        if not memory_ids:
            return np.zeros(0, dtype=np.int64)
        leaves = [(leaf.reader(), offset) for leaf, offset in searcher.leaf_searchers()]
        segments = [_segment_id(reader) for reader, _ in leaves]
        unread = sum(reader.doc_count_all() for (reader, _), segment in zip(leaves, segments)  # type: ignore[attr-defined]
                     if segment not in self._of_segment)
        if None in segments or len(memory_ids) * len(leaves) * READS_PER_MATCH < unread:
            return np.fromiter(searcher.docs_for_query(memories_query(memory_ids)), dtype=np.int64)
        found = []
        for (reader, offset), segment in zip(leaves, segments):
            assert segment is not None
            table = self._of_segment.get(segment)
            if table is None:
                table = self._of_segment[segment] = memories_of_documents(reader)
            documents = np.flatnonzero(np.fromiter((m in memory_ids for m in table), dtype=bool, count=len(table)))
            if reader.has_deletions():  # type: ignore[attr-defined]
                documents = documents[~sorted_contains(deleted_documents(reader), documents)]
            found.append(documents + offset)
        self._of_segment = {segment: self._of_segment[segment] for segment in segments  # a merged segment's goes
                            if segment is not None and segment in self._of_segment}
        return np.concatenate(found)


def memories_of_documents(reader: object, fast: bool = True) -> list[str]:
    """The memory id of each of a segment's documents, deleted ones too, by document number. The stored fields' column
    is read in one pass where the codec has it (Whoosh's `stored_fields` per document took twice as long), else
    through the public API (`fast=False` too, so a test holds the two equal)."""
    column = getattr(getattr(reader, "_perdoc", None), "_cached_reader", None)
    if fast and column is not None:
        memories = [fields["memory"] for fields in column("_stored", STORED_COLUMN)]
        if len(memories) == reader.doc_count_all():  # type: ignore[attr-defined]
            return memories
    return [reader.stored_fields(d)["memory"] for d in range(reader.doc_count_all())]  # type: ignore[attr-defined]


def deleted_documents(reader: object) -> np.ndarray:
    """A segment's deleted documents, ascending (Whoosh keeps them as a set, made once per segment reader)."""
    deleted = getattr(reader, "deleted_docs_set", None)
    if deleted is None:
        deleted = [d for d in range(reader.doc_count_all()) if reader.is_deleted(d)]  # type: ignore[attr-defined]
    return np.sort(np.fromiter(deleted, dtype=np.int64, count=len(deleted)))


def _segment_id(reader: object) -> str | None:
    segment = getattr(reader, "segment", lambda: None)()
    return segment.segment_id() if segment is not None else None
