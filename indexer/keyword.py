"""The keyword index: Whoosh BM25F over titles, bodies, tags, aliases and neighbours, one document per chunk.

One writer per index (Whoosh takes a file lock); readers use the last committed state and
never wait. Queries are analysed terms, not parsed, so a user's `AND`, quotes or colons
cannot break them; filters become a Whoosh filter query so BM25's top-N is taken over the
filtered set.

Whoosh stores the index, but the search scores it with numpy (see `bm25f_scores`): Whoosh
matches and scores each posting in pure Python, which cost 20-50 ms per query at 10k
memories; reading the same posting blocks into arrays and scoring them at once gives the
same BM25F scores in a few milliseconds.
"""

from __future__ import annotations

import contextlib
import math
import threading
import weakref
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
from whoosh import index as whoosh_index
from whoosh import query as q
from whoosh import scoring
from whoosh.analysis import Filter, LowercaseFilter, RegexTokenizer, StemFilter, StopFilter
from whoosh.filedb.filestore import FileStorage
from whoosh.fields import ID, KEYWORD, NUMERIC, TEXT, FieldType, Schema
from whoosh.formats import Positions
from whoosh.reading import EmptyReader, MultiReader, SegmentReader
from whoosh.searching import Searcher

from vault.model import Memory

from .analysis import Item, identifier_parts, one_pass
from .arrays import sorted_contains
from .chunking import Chunk
from .fresh_keywords import Analysed, Fresh, FreshChunk, idf as fresh_idf, reusing
from .keyword_mask import MemoryTable, deleted_documents, memories_query
from .safe_pickle import install as _read_pickles_safely
from .stopwords import STOP_WORDS

_read_pickles_safely()  # every pickle Whoosh reads names only what memdir's index holds (safe_pickle.py)



class IdentifierParts(Filter):
    """A dotted or snake_case identifier is also each of its parts.

    Whoosh's tokenizer keeps `sms_outbox.dedupe_key` as one token, so asking for `dedupe_key`
    (or "dedupe key") found nothing: code memories name identifiers in full, questions name the
    part they care about. The whole token stays, so an exact identifier still matches best.
    """

    def __call__(self, tokens):  # type: ignore[no-untyped-def]
        for token in tokens:
            for part in identifier_parts(token.text):
                token.text = part
                yield token


# Whoosh's StemmingAnalyzer; documents also index each identifier's parts. Queries are not split:
# the documents' parts already match "dedupe key" and `dedupe_key`, and splitting the identifiers of
# a pasted log or traceback into common words only added noise (coding set, long prompts).
QUERY_ANALYZER = RegexTokenizer() | LowercaseFilter() | StopFilter(stoplist=STOP_WORDS) | StemFilter()
ANALYZER = RegexTokenizer() | IdentifierParts() | LowercaseFilter() | StopFilter(stoplist=STOP_WORDS) | StemFilter()
SEARCH_FIELDS = ("title", "body", "context")


def index_analysis(field: FieldType) -> Callable[[str], list[Item]]:
    """`field.index` of a searched field, in one pass (analysis.py) when the index's stored schema analyses it as
    ANALYZER does and stores positions, as every index of this schema does; Whoosh's own otherwise."""
    if field.analyzer == ANALYZER and type(field.format) is Positions:
        return one_pass(field.format)
    return lambda value: list(field.index(value))


# Postings are decoded ahead (KeywordIndex.warm_postings) only for terms in at least this share of a segment's documents:
# a rarer term's list is short, cheap when a search asks for it, and the rare terms are most of a vocabulary, whose
# table of frequencies would otherwise grow with it.
COMMON_SHARE = 0.001
TERMS_BETWEEN = 256  # terms counted (KeywordIndex.warm_postings) between two looks at whether to go on
# The private methods of whoosh3's W3LeafMatcher that `_postings` reads whole blocks with.
BLOCK_READER = ("_read_ids", "_read_weights", "_next_block")
MAX_QUERY_TERMS = 64
# Terms whose per-segment document frequency PostingsCache keeps (~200 bytes each): a few thousand questions' worth.
FREQUENCIES_KEPT = 100_000
# The writer buffers a batch's postings in memory up to this many MB (by Whoosh's own estimate, which
# counts a posting at ~2/3 of what CPython holds for it) and spills sorted runs to the index folder
# beyond it, merged at commit. Whoosh's default, 128, let a build hold up to ~200 MB of postings, the
# largest item of its peak after the vectors (bench/results/scale.md, issue 32).
WRITER_LIMIT_MB = 16


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
        return memories_query(self.excluded_ids) if self.excluded_ids else None

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

    def allows(self, chunk: FreshChunk) -> bool:
        """What `query` and `mask` decide, for a document not yet in Whoosh."""
        if chunk.memory_id in self.excluded_ids:
            return False
        for field, values in (
            ("collection", self.collections), ("type", self.types), ("status", self.statuses),
            ("privacy", self.privacy), ("memory", self.memory_ids),
        ):
            if values is not None and not chunk.filters[field] & values:
                return False
        if self.tags and not chunk.filters["tags"] & {t.lower() for t in self.tags}:
            return False
        if self.created_after or self.created_before:
            if chunk.created_at is None:
                return False
            if self.created_after and chunk.created_at < math.floor(self.created_after.timestamp()):
                return False
            if self.created_before and chunk.created_at > math.ceil(self.created_before.timestamp()):
                return False
        return True


@dataclass(frozen=True)
class Staged:
    """A write's documents made searchable before their write (KeywordIndex.stage_ahead), and their analysis."""

    stage: int
    analysed: Analysed


class KeywordIndex:
    def __init__(self, ix: whoosh_index.Index, b: float = 0.75, k1: float = 1.2, *, read_blocks: bool = True) -> None:
        self._ix = ix
        # Read once: `ix.schema` reads the newest table of contents from disk on every access, and a stage runs with
        # the index lock let go, while a merge's commit may delete that file (FileNotFoundError: _MAIN_67.toc, and
        # the batch's memories left without keyword documents; review of session 8). The schema never changes.
        self._schema = ix.schema
        self._lock = threading.RLock()
        self._postings = PostingsCache(read_blocks=read_blocks)  # one per index: segment ids are unique only within it
        self._b, self._k1 = b, k1
        self._weighting = scoring.BM25F(B=b, K1=k1)
        self._searcher = ix.searcher(weighting=self._weighting)
        self._chunk_of: dict[int, int] = {}  # document number -> chunk id, for the open searcher
        # A big write's documents until its commit (fresh_keywords), and the Whoosh documents they hide.
        self._fresh = Fresh()
        self._hidden = np.zeros(0, dtype=np.int64)
        # The last mask's documents, per searcher: held weakly, so a searcher replaced after a write is let go (with
        # the segment files it holds open), not kept until the next masked search
        self._masked: tuple[weakref.ref[Searcher], frozenset[str], np.ndarray] | None = None
        self._memory_table = MemoryTable()  # the documents of many hidden memories, read off their stored fields
        self._stages = 0  # writes begun: a write's fresh documents leave when it (or a later one) commits

    @classmethod
    def create(cls, folder: Path) -> "KeywordIndex":
        folder.mkdir(parents=True, exist_ok=True)
        return cls(whoosh_index.create_in(str(folder), schema()))

    @classmethod
    def open(cls, folder: Path, b: float = 0.75, k1: float = 1.2, *, read_blocks: bool = True) -> "KeywordIndex":
        """`read_blocks=False` reads postings through Whoosh's public matcher API only: the path taken
        when a Whoosh release lacks the private block readers, kept so tests can hold the two equal."""
        return cls(whoosh_index.open_dir(str(folder)), b, k1, read_blocks=read_blocks)

    def set_weighting(self, b: float, k1: float) -> None:
        """BM25 parameters are a property of the search, not of the stored index."""
        with self._lock:
            self._b, self._k1 = b, k1
            self._weighting = scoring.BM25F(B=b, K1=k1)
            self._reopen()

    def _reopen(self) -> None:
        """A searcher over the last commit, reading the segments it shares with the open one through the same
        readers: opening a segment's reader (its term table) cost ~3 ms each, and a commit that merges nothing
        leaves every segment but one or two as it was. (Whoosh's own `refresh` fails on an empty index in
        whoosh-reloaded 2.7.5, and its reader reuse adds the old searcher's segments back, merged ones too.)"""
        old = self._searcher
        reader, kept = _reader_reusing(self._ix, old.reader())
        self._searcher = Searcher(reader, weighting=self._weighting, fromindex=self._ix)
        self._chunk_of = {}  # document numbers change when segments merge
        self._hide()
        old._closereader = False  # its readers that the new searcher does not read are closed here
        old.close()
        for leaf, _ in old.reader().leaf_readers():
            if id(leaf) not in kept:
                leaf.close()

    def _numbers_of(self, writer: object, memory_ids: Iterable[str]) -> list[int] | None:
        """The document numbers of these memories as `writer` numbers them, read from the open searcher when
        it reads the same segments (None otherwise): Whoosh's `delete_by_term` opens a reader of every segment
        to find them."""
        with self._lock:
            leaves = list(self._searcher.reader().leaf_readers()) if self._searcher.doc_count_all() else []
            if [(leaf.segment().segment_id(), leaf.doc_count_all()) for leaf, _ in leaves] != \
                    [(s.segment_id(), s.doc_count_all()) for s in writer.segments]:  # type: ignore[attr-defined]
                return None
            return [doc + offset for memory_id in memory_ids for leaf, offset in leaves
                    if ("memory", memory_id) in leaf for doc in leaf.postings("memory", memory_id).all_ids()]

    def _hide(self) -> None:
        """Find the open searcher's documents of the memories held fresh: they are out of date."""
        hidden: list[int] = []
        if self._fresh:
            for leaf, offset in self._searcher.leaf_searchers():
                reader = leaf.reader()
                for memory_id in self._fresh.memory_ids:
                    if ("memory", memory_id) in reader:
                        hidden.extend(doc + offset for doc in reader.postings("memory", memory_id).all_ids())
        self._hidden = np.asarray(hidden, dtype=np.int64)

    def stage(self, memories_and_chunks: Sequence[tuple[Memory, Sequence[Chunk]]], removed_ids: Iterable[str] = (),
              analysed: Analysed | None = None) -> int:
        """Make these memories' new documents searchable now (and the removed ones unfindable), before Whoosh has
        them; returns the stage, which `replace` clears once it has committed them."""
        analysers = {field: index_analysis(self._schema[field]) for field in SEARCH_FIELDS}
        analysed = {} if analysed is None else analysed
        chunks_by_memory = {memory.id: [FreshChunk.of(analysers, _document(memory, chunk), analysed) for chunk in chunks]
                            for memory, chunks in memories_and_chunks}
        with self._lock:
            self._stages += 1
            self._fresh = self._fresh.staged(self._stages, chunks_by_memory, removed_ids)
            self._hide()
            return self._stages

    def stage_ahead(self, memories_and_chunks: Sequence[tuple[Memory, Sequence[Chunk]]],
                    removed_ids: Iterable[str] = ()) -> "Staged":
        """`stage` for a write that must wait for an earlier one's commit: searchable now, handed to `replace` later."""
        analysed: Analysed = {}
        return Staged(self.stage(memories_and_chunks, removed_ids, analysed), analysed)

    def close(self) -> None:
        """Close the searcher and let go of everything that points into its segments. Whoosh maps each segment
        file and cannot unmap it while a view into it lives; the views live as long as the reader objects, so
        holding those past close kept the segment's descriptor open until a later garbage collection."""
        with self._lock:
            self._searcher.close()
            self._searcher = _Closed()
            self._postings = PostingsCache(read_blocks=self._postings.read_blocks)
            self._chunk_of = {}
            self._memory_table = MemoryTable()

    def replace(self, memories_and_chunks: Sequence[tuple[Memory, Sequence[Chunk]]], removed_ids: Iterable[str] = (),
                *, beside_searches: bool = False, staged: "Staged | None" = None,
                searchable: Callable[[], None] = lambda: None) -> None:
        """Delete every chunk of the given memories (and of removed ones), then add their chunks; one commit.

        `beside_searches` (a big pull): searches go on meanwhile, on the last committed state, and wait only for
        the switch to the new searcher. A Whoosh reader keeps reading the segments it opened while a writer adds
        a new one; so that no file an open reader maps is deleted, that commit merges no segments (the next
        ordinary commit does). The caller lets one writer in at a time.

        `staged`: these documents were staged already (`stage_ahead`, while an earlier write committed).
        `searchable`: called once the documents are searchable, before Whoosh adds and commits them."""
        removed_ids = list(removed_ids)
        analysed: Analysed = {}
        if staged is not None:
            stage, analysed = staged.stage, staged.analysed
        elif beside_searches:
            stage = self.stage(memories_and_chunks, removed_ids, analysed)  # searchable now, not after the commit
        else:
            with self._lock:
                self._stages += 1
                stage = self._stages
        if beside_searches or staged is not None:
            searchable()
        with contextlib.nullcontext() if beside_searches else self._lock:
            try:
                writer = self._ix.writer(timeout=30.0, limitmb=WRITER_LIMIT_MB)
                try:
                    stale = [*removed_ids, *(memory.id for memory, _ in memories_and_chunks)]
                    numbers = self._numbers_of(writer, stale)
                    if numbers is None:
                        for memory_id in stale:
                            writer.delete_by_term("memory", memory_id)
                    for number in numbers or ():
                        writer.delete_document(number)
                    with reusing(writer.schema, analysed):
                        for memory, chunks in memories_and_chunks:
                            for chunk in chunks:
                                writer.add_document(**_document(memory, chunk))
                    analysed.clear()
                except BaseException:
                    writer.cancel()
                    raise
                # No segment is merged here: merging rewrote every small segment on about every fifth commit, up to
                # a second of pure Python under the index lock while prompts waited (bench/results/sessions.md, issue 32
                # item 6). `merge_segments` does it later, off the write path.
                writer.commit(merge=False)
            except BaseException:
                with self._lock:  # Whoosh has none of it: nor may the searches
                    self._fresh = self._fresh.without_stage(stage)
                    self._hide()
                raise
        with self._lock:
            self._fresh = self._fresh.committed(stage)  # the new searcher and the fresh documents' leaving are one step for searches
            self._reopen()

    def compact(self) -> None:
        """Merge segments and purge deleted documents, so BM25 statistics equal a fresh build's.

        Searches go on meanwhile, on the open searcher (its segments stay readable: a Whoosh reader keeps the
        files it opened); they wait only for the switch to the new one. The caller lets one writer in at a time."""
        self._merge(mergetype=None, optimize=True)

    def segment_count(self) -> int:
        """How many segments the open searcher reads (each commit without a merge adds one)."""
        with self._lock:
            return len(self._searcher.leaf_searchers()) if self._searcher.doc_count_all() else 0

    def merge_segments(self) -> int:
        """Merge the small segments at the end of the index into one (see `tail_to_merge`); returns how many
        segments were merged (0: nothing worth it). Searches go on meanwhile, as in `compact`."""
        merged: list[int] = []

        def policy(writer, segments):  # type: ignore[no-untyped-def]
            tail = tail_to_merge([s.doc_count_all() for s in segments])
            if tail < 2:
                return segments
            for segment in segments[-tail:]:  # in their order: documents keep the order a rebuild gives them
                reader = SegmentReader(writer.storage, writer.schema, segment)
                writer.add_reader(reader)
                reader.close()
            merged.append(tail)
            return segments[:-tail]

        self._merge(mergetype=policy, optimize=False)
        return merged[0] if merged else 0

    def _merge(self, mergetype: Callable[..., list] | None, optimize: bool) -> None:
        writer = self._ix.writer(timeout=30.0, limitmb=WRITER_LIMIT_MB)
        try:
            writer.commit(mergetype=mergetype, optimize=optimize)
        except BaseException:
            if not writer.is_closed:
                writer.cancel()
            raise
        with self._lock:
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
        return set(self.sorted_chunk_ids().tolist())

    def sorted_chunk_ids(self) -> np.ndarray:
        """Every chunk id held, distinct and ascending, without a set of Python ints (a heal at 100k memories)."""
        with self._lock:
            return np.unique(np.fromiter((int(fields["chunk"]) for fields in self._searcher.reader().all_stored_fields()),
                                         dtype=np.int64))

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
        asked = query_terms(text)
        if not asked or k <= 0:
            return []
        fields = {"title": 1.0, "body": 1.0, **({"context": context_boost} if context_boost > 0 else {})}
        with self._lock:
            searcher, fresh = self._searcher, self._fresh
            terms = self._selective(asked, postings_budget, tuple(fields))
            statistics = _statistics(searcher, fresh, terms, fields) if fresh else None
            scores = bm25f_scores(searcher, terms, fields, self._b, self._k1, self._postings.postings, statistics,
                                  self._postings.frequency)
            filter_query = filters.query() if filters else None
            if filter_query is not None:
                allowed = np.zeros(len(scores), dtype=bool)
                allowed[np.fromiter(searcher.docs_for_query(filter_query), dtype=np.int64)] = True
                scores[~allowed] = 0.0
            if filters and filters.excluded_ids:
                scores[self._mask_documents(searcher, filters.excluded_ids)] = 0.0
            scores[self._hidden] = 0.0  # superseded by a fresh document, or removed
            found = _top(scores, k)
            own = self._containing(searcher, asked, ("title", "body"), found)
            context = self._containing(searcher, asked, ("context",), found)
            hits = [KeywordHit(self._chunk(searcher, int(doc)), float(scores[doc]), own[row], context[row])
                    for row, doc in enumerate(found)]
            if not fresh:
                return hits
            assert statistics is not None
            scores = fresh.scores(terms, fields, self._b, self._k1, *statistics)
            if filters:
                scores[[row for row, chunk in enumerate(fresh.rows) if not filters.allows(chunk)]] = 0.0
            hits += [KeywordHit(chunk.chunk_id, float(scores[row]),
                                frozenset(t for t in asked if chunk.holds(t, ("title", "body"))),
                                frozenset(t for t in asked if chunk.holds(t, ("context",))))
                     for row in _top(scores, k).tolist() for chunk in (fresh.rows[row],)]
            hits.sort(key=lambda hit: -hit.score)  # stable: on a tie Whoosh's document first, as a rebuild numbers them
            return hits[:k]

    def _mask_documents(self, searcher: Searcher, excluded: frozenset[str]) -> np.ndarray:
        """The documents of the memories a mask leaves out, kept while the searcher and those memories are the same:
        every search without a filter asks for the same ones (the hidden memories), and matching their terms cost
        10-38 ms a search at 100k memories. When some of those memories leave or come back (the lifecycle's clock),
        only theirs are found: finding all 17k hidden ones again cost the search 3.4 CPU s (s19-lifecycle19.md). Many
        memories are found off a table of every document's memory, not by their terms (`keyword_mask`)."""
        kept = self._masked
        if kept is not None and kept[0]() is searcher:
            if kept[1] == excluded:
                return kept[2]
            came, went = excluded - kept[1], kept[1] - excluded
            if len(came) + len(went) < len(excluded):  # a document belongs to one memory: the sets tell it apart
                documents = kept[2]
                if went:
                    documents = np.setdiff1d(documents, self._documents_of(searcher, went))
                if came:
                    documents = np.union1d(documents, self._documents_of(searcher, came))
                self._masked = (kept[0], excluded, documents)
                return documents
        documents = self._documents_of(searcher, excluded)
        self._masked = (weakref.ref(searcher), excluded, documents)
        return documents

    def _documents_of(self, searcher: Searcher, memory_ids: frozenset[str]) -> np.ndarray:
        return self._memory_table.documents(searcher, memory_ids)

    def _containing(self, searcher: Searcher, terms: Sequence[str], fields: Sequence[str],
                    docs: np.ndarray) -> list[frozenset[str]]:
        """For each document, which of the terms it holds in any of the fields: read from the (cached)
        postings, so a hit's term coverage costs no re-analysis of its text. Every asked term counts,
        also those the postings budget left out of the scoring."""
        held: list[set[str]] = [set() for _ in docs]
        for term in terms:
            present = np.zeros(len(docs), dtype=bool)
            for field in fields:
                for leaf, offset in searcher.leaf_searchers():
                    reader = leaf.reader()
                    if self._postings.frequency(reader, field, term):
                        # The hits moved into the segment's numbering, not its postings into the index's: a
                        # common word's postings are tens of thousands at 100k memories, the hits a hundred.
                        present |= sorted_contains(self._postings.postings(reader, field, term)[0], docs - offset)
            for row in np.flatnonzero(present).tolist():
                held[row].add(term)
        return [frozenset(h) for h in held]

    def warm_postings(self, share: float, go_on: Callable[[], bool]) -> int:
        """Decode the postings of the most frequent terms ahead of the searches that will ask for them, until the cache
        holds `share` of its limit (the rest is left to the searches' own terms); returns the postings added.
        `go_on` is called between two steps of ~0.1-0.5 ms (a block of postings, TERMS_BETWEEN terms counted): it
        waits while the process is busy and answers False when the warming is to end (warm_ahead.py).

        A term's first search decodes its posting lists, ~1 µs a posting: at 100k memories ~6 ms of a first search
        (bench/results/s13-fast100k.md), and a common word's lists are the longest and the likeliest to be asked. Read
        through readers of its own, opened on the open searcher's segments: a Whoosh reader seeks and reads one file
        position, so it is not shared with a search, and no lock is held while a list is decoded. They read the files
        without mapping them: mapped, every page of the postings read counted in the resident set a second time (a
        peak +93 MB at 100k memories). A segment merged away meanwhile keeps its warmed lists until they are evicted,
        as a search's would."""
        with self._lock:
            if isinstance(self._searcher, _Closed) or not self._searcher.doc_count_all():
                return 0
            unmapped = FileStorage(self._ix.storage.folder, supports_mmap=False, readonly=True)  # type: ignore[attr-defined]
            readers = []
            for leaf, _ in self._searcher.reader().leaf_readers():
                # Opened under the lock, which a merge takes only to switch searchers: its commit, before, deleted the
                # files of the segments it merged, which no search reads once it has switched (review of session 16).
                with contextlib.suppress(FileNotFoundError):
                    readers.append(SegmentReader(unmapped, self._schema, leaf.segment()))  # type: ignore[attr-defined]
        added = 0
        try:
            up_to = int(self._postings.limit * share)
            frequency = _frequent_terms(readers, go_on)
            for (field, term), count in sorted(frequency.items(), key=lambda item: (-item[1], item[0])):
                if self._postings.held() + count > up_to:
                    break
                for reader in readers:
                    if (field, term) in reader:  # type: ignore[operator]
                        warmed = self._postings.warm(reader, field, term, up_to, go_on)
                        if warmed is None:
                            return added
                        added += warmed
        finally:
            for reader in readers:
                reader.close()  # type: ignore[attr-defined]
        return added

    def cached_postings(self) -> int:
        """How many decoded postings the searches' cache holds."""
        return self._postings.held()

    def _chunk(self, searcher: Searcher, docnum: int) -> int:
        chunk = self._chunk_of.get(docnum)
        if chunk is None:
            chunk = self._chunk_of[docnum] = int(searcher.stored_fields(docnum)["chunk"])
        return chunk

    def _selective(self, terms: list[str], budget: int, fields: Sequence[str]) -> list[str]:
        if budget <= 0:
            return terms
        return rarest_first(terms, {t: sum(self._frequency(f, t) + self._fresh.doc_frequency(f, t) for f in fields)
                                    for t in terms}, budget)

    def _frequency(self, field: str, term: str) -> int:
        """The open searcher's `doc_frequency`, summed over its segments from the cache."""
        return sum(self._postings.frequency(leaf.reader(), field, term) for leaf, _ in self._searcher.leaf_searchers())

    def idf(self, terms: Sequence[str]) -> dict[str, float]:
        """Inverse document frequency of each term in the body field (rare terms count more)."""
        with self._lock:
            if self._fresh:
                return {term: idf for (_, term), idf in _statistics(self._searcher, self._fresh, terms, ("body",))[0].items()}
            return {term: float(self._searcher.idf("body", term)) for term in terms}


def _reader_reusing(ix: whoosh_index.Index, old: object) -> tuple[object, set[int]]:
    """A reader of the index's last commit that takes over `old`'s reader of each segment unchanged since (same
    segment, same deleted documents); returns it and the ids of the readers taken over."""
    toc = ix._read_toc()  # type: ignore[attr-defined]
    if not toc.segments:
        return EmptyReader(toc.schema), set()
    unchanged = {(leaf.segment().segment_id(), frozenset(leaf.segment().deleted_docs())): leaf
                 for leaf, _ in old.leaf_readers() if leaf.segment() is not None}  # type: ignore[attr-defined]
    readers = [unchanged.pop((segment.segment_id(), frozenset(segment.deleted_docs())), None)
               or SegmentReader(ix.storage, toc.schema, segment, generation=toc.generation)  # type: ignore[attr-defined]
               for segment in toc.segments]
    reader = readers[0] if len(readers) == 1 else MultiReader(readers, generation=toc.generation)
    return reader, {id(r) for r in readers}


def tail_to_merge(sizes: Sequence[int]) -> int:
    """How many segments at the end of the index (sizes in documents, oldest first) to merge into one: the
    newest, and each older one no bigger than those taken so far. Segments are then each bigger than all
    newer ones together, so there are O(log documents) of them, and a merge rewrites the big old segment only
    when the new ones add up to it (each document is rewritten O(log documents) times)."""
    taken, total = 0, 0
    for size in reversed(sizes):
        if taken and size > total:
            break
        taken, total = taken + 1, total + size
    return taken


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """The (at most k) positions of positive scores, best first, ties by position."""
    found = np.flatnonzero(scores > 0.0)
    if len(found) > k:
        found = found[np.argpartition(-scores[found], k - 1)[:k]]
    return found[np.lexsort((found, -scores[found]))]


Statistics = tuple[dict[tuple[str, str], float], dict[str, float]]  # idf per (field, term), average field length


def _statistics(searcher: Searcher, fresh: Fresh, terms: Sequence[str], fields: Iterable[str]) -> Statistics:
    """BM25's collection statistics over Whoosh's documents and the fresh ones together, as Whoosh counts them
    (deleted documents included): the same for both, so their scores compare."""
    documents = searcher.doc_count_all() + fresh.doc_count()
    idf = {(field, term): fresh_idf(documents, searcher.doc_frequency(field, term) + fresh.doc_frequency(field, term))
           for field in fields for term in terms}
    average = {field: (searcher.field_length(field) + fresh.field_length(field)) / (documents or 1) for field in fields}
    return idf, average


def rarest_first(terms: list[str], cost: dict[str, int], budget: int) -> list[str]:
    """The terms, rarest first, while their postings (`cost`) fit the budget; in the query's order."""
    kept: set[str] = set()
    spent = 0
    for term in sorted(terms, key=lambda t: cost[t]):
        if kept and spent + cost[term] > budget:
            break
        kept.add(term)
        spent += cost[term]
    return [t for t in terms if t in kept]


def bm25f_scores(searcher: Searcher, terms: Sequence[str], fields: dict[str, float], b: float,
                 k1: float, postings: Callable[[object, str, str], tuple[np.ndarray, np.ndarray]] | None = None,
                 statistics: Statistics | None = None, frequency: Callable[[object, str, str], int] | None = None) -> np.ndarray:
    """Whoosh's BM25F score of every document (0 for none, deleted ones included) for an OR of the terms
    over the fields, each field's score times its boost: what `searcher.search` would rank by.

    A stored weight is the term frequency times the field's `field_boost`, exactly as Whoosh's
    scorer reads it; idf and average field lengths are Whoosh's own, or the given `statistics` (documents not
    yet in Whoosh counted too, see `_statistics`).
    """
    scores = np.zeros(searcher.doc_count_all(), dtype=np.float64)
    for field, boost in fields.items():
        average_length = (statistics[1][field] if statistics else searcher.avg_field_length(field)) or 1
        for term in terms:
            idf = statistics[0][(field, term)] if statistics else None
            for leaf, offset in searcher.leaf_searchers():
                reader = leaf.reader()
                if not (frequency or _frequency)(reader, field, term):
                    continue
                idf = searcher.idf(field, term) if idf is None else idf
                docs, weights = (postings or _postings)(reader, field, term)
                norm = (1 - b) + b * _lengths(reader, field, docs) / average_length if b else 1.0
                scores[docs + offset] += boost * idf * (weights * (k1 + 1)) / (weights + k1 * norm)
    for leaf, offset in searcher.leaf_searchers():
        reader = leaf.reader()
        if reader.has_deletions():
            scores[deleted_documents(reader) + offset] = 0.0
    return scores


class _Closed:
    """The searcher of a closed keyword index: any use says so (the real one is let go, see KeywordIndex.close)."""

    def __getattr__(self, name: str) -> object:
        raise RuntimeError("this keyword index was closed")

    def close(self) -> None:
        pass


class PostingsCache:
    """Decoded postings, remembered per segment of one index: a written Whoosh segment never changes
    (deletions are applied by the caller, a merge writes a new segment with a new random id).
    Decompressing them was about half of a keyword search at 10k memories."""

    def __init__(self, limit: int = 2_000_000, read_blocks: bool = True) -> None:  # postings kept (~24 MB)
        self.limit = limit
        self.read_blocks = read_blocks
        self._entries: OrderedDict[tuple[str, int, str, str], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self._frequencies: dict[tuple[str, str, str], int] = {}  # (segment id, field, term) -> documents holding it

    def frequency(self, reader: object, field: str, term: str) -> int:
        """How many of the segment's documents hold the term (deleted ones included, as Whoosh counts them); 0 when
        its term table has no such term. Asking Whoosh hashes the term and searches its table in Python (~5 µs):
        ~150 times a search at 10k memories, for whether a segment holds each term and how common it is."""
        segment = getattr(reader, "segment", lambda: None)()  # None: no segment (an empty index)
        if segment is None:
            return _frequency(reader, field, term)
        key = (segment.segment_id(), field, term)
        found = self._frequencies.get(key)
        if found is None:
            found = _frequency(reader, field, term)
            with self._lock:
                if len(self._frequencies) >= FREQUENCIES_KEPT:
                    self._frequencies.clear()  # a new vocabulary of questions: start again rather than track use
                self._frequencies[key] = found
        return found

    def postings(self, reader: object, field: str, term: str) -> tuple[np.ndarray, np.ndarray]:
        segment = getattr(reader, "segment", None)
        if segment is None:
            return _postings(reader, field, term, self.read_blocks)
        key = (segment().segment_id(), reader.doc_count_all(), field, term)  # type: ignore[attr-defined]
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        found = _postings(reader, field, term, self.read_blocks)
        with self._lock:
            if key not in self._entries:
                self._entries[key] = found
                self._size += len(found[0])
            while self._size > self.limit and len(self._entries) > 1:
                _, (docs, _) = self._entries.popitem(last=False)
                self._size -= len(docs)
        return found

    def held(self) -> int:
        """How many postings are kept."""
        with self._lock:
            return self._size

    def warm(self, reader: object, field: str, term: str, up_to: int, go_on: Callable[[], bool]) -> int | None:
        """Decode one term's postings ahead of a search, if absent and if the cache then holds at most `up_to`
        postings; returns how many were added, None when `go_on` ended it between two blocks. They go in as the least
        recently used: a warmed list is the first to leave when searches need the room, and one warmed after it (a
        rarer term) leaves before it."""
        key = (reader.segment().segment_id(), reader.doc_count_all(), field, term)  # type: ignore[attr-defined]
        with self._lock:
            if key in self._entries:
                return 0
        blocks = []
        for block in _blocks(reader, field, term, self.read_blocks):
            if not go_on():
                return None
            blocks.append(block)
        found = _joined(blocks)
        with self._lock:
            if key in self._entries or self._size + len(found[0]) > up_to:
                return 0
            self._entries[key] = found
            self._entries.move_to_end(key, last=False)
            self._size += len(found[0])
        return len(found[0])


def _frequency(reader: object, field: str, term: str) -> int:
    return reader.doc_frequency(field, term) if (field, term) in reader else 0  # type: ignore[attr-defined, operator]


def _postings(reader: object, field: str, term: str, read_blocks: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(document numbers, weights) of one term in one segment, read a block at a time (`_blocks`)."""
    return _joined(_blocks(reader, field, term, read_blocks))


def _blocks(reader: object, field: str, term: str, read_blocks: bool = True) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """One term's (document numbers, weights) in one segment, block by block.

    Deleted documents may be included (the caller zeroes them). Whoosh's own matcher yields one
    posting per Python call; its block reader (whoosh3's W3LeafMatcher) decodes a whole block,
    so it is used when present, and the public per-posting API otherwise (or when `read_blocks` is
    False: then all of them as one block). Both give the same live postings (tests/indexer/test_keyword.py); reading
    blocks makes a search over postings not yet cached 1.35-2x faster, and owning the postings instead was measured
    and not taken (bench/results/scale.md, "Keyword channel: Whoosh internals or owned postings"). Postings warmed
    ahead (PostingsCache.warm) let a request go first between two blocks.
    """
    matcher = reader.postings(field, term)  # type: ignore[attr-defined]
    matcher = getattr(matcher, "child", matcher)  # deletions come wrapped in a FilterMatcher
    if not (read_blocks and all(hasattr(matcher, name) for name in BLOCK_READER)):
        pairs = list(matcher.items_as("weight"))
        yield (np.fromiter((d for d, _ in pairs), dtype=np.int64, count=len(pairs)),
               np.fromiter((w for _, w in pairs), dtype=np.float64, count=len(pairs)))
        return
    while matcher.is_active():
        matcher._read_ids()
        matcher._read_weights()
        block = matcher._weights
        yield (np.asarray(matcher._ids, dtype=np.int64),
               np.frombuffer(block, dtype=np.float32) if isinstance(block, array) and block.typecode == "f"
               else np.asarray(block, dtype=np.float64))
        matcher._next_block()


def _joined(blocks: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    listed = list(blocks)
    if not listed:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    return np.concatenate([d for d, _ in listed]), np.concatenate([w for _, w in listed]).astype(np.float64)


def _frequent_terms(readers: list[object], go_on: Callable[[], bool]) -> dict[tuple[str, str], int]:
    """(field, term) -> documents holding it, over the segments, for the terms in at least COMMON_SHARE of a segment's
    documents; what was counted when `go_on` ended it."""
    frequency: dict[tuple[str, str], int] = {}
    for reader in readers:
        for field in SEARCH_FIELDS:
            if field not in reader.schema:  # type: ignore[attr-defined]
                continue
            decode = reader.schema[field].from_bytes  # type: ignore[attr-defined]
            common = reader.doc_count_all() * COMMON_SHARE  # type: ignore[attr-defined]
            for counted, (text, info) in enumerate(reader.iter_field(field)):  # type: ignore[attr-defined]
                if counted % TERMS_BETWEEN == 0 and not go_on():
                    return frequency
                if info.doc_frequency() >= common:
                    term = decode(text)
                    frequency[(field, term)] = frequency.get((field, term), 0) + info.doc_frequency()
    return frequency


def _lengths(reader: object, field: str, docs: np.ndarray) -> np.ndarray:
    return np.fromiter((reader.doc_field_length(int(d), field, 1) for d in docs), dtype=np.float64,  # type: ignore[attr-defined]
                       count=len(docs))


@dataclass(frozen=True, slots=True)
class KeywordHit:
    chunk_id: int
    score: float
    own_terms: frozenset[str] = frozenset()  # the query's terms in the chunk's title or text
    context_terms: frozenset[str] = frozenset()  # ... and in its neighbours' text


def query_terms(text: str) -> list[str]:
    """The query's analysed (lower-cased, stemmed, stop-word-free) terms, de-duplicated, bounded."""
    seen: dict[str, None] = {}
    for token in QUERY_ANALYZER(text):
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
