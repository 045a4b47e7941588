"""Keyword documents a big write has not committed to Whoosh yet, searched beside it meanwhile.

Adding and committing a pull's 1,000 memories takes Whoosh tens of seconds at 100k memories
(bench/results/reindex-and-pull.md, issue 32 item 4), and a new memory was not found by its words until that commit.
Their documents are analysed into this small in-memory index first (a fraction of a second: the analysis is Whoosh's own
`field.index`, so the terms, weights and lengths are the ones Whoosh will store), searched beside Whoosh
until the commit, and then dropped in the same step that opens the new Whoosh searcher.

A memory held here hides every Whoosh document of the same memory (a changed memory's old words no longer
find it, a removed one is gone), so each memory is answered by exactly one of the two. A snapshot never
changes: the keyword index swaps in a new one under its lock.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
from whoosh.fields import Schema
from whoosh.util.numeric import byte_to_length, length_to_byte

from .analysis import Item

SEARCHED = ("title", "body", "context")
Analysed = dict[tuple[str, object], list[Item]]  # (field, text) -> Whoosh's `field.index`
IDS = ("memory", "type", "collection", "status", "privacy")


@dataclass(frozen=True, slots=True)
class FreshChunk:
    """One chunk's keyword document as Whoosh would hold it: searched terms with weights, filter values."""

    chunk_id: int
    memory_id: str
    terms: Mapping[str, Mapping[str, float]]  # searched field -> term -> weight (term frequency x field boost)
    lengths: Mapping[str, int]  # searched field -> length as Whoosh reads it back (a byte, see length_to_byte)
    filters: Mapping[str, frozenset[str]]  # filter field (memory, type, collection, status, privacy, tags) -> its terms
    created_at: int | None

    @classmethod
    def of(cls, analysers: Mapping[str, Callable[[str], list[Item]]], document: Mapping[str, object],
           analysed: Analysed) -> "FreshChunk":
        """`document` is what KeywordIndex hands to Whoosh's `add_document`; each searched field analysed as the
        schema's own field does (`analysers`: `keyword.index_analysis` of each), and the analysis kept in
        `analysed` for Whoosh's writer to take instead of doing it again (`reusing`)."""
        terms: dict[str, dict[str, float]] = {}
        lengths: dict[str, int] = {}
        for field in SEARCHED:
            value = document.get(field)
            if value is None:
                continue
            weights: dict[str, float] = {}
            length = 0
            items = analysed[(field, value)] = analysers[field](value)  # type: ignore[arg-type]
            for term, frequency, weight, _ in items:
                weights[_text(term)] = float(np.float32(weight))  # Whoosh stores weights as float32
                length += frequency
            terms[field] = weights
            if length:
                lengths[field] = byte_to_length(length_to_byte(length))
        # The filter fields are Whoosh IDs (one term: the value) and the tags a comma-separated, lower-cased KEYWORD
        # (a third of staging's time when analysed through Whoosh; the filter tests hold the two alike)
        filters = {field: frozenset((str(document[field]),)) if field in document else frozenset() for field in IDS}
        filters["tags"] = frozenset(tag for part in str(document.get("tags") or "").split(",")
                                    if (tag := part.strip().lower()))
        created = document.get("created_at")
        return cls(int(str(document["chunk"])), str(document["memory"]), terms, lengths, filters,
                   created if isinstance(created, int) else None)

    def holds(self, term: str, fields: Sequence[str]) -> bool:
        return any(term in self.terms.get(field, ()) for field in fields)


class Fresh:
    """The keyword documents of memories written but not yet committed, by the write (`stage`) that brought them."""

    def __init__(self, entries: Mapping[str, tuple[int, tuple[FreshChunk, ...]]] | None = None) -> None:
        self._entries = MappingProxyType(dict(entries or {}))  # memory id -> (stage, its chunks; none: removed)
        self.rows: list[FreshChunk] = [chunk for _, chunks in self._entries.values() for chunk in chunks]
        self._postings: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        gathered: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
        for row, chunk in enumerate(self.rows):
            for field, weights in chunk.terms.items():
                for term, weight in weights.items():
                    rows, values = gathered.setdefault((field, term), ([], []))
                    rows.append(row)
                    values.append(weight)
        for key, (rows, values) in gathered.items():
            self._postings[key] = (np.asarray(rows, dtype=np.int64), np.asarray(values, dtype=np.float64))
        self._field_length = {field: sum(c.lengths.get(field, 0) for c in self.rows) for field in SEARCHED}
        self._lengths = {field: np.asarray([c.lengths.get(field, 0) for c in self.rows], dtype=np.float64)
                         for field in SEARCHED}

    def __bool__(self) -> bool:
        return bool(self._entries)

    @property
    def memory_ids(self) -> frozenset[str]:
        """Every memory answered here: its Whoosh documents, if any, are out of date."""
        return frozenset(self._entries)

    def staged(self, stage: int, chunks_by_memory: Mapping[str, Sequence[FreshChunk]], removed: Iterable[str]) -> "Fresh":
        """A copy holding these memories' new documents (and no documents of the removed ones)."""
        entries = dict(self._entries)
        for memory_id in removed:
            entries[memory_id] = (stage, ())
        for memory_id, chunks in chunks_by_memory.items():
            entries[memory_id] = (stage, tuple(chunks))
        return Fresh(entries)

    def committed(self, through: int) -> "Fresh":
        """A copy without what the writes up to stage `through` committed (a later write's documents stay)."""
        if not any(stage <= through for stage, _ in self._entries.values()):
            return self
        return Fresh({m: entry for m, entry in self._entries.items() if entry[0] > through})

    def without_stage(self, stage: int) -> "Fresh":
        """A copy without one write's documents (it failed: Whoosh has none of them)."""
        return Fresh({m: entry for m, entry in self._entries.items() if entry[0] != stage})

    def doc_count(self) -> int:
        return len(self.rows)

    def doc_frequency(self, field: str, term: str) -> int:
        found = self._postings.get((field, term))
        return 0 if found is None else len(found[0])

    def field_length(self, field: str) -> int:
        return self._field_length.get(field, 0)

    def scores(self, terms: Sequence[str], fields: Mapping[str, float], b: float, k1: float,
               idf: Mapping[tuple[str, str], float], average_length: Mapping[str, float]) -> np.ndarray:
        """BM25F of every row for an OR of the terms, the formula and statistics `keyword.bm25f_scores` uses."""
        scores = np.zeros(len(self.rows), dtype=np.float64)
        for field, boost in fields.items():
            for term in terms:
                found = self._postings.get((field, term))
                if found is None:
                    continue
                rows, weights = found
                norm = (1 - b) + b * self._lengths[field][rows] / (average_length[field] or 1) if b else 1.0
                scores[rows] += boost * idf[(field, term)] * (weights * (k1 + 1)) / (weights + k1 * norm)
        return scores


@contextmanager
def reusing(schema: Schema, analysed: Analysed) -> Iterator[None]:
    """Let the searched fields of a writer's own `schema` (each Whoosh writer unpickles a copy) answer `index` from
    what staging analysed: the same items Whoosh would compute, so the postings are the same, computed once.
    Analysis was a third of a pull's keyword write, and staging had already done it. Undone before the commit,
    which pickles the schema."""
    for name in SEARCHED:
        field = schema[name]
        computed = field.index

        def index(value: object, _name: str = name, _computed=computed, **options: object):
            found = None if options else analysed.get((_name, value))
            return found if found is not None else _computed(value, **options)

        field.index = index
    try:
        yield
    finally:
        for name in SEARCHED:
            vars(schema[name]).pop("index", None)


def _text(term: bytes | str) -> str:
    return term.decode() if isinstance(term, bytes) else term


def idf(documents: int, frequency: int) -> float:
    """Whoosh's idf (`scoring.WeightingModel.idf`), over the documents of Whoosh and the fresh ones together."""
    return math.log(documents / (frequency + 1)) + 1
