"""Hybrid search over one index: filter, retrieve from both channels, fuse, calibrate, rank.

    1. filters (collections, type, tags, dates, status, privacy) decide which memories compete
    2. FAISS top-N over chunks and Whoosh BM25F top-N over chunks, each already restricted by the filters
    3. hits fold into their memory; every candidate gets its exact vector score from its units
       (best sentence, blended with the units that read it with its neighbours)
    4. fusion orders the union (z-scores of both channels, or weighted Reciprocal Rank Fusion)
    5. calibration turns absolute channel evidence into a 0..1 relevance
    6. graph: a hidden superseded hit is replaced by its successor; top hits lend relevance to linked memories
    7. quality (pluggable) and per-type recency give the final score; threshold; limit
"""

from __future__ import annotations

import bisect
import logging
import math
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import MISSING, dataclass, fields, replace
from datetime import datetime, timedelta, timezone
from itertools import accumulate, chain
from typing import Any, Iterable, Literal, Mapping, NamedTuple

import numpy as np

from vault.errors import ValidationError
from vault.model import COLLECTIONS, TYPES, Memory
from vault.settings import LifecycleSettings

from . import multihop, timewords
from .salient import salient_text
from .chunking import NEXT, PREVIOUS, SENTENCE, WHOLE, chunks_for
from .embed import CachedEmbedder, PendingVector, Ready
from .index import Index
from .keyword import KeywordFilter, KeywordHit, query_terms
from .lazy_rows import AllBut
from .leaving import NOTHING, LeavingSchedule
from .learner import QualityModel
from .people import NOBODY, Named, People
from .ranking import (
    QualityFn,
    calibrate,
    combined_evidence,
    learned_features,
    learned_order,
    never_rising,
    recency_bonus,
    section_score,
    shown_relevance,
    standout_shortfall,
    vector_evidence,
)
from .settings import SearchSettings
from .unscored import fair_to_fresh

EARLIEST = datetime(1, 1, 2, tzinfo=timezone.utc)  # the start of every window; a day after datetime.min, room for any time zone
log = logging.getLogger("memdir.search")
Mode = Literal["hybrid", "keyword", "vector"]
SortBy = Literal["relevance", "recency", "score"]
HIDDEN_STATUSES = frozenset({"superseded", "archived"})
# A query token written as code, not as a word (ERR_4711, parse_config, ImportLockTimeout, v2.3): it has no
# paraphrase, so a memory that holds it is evidence however little else of the query it covers.
_CODE_TOKEN = re.compile(r"\b(?=\w*(?:[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]|_))\w{3,}(?:\.\w+)*|\b\w+(?:\.\w+)+\b")
_WORD = re.compile(r"\w+")
COSINE_NOISE = 0.05  # cosine differences below this say nothing about relevance
UNSEEN = "\x00unseen"  # no analysed term: its IDF is the rarest a word can be (found in no memory)
COVERAGE_DEPTH = 30  # keyword hits whose term coverage is measured; deeper ones rely on their rank
READ_TEXTS = 8  # query texts whose reading a searcher keeps: a prompt's is read twice (Searcher._text)
CHUNK_HITS_PER_CANDIDATE = 2  # a long document has several chunks: FAISS is asked for this many per wanted memory
# A search with a vector budget (a prompt hook's) asks for the query's vector only once this share of the units has
# theirs: below it the vector channel ranks a minority of the vault that the keyword channel covers too, while the
# model host is busy embedding the rest (the backfill of a fresh vault, a large import).
MIN_VECTOR_SHARE = 0.5

# The query is embedded on this thread while the calling thread filters and runs the keyword
# search: ONNX Runtime releases the GIL while it computes, so on two cores the two overlap and a
# search costs about the longer of the two, not their sum. Several threads: concurrent sessions' prompts
# each wait for their own query, not for a queue of the others' (a query takes no embedder lock).
_QUERY_EMBEDDING = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memdir-query-embedding")


def _vector_or_keyword(embedding: PendingVector, request: SearchRequest) -> tuple[PendingVector | None, SearchRequest]:
    """The query's vector within `request.vector_wait` seconds, waited for before the index lock is taken (captures
    and the backfill go on meanwhile); else the keyword channel alone. A keyword answer beats no answer."""
    try:
        embedding.result(timeout=request.vector_wait)
        return embedding, request
    except TimeoutError:
        log.info("query vector not ready within %.2f s: keyword channel only", request.vector_wait)
    except Exception as exc:  # noqa: BLE001 - the model host is down or starting: said in the log, answered by keyword
        log.warning("query vector failed (%s: %s): keyword channel only", type(exc).__name__, exc)
    return None, replace(request, mode="keyword")


@dataclass(frozen=True)
class SearchRequest:
    query: str | None = None
    memory_id: str | None = None
    limit: int | None = None
    collections: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    days_back: float | None = None  # > 0: the contract's Search model checks it (mcp_server/service/operations.py)
    after: datetime | None = None
    before: datetime | None = None
    include_superseded: bool = False  # also return superseded and archived memories
    privacy: tuple[str, ...] | None = None  # allowed privacy values; None allows all
    sources: tuple[str, ...] | None = None  # allowed vault sources ("project", "user"); None allows all
    sort_by: SortBy = "relevance"
    mode: Mode = "hybrid"
    graph: bool = True
    now: datetime | None = None
    # At most this many seconds for the query's vector, then the keyword channel alone (None: wait). A prompt
    # hook's answer must not wait for a model host that is starting, or busy embedding a first index build.
    vector_wait: float | None = None
    # Also put in Hit.explain what the learned order reads (search.learned_order) with the setting off: what
    # bench/learned_order.py's dump fits on. Off and unasked, none of it is computed (it cost the off path ~1 ms at 10k).
    features: bool = False


@dataclass(frozen=True)
class Hit:
    memory: Memory
    relevance: float  # calibrated 0..1 from the channels' absolute evidence
    final: float  # what the list is ordered by: relevance, quality and recency
    channel: str  # vector | keyword | both | graph | hop | lookup | timeline
    heading: str = ""  # the section of a long document that matched
    vector_score: float | None = None  # best chunk's cosine, blended with its neighbour units
    keyword_score: float | None = None  # best chunk BM25F
    quality: float | None = None  # the factor the outcome record multiplied the order by (1 = neutral)
    successor: str | None = None  # set when the memory is superseded
    via: str | None = None  # graph hits: the memory that led here
    excerpt: str = ""  # the matching section's text, for memories indexed in several chunks
    stale: tuple[dict[str, Any], ...] = ()  # cited files changed since the memory was anchored
    written: datetime | None = None  # created_at, else the file's mtime (seed 004)
    explain: dict[str, float] | None = None  # ranked hits: the terms `final` was made of (see Searcher._rank)
    # What a ranked hit shows as its relevance: how likely it is the answer, never above the relevance that ranked it
    # (see with_shown); None for lookups and timelines. Thresholds (score_threshold, the hook's) read `relevance`.
    shown: float | None = None

    def but(self, **changes: Any) -> Hit:
        """This hit with these fields changed: `dataclasses.replace` without its call through `__init__`, which cost
        1.5 ms of a search at 100k memories (a ranking replaces each of its ~170 hits)."""
        unknown = changes.keys() - self.__dict__.keys()
        if unknown:
            raise TypeError(f"Hit has no field {sorted(unknown)}")
        changed = object.__new__(Hit)
        changed.__dict__.update(self.__dict__)
        changed.__dict__.update(changes)
        return changed

    @staticmethod
    def made(memory: Memory, relevance: float, final: float, channel: str, **rest: Any) -> Hit:
        """The Hit `Hit(memory, relevance, final, channel, **rest)` makes, without the frozen dataclass's `__init__`
        (a setattr through `object` a field: 3.7 µs a hit, and a ranking makes ~170 at 10k memories)."""
        unknown = rest.keys() - _HIT_DEFAULTS.keys()
        if unknown:
            raise TypeError(f"Hit has no field {sorted(unknown)}")
        hit = object.__new__(Hit)
        hit.__dict__.update(memory=memory, relevance=relevance, final=final, channel=channel)  # the fields' order
        hit.__dict__.update(_HIT_DEFAULTS)
        hit.__dict__.update(rest)
        return hit

    def moment(self) -> float:
        """When the memory was written, for newest-first orders (-inf when unknown)."""
        when = self.written or self.memory.created_at
        return when.timestamp() if when else float("-inf")


_HIT_DEFAULTS = {f.name: f.default for f in fields(Hit) if f.default is not MISSING}


@dataclass
class _Candidate:
    memory_id: str
    vector_rank: int | None = None
    keyword_rank: int | None = None
    vector_score: float | None = None
    keyword_score: float | None = None
    keyword_coverage: float = 0.0
    # The share of the query's code-like terms (ERR_4711, parse_config, v2.3) it holds: no paraphrase of them exists.
    keyword_exact: float = 0.0
    # How rare in the vault its rarest matched query word is (that word's IDF over an unseen word's): a name or an
    # error code the question shares is the point; a common word a paraphrase shares is not.
    keyword_rarity: float = 0.0
    heading: str = ""
    fused: float = 0.0
    mix: tuple[float, float] = (0.0, 0.0)  # the vector and the keyword term inside `fused`, for Hit.explain
    evidence: float = 0.0  # both channels' absolute evidence: the relevance shown (and thresholded)
    weighed: float = 0.0  # the same with the keyword channel weighed by what it has to say here: what ranks
    channel: str = ""
    via: str | None = None
    near: bool = False  # within vector_margin of the question's best vector score, under cosine_floor (found_by_vector)


class _Owned(NamedTuple):
    """A keyword channel's chunk hit and the memory (and section heading) that chunk belongs to."""

    hit: KeywordHit
    memory_id: str
    heading: str


_ROLE_CODE = {WHOLE: 0, SENTENCE: 1, PREVIOUS: 2, NEXT: 3}


@dataclass(frozen=True)
class _Units:
    """Some memories' unit vectors as one matrix, and which memory, chunk and role each row is."""

    rows: dict[str, slice]  # memory id -> its rows
    groups: dict[str, slice]  # memory id -> its chunks (positions in `chunks`)
    matrix: np.ndarray
    roles: np.ndarray  # _ROLE_CODE of each row
    group: np.ndarray  # each row's chunk position
    chunks: list[int]  # chunk id of each position

    def chunk_scores(self, query_vector: np.ndarray, w_previous: float, w_next: float,
                     sharpness: float = 0.0, whole_share: float = 0.0, lift_sentences: int | None = None) -> list[float]:
        """Each chunk's score: its best sentence (or, for a memory with no neighbours, a soft maximum over its
        whole text and its sentences, its lift above the whole shrunk for a note of more than `lift_sentences`
        sentences (None: never), moved `whole_share` of the way to its whole text), blended with its best
        previous and next units (the whole chunk when it has none). In float64 and in this order, the
        arithmetic is what it was per chunk in Python floats."""
        cosines = (self.matrix @ query_vector).astype(np.float64)
        count = len(self.chunks)
        whole = np.full(count, -np.inf)  # every chunk has a whole unit; -inf only if one did not
        best = []
        raw = []  # per role, -inf where a chunk has no such unit
        for code in range(4):
            mask = self.roles == code
            if code == 0:
                whole[self.group[mask]] = cosines[mask]
                continue
            found = np.full(count, -np.inf)
            np.maximum.at(found, self.group[mask], cosines[mask])
            raw.append(found)
            best.append(np.where(np.isfinite(found), found, whole))
        text, previous, following = best
        # A standalone note (no previous or next memory) is read as a whole: one sentence of an unrelated
        # note can sit close to a paraphrased question by accident, and a long note's section is close to
        # many. Its text scores the soft maximum (log-mean-exp) of its whole unit's and its sentences'
        # cosines: near the best for a sharp match, pulled down when the rest of the note says something
        # else (fresh-paraphrase set, bench/results/search.md issue 26 session 3). A conversation turn keeps its best
        # sentence (on LoCoMo the whole turn lost 0.3 points of Recall@10). A long question (a pasted
        # paragraph, a log) is itself a whole text: it is compared whole to whole (see whole_share).
        alone = ~(np.isfinite(raw[1]) | np.isfinite(raw[2]))
        soft = self._soft_text(cosines, whole, text, sharpness)
        if lift_sentences is not None:
            soft = self._lift_per_chance(whole, soft, lift_sentences)
        text = np.where(alone, (1.0 - whole_share) * soft + whole_share * whole, text)
        return ((text + (w_previous * previous + w_next * following)) / (1.0 + w_previous + w_next)).tolist()

    def _lift_per_chance(self, whole: np.ndarray, soft: np.ndarray, in_full: int) -> np.ndarray:
        """The soft maximum's lift above the whole unit, times (in_full + 1) / (sentences + 1) for a chunk of more
        than `in_full` sentences; a soft maximum under the whole (the rest of the note says something else) is kept.
        Best of N: a long note has more chances to hold one sentence near a question by accident, and one such
        sentence lifted notes of seven and eight sentences over served answers whose whole text was nearer
        (bench/results/s10-pool10.md). A two-sentence note's lift wins the coding sets as often as it loses the served
        ones: shrunk from two sentences on, coding dev MRR@10 fell 0.006 and the padded long prompts 0.021."""
        sentences = np.zeros(len(self.chunks))
        np.add.at(sentences, self.group[self.roles == _ROLE_CODE[SENTENCE]], 1.0)
        share = (in_full + 1.0) / (sentences + 1.0)
        return np.where((soft > whole) & (share < 1.0), whole + share * (soft - whole), soft)

    def _soft_text(self, cosines: np.ndarray, whole: np.ndarray, best: np.ndarray, sharpness: float) -> np.ndarray:
        """Per chunk, log(mean(exp(sharpness * cosine))) / sharpness over its whole and sentence units;
        sharpness 0 keeps the mean of the best sentence and the whole."""
        if sharpness <= 0:
            return (best + whole) / 2.0
        mask = self.roles <= 1
        groups, values = self.group[mask], cosines[mask]
        top = np.full(len(self.chunks), -np.inf)
        np.maximum.at(top, groups, values)
        top = np.where(np.isfinite(top), top, 0.0)
        total = np.zeros(len(self.chunks))
        counts = np.zeros(len(self.chunks))
        np.add.at(total, groups, np.exp(sharpness * (values - top[groups])))
        np.add.at(counts, groups, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(counts > 0, top + np.log(total / np.maximum(counts, 1.0)) / sharpness, whole)


@dataclass(frozen=True)
class _Text:
    """What of a search's reading depends on its query's text alone (Searcher._text)."""

    query: str | None  # cut to its salient lines when longer than max_query_chars
    pasted: float  # whole_share of the whole prompt
    time_share: float
    salient: str  # the salient lines pooled into the query's vector at `weight` ("": none)
    weight: float


@dataclass(frozen=True)
class _Read:
    """How a search reads its request's text (Searcher._read): what its vector channel embeds, and the shares its
    order weighs by. One reading for the search and for its query sent ahead (Searcher.send_query)."""

    request: SearchRequest  # its query cut to its salient lines when too long; keyword mode with no vector to find
    text: _Text
    people: Named

    @property
    def embedded(self) -> str | None:
        """The text whose vector the search asks for (the names of the people it names taken out); None: none."""
        query, mode = self.request.query, self.request.mode
        return (self.people.embedded or query) if query and query.strip() and mode in ("hybrid", "vector") else None


_KeywordStage = tuple[dict[str, _Candidate], _Units | None]  # Searcher._keyword_stage: the keyword candidates, their units


@dataclass(frozen=True)
class _Ahead:
    """A search's keyword stage done before its vector came (Searcher._keyword_ahead), and what it was done for."""

    request: SearchRequest
    allowed: Mapping[str, Memory]
    version: int  # the index's: any change since (a sync, a swap, the backfill's vectors) and it is done again
    stage: _KeywordStage

    def holds(self, request: SearchRequest, allowed: Mapping[str, Memory], version: int) -> bool:
        """Whether it is what `_retrieve` would compute now: the same request (not turned to keyword mode by a vector
        that did not come), the same allowed memories, the index unchanged."""
        return request is self.request and allowed is self.allowed and version == self.version


class Searcher:
    """Answers SearchRequests against a (shared, live) Index."""

    def __init__(self, index: Index, settings: SearchSettings, quality: QualityFn | None = None,
                 lifecycle: LifecycleSettings | None = None) -> None:
        self.index = index
        self.settings = settings
        self.quality = quality or QualityModel.from_settings(settings)
        self.lifecycle = lifecycle  # when set, memories the next lifecycle run removes are left out now
        self._leaving = LeavingSchedule(index, lifecycle) if lifecycle is not None else None
        index.set_bm25(settings.bm25_b, settings.bm25_k1)
        # (index version, superseded?, out of sight) -> allowed
        self._unfiltered: tuple[tuple[int, bool, frozenset[str]], Mapping[str, Memory]] | None = None
        # (index version, the moments between which its lifecycle decisions hold (None: for ever), ids)
        self._out_of_sight: tuple[int, datetime, datetime | None, frozenset[str]] | None = None
        self._left_out_units: tuple[AllBut, np.ndarray] | None = None  # the allowed view -> its left-out whole units
        self._people = People()
        self._sections: tuple[int, dict[str, bool]] = (-1, {})  # index version -> memory id -> _sectioned
        self._texts: dict[str | None, _Text] = {}  # the last READ_TEXTS query texts -> their reading (_text)
        self._texts_lock = threading.Lock()

    def search(self, request: SearchRequest, merged: bool = False) -> list[Hit]:
        """`merged`: the hits are one vault's part of a merge (mcp_server/service/privacy.py), which puts a fresh
        unused memory and a used one in their order once, over the union. So a vault gives both its top `limit` by
        final score and its top `limit` in its own order (where a fresh memory may have climbed from far below),
        in final-score order. Given only the second, a used hit the vault's swaps moved below the cut was lost and
        the merge's own order undid the swap; only the first, a fresh memory below the cut never climbed (the
        reviews of session 9)."""
        with self.index.searches.running():  # captures queued meanwhile wait for it (group_sync.py)
            try:
                return self._answer(request, merged)
            finally:
                self.index.answered.set()  # a server builds its MCP endpoint after the first answer (process.py)

    def send_query(self, request: SearchRequest) -> None:
        """Send the text(s) this request's search will embed to the model now, for that search to find underway
        (CachedEmbedder.send_query): a prompt's server knows its text before it claims the event, takes the
        session's lock and opens the turn. The same reading as the search's (`_read`); a text that differs by then
        (an author named since) is only a query the search does not find sent."""
        if request.memory_id:
            return
        read = self._read(request)
        if read.embedded is not None:
            for text in (read.text.salient, read.embedded):
                if text:
                    self.index.embedder.send_query(text, _QUERY_EMBEDDING)

    def _answer(self, request: SearchRequest, merged: bool) -> list[Hit]:
        now = request.now or datetime.now(timezone.utc)
        limit = self._limit(request.limit)
        _known("collection", request.collections, COLLECTIONS)
        _known("type", request.types, TYPES)
        if request.memory_id:
            return self._checked([self._lookup(request.memory_id)])
        read = self._read(request)
        request, people, pasted, time_share = read.request, read.people, read.text.pasted, read.text.time_share
        embedding = None
        if read.embedded is not None:
            embedder = self.index.embedder
            if read.text.salient:
                part = _QUERY_EMBEDDING.submit(embedder.embed_query, read.text.salient)  # first: the whole's task waits on it
                embedding = _QUERY_EMBEDDING.submit(_pooled, embedder, read.embedded, part, read.text.weight)
            else:
                embedding = _started(embedder, read.embedded)
        ahead = None
        if embedding is not None and request.vector_wait is not None:
            if not isinstance(embedding, Ready):
                # The keyword channel's work while the vector is computed, the index lock let go before the wait
                # (_keyword_ahead); used below if nothing changed meanwhile.
                ahead = self._keyword_ahead(request, now)
            embedding, request = _vector_or_keyword(embedding, request)
        with self.index.lock:
            if request.query and request.query.strip() and timewords.is_vague(request.query):
                return self._checked(self._vague(request, now, limit))
            allowed = self._allowed(request, now)
            if not request.query or not request.query.strip():
                return self._checked(self._timeline(allowed, request, now, limit))
            done = ahead.stage if ahead is not None and ahead.holds(request, allowed, self.index.version) else None
            candidates, query_vector = self._retrieve(request, allowed, embedding, done)
            if query_vector is not None and allowed:  # the second hop (indexer/multihop.py)
                multihop.second_hop(self.index, candidates, query_vector, lambda vector: self._retrieve(
                    request, allowed, Ready(vector))[0], self.settings.hop_seeds,
                    self.settings.hop_beta, self.settings.hop_share, _Candidate)
            # The query's time words rank what falls in their window higher, unless an explicit window
            # (days_back, after, before) decided the time already: it wins over them (see window_used).
            named = None if _explicit(request) or time_share <= 0.0 else timewords.window(
                request.query, now, present=False)
            hits = self._rank(candidates, allowed, request, now, named, query_vector, people, time_share, pasted)
            # The turns around the best hit in its captured conversation rise with it (indexer/multihop.py).
            hits = multihop.lift_thread(self.index, hits, self.settings.thread_reach, self.settings.thread_lift)
            # The session of the strong hit nearest the question in meaning rises too (indexer/multihop.py).
            hits = multihop.lift_conversation(self.index, hits, query_vector, self.settings.conversation_reach,
                                              self.settings.conversation_lift)
            hits = with_shown(returned(hits, request.sort_by, now, self.settings.fresh_unscored_days, limit, merged),
                              request.sort_by)
            # Only the returned hits need their successor (a graph walk) and excerpt (a re-chunking).
            hits = [h.but(successor=self._successor(h.memory)) for h in hits]
        # An excerpt reads only its hit's Memory, which is frozen: re-chunked with the lock let go, it no longer holds
        # the other sessions' searches back (a tenth of a search's time under the lock, more for a book's sections).
        # Only a hit of a long document's section has one (`Hit.but`, not `replace`: 2-3 % of a search's CPU at 10k).
        return [h.but(excerpt=_excerpt(h.memory, h.heading)) if h.heading else h for h in hits]

    # -- steps -------------------------------------------------------------------------

    def _read(self, request: SearchRequest) -> _Read:
        """How the search reads its request's text: what it embeds, and the shares its order weighs by."""
        text = self._text(request.query)
        if text.query != request.query:
            request = replace(request, query=text.query)
        people = self._named_people(request)
        if request.vector_wait is not None and request.mode == "hybrid" and \
                self.index.vector_share() < MIN_VECTOR_SHARE:
            # Little the vector channel could find (a fresh vault, whose vectors the backfill embeds minutes after its
            # first answers; only the first captured exchanges have theirs): the keyword channel alone at once, as
            # when the vector is not ready in time, without that wait. Each cold prompt spent 0.25 s of its hook's
            # 0.9 s on it, for a model host that was itself starting (bench/results/s22-cold22.md), or, once a capture
            # had 14 units' vectors of ~700, busy embedding (bench/results/s23-cold23.md).
            request = replace(request, mode="keyword")
        return _Read(request, text, people)

    def _text(self, query: str | None) -> _Text:
        """What of the reading depends on the query's text alone. Kept for the last few texts: a prompt's is read
        when its query is sent ahead and again by its search, and reading a 64,000-character paste costs ~34 ms of
        CPU (its salient lines, its words counted twice)."""
        asked = query
        with self._texts_lock:
            known = self._texts.get(asked)
        if known is not None:
            return known
        # A long prompt's error lines and its user's sentences (indexer/salient.py), from all of it: in a long paste
        # they come last, after what max_query_chars and the model's 256 word pieces read.
        pasted = whole_share(query, self.settings)  # of the whole prompt, before a long one is cut to its lines
        weight = self.settings.salient_weight * pasted
        # From the whole prompt too: a paste read by its salient lines below is still a paste, its time words the
        # pasted text's own (review of session 9: measured on the lines, the share was 1 again).
        time_share = time_words_share(query, self.settings)
        truncated = query is not None and len(query) > self.settings.max_query_chars
        salient = salient_text(query, failure_only=not truncated) if weight > 0 and query else ""
        if truncated:
            # A paste longer than a query is read is asked by its salient lines: its beginning is an arbitrary stretch of
            # log (24 pastes behind 8 kB of access log: MRR@10 0.05 -> 0.80 so, 0.49 pooled with the beginning;
            # bench/results/search.md issue 26 session 8). Without any, by its beginning: an answer, not an error.
            assert query is not None
            query = salient[:self.settings.max_query_chars] or query[:self.settings.max_query_chars]
            salient = ""
        text = _Text(query, pasted, time_share, salient, weight)
        with self._texts_lock:
            self._texts[asked] = text
            while len(self._texts) > READ_TEXTS:
                del self._texts[next(iter(self._texts))]
        return text

    def _named_people(self, request: SearchRequest) -> Named:
        """The memories' speakers or authors the query names (indexer/people.py); nobody when that is off."""
        if self.settings.author_boost <= 0 or not request.query:
            return NOBODY
        return self._people.named(request.query, self.index.author_names())

    def _limit(self, limit: int | None) -> int:
        limit = self.settings.default_limit if limit is None else limit
        if not 1 <= limit <= self.settings.max_limit:
            raise ValidationError(f"limit must be between 1 and {self.settings.max_limit}")
        return limit

    def _checked(self, hits: list[Hit]) -> list[Hit]:
        """Hits that were not ranked by relevance still say which cited files changed under them."""
        return [replace(h, stale=tuple(self.index.vault.stale(h.memory))) for h in hits]

    def _lookup(self, memory_id: str) -> Hit:
        memory = self.index.get(memory_id)
        return Hit(memory, 1.0, 1.0, "lookup", successor=self._successor(memory), written=self.written(memory))

    def _allowed(self, request: SearchRequest, now: datetime) -> Mapping[str, Memory]:
        """The memories that compete. Without filters this depends only on the index state, so it
        is kept until the index changes (walking 10k memories cost several ms per search)."""
        unfiltered = not (request.collections or request.types or request.tags or request.after or request.before
                          or request.days_back is not None or request.privacy is not None or request.sources is not None)
        # Expiry depends on the clock: the set out of sight is the same object until a memory leaves or comes back.
        version = self.index.version
        hidden = NOTHING if request.include_superseded else self.out_of_sight(now)
        key = (version, request.include_superseded, hidden)
        if unfiltered and self._unfiltered is not None and self._unfiltered[0] == key:
            return self._unfiltered[1]
        allowed = self._filter(request, now, hidden)
        if unfiltered:
            self._unfiltered = (key, allowed)
        return allowed

    def _filter(self, request: SearchRequest, now: datetime, hidden: frozenset[str]) -> Mapping[str, Memory]:
        """The memories the request's filters let through, but the `hidden` ones (`out_of_sight`) unless it asks for
        every one."""
        after = _explicit_start(request, now)
        wanted_tags = {t.lower().lstrip("#") for t in request.tags}
        if not (request.collections or request.types or wanted_tags or after or request.before
                or request.privacy is not None or request.sources is not None):
            # Only the status can leave a memory out: told by the rows' lifecycle facts, not by decoding every memory
            # (a cold open decodes rows as they are read, lazy_rows.py).
            if request.include_superseded:
                return self.index.memories_but(())
            return self.index.memories_but(hidden.union(self.index.ids_with_status(HIDDEN_STATUSES)))
        allowed: Mapping[str, Memory] = {}
        for memory in self.index.all_memories():
            memory_id = memory.id
            if request.collections and memory.collection not in request.collections:
                continue
            if request.types and memory.type not in request.types:
                continue
            if wanted_tags and not wanted_tags & {t.lower() for t in memory.tags}:
                continue
            if after or request.before:
                moment = memory.created_at or self._modified(memory)  # seed 004: file mtime without created_at
                if moment is None or (after and moment < after) or (request.before and moment >= request.before):
                    continue
            if not request.include_superseded and (memory.status in HIDDEN_STATUSES or memory_id in hidden):
                continue
            if request.privacy is not None and memory.privacy not in request.privacy:
                continue
            if request.sources is not None and memory.source not in request.sources:
                continue
            allowed[memory_id] = memory
        return allowed

    def written(self, memory: Memory) -> datetime | None:
        """When a memory was written: created_at, else its file's mtime (seed 004), as time filters read it."""
        return memory.created_at or self._modified(memory)

    def _modified(self, memory: Memory) -> datetime | None:
        entry = self.index.entry(memory.path)
        return datetime.fromtimestamp(entry.mtime_ns / 1e9, tz=timezone.utc) if entry is not None else None

    def out_of_sight(self, now: datetime) -> frozenset[str]:
        """What reads leave out unless asked (`--all`): memories a newer one supersedes, and those the
        next lifecycle run removes or archives.

        Kept per index version until the lifecycle's schedule says a memory's decision may change (indexer/leaving.py),
        and the same object while it stays the same, so the allowed set and what is kept per allowed set stay too. Looked
        up without the index lock: a prompt's standing facts read it right after its search made it, and waited on the
        lock again for it behind the other sessions' searches and captures (9 sessions: 17 ms a prompt, 44 in the
        slowest 5 %; bench/results/s12-warm12.md). A version read while a sync runs is the one before it: what was out
        of sight before that sync."""
        cached = self._out_of_sight
        if cached is not None and cached[0] == self.index.version and cached[1] <= now and (cached[2] is None or now <= cached[2]):
            return cached[3]
        with self.index.lock:  # the links and the rows as one sync left them
            version = self.index.version
            superseded = self.index.link_view.superseded_ids()
            leaving = self._leaving.at(now) if self._leaving is not None else NOTHING
            until = self._leaving.valid_until() if self._leaving is not None else None
            gone = frozenset(superseded) | leaving
            if cached is not None and cached[3] == gone:
                gone = cached[3]  # the same object: what is kept per allowed set stays
            self._out_of_sight = (version, now, until, gone)
        return gone

    def _timeline(self, allowed: Mapping[str, Memory], request: SearchRequest, now: datetime, limit: int) -> list[Hit]:
        if not _explicit(request):
            return []  # nothing asked and no window: a clearly empty answer, not an error (issue 26)
        # A memory without created_at is dated by its file's mtime, as the window was.
        hits = [Hit(m, 0.0, 0.0, "timeline", written=m.created_at or self._modified(m)) for m in allowed.values()]
        if request.sort_by in ("relevance", "recency"):
            hits = sorted(hits, key=lambda h: (h.moment(), h.memory.id), reverse=True)[:limit]
        else:
            hits = order_hits(hits, request.sort_by)[:limit]
        # A timeline is ordered by time or score, never by outcome quality; only the returned hits need
        # their quality and successor (a filter over the outcome list, and a graph walk, each).
        return [replace(h, quality=self.quality(h.memory, now), successor=self._successor(h.memory)) for h in hits]

    def _vague(self, request: SearchRequest, now: datetime, limit: int) -> list[Hit]:
        """A query that names no subject ("what did we work on yesterday") is answered by a timeline:
        of the caller's window, else of the window its time words name, else of the newest memories;
        of the kinds it names ("what did we decide") when there are any. Relevance ranking has
        nothing to match in such a query and returned nothing."""
        has_window = _explicit(request)
        named = None if has_window else timewords.window(request.query or "", now)
        if named is not None:
            request = replace(request, after=named.start, before=named.end)
        elif not has_window:
            # "what am I working on" after a quiet week: the newest memories answer it.
            request = replace(request, after=datetime.min.replace(tzinfo=timezone.utc))
        if not request.collections:
            # "What did we work on" asks about activity: reference documents are not part of it (and a
            # hand-written one without created_at would be dated by the clone or checkout that wrote it).
            request = replace(request, collections=tuple(c for c in COLLECTIONS if c != "books"))
        types = timewords.vague_types(request.query or "")
        if types and not request.types:
            hits = self._timeline(self._allowed(replace(request, types=types), now), request, now, limit)
            if hits:
                return hits
        hits = self._timeline(self._allowed(request, now), request, now, limit)
        if hits or named is None:
            return hits
        # The window its words name is empty: the newest memories before it still answer.
        request = replace(request, after=datetime.min.replace(tzinfo=timezone.utc), before=None)
        return self._timeline(self._allowed(request, now), request, now, limit)

    def _keyword_ahead(self, request: SearchRequest, now: datetime) -> _Ahead | None:
        """The part of `_retrieve` that needs no query vector, done while the model computes it: a prompt hook's
        search (`vector_wait`) waits for its vector before it takes the index lock (a host that is starting must not
        hold the captures back), and so did its keyword stage after the vector instead of beside it, one after the
        other on two cores (bench/results/s23-hook23.md). Under the lock, let go before the wait; None for a question
        answered otherwise (a vague one, none)."""
        if not request.query or not request.query.strip() or timewords.is_vague(request.query):
            return None
        with self.index.lock:
            allowed = self._allowed(request, now)
            return _Ahead(request, allowed, self.index.version, self._keyword_stage(request, allowed))

    def _keyword_stage(self, request: SearchRequest, allowed: Mapping[str, Memory]) -> _KeywordStage:
        """Everything of `_retrieve` that does not need the query's vector: keyword hits, their term coverage, the
        stored vectors of their units."""
        found = self._keyword_hits(request, allowed) if request.mode in ("hybrid", "keyword") and allowed else []
        by_keyword = self._keyword_candidates(request, found)
        wants_vector = request.mode in ("hybrid", "vector")
        return by_keyword, self._unit_vectors(list(by_keyword)) if wants_vector and allowed else None

    def _retrieve(self, request: SearchRequest, allowed: Mapping[str, Memory], embedding: PendingVector | None = None,
                  done: _KeywordStage | None = None) -> tuple[dict[str, _Candidate], np.ndarray | None]:
        """Both channels' candidates, scored and fused, and the query's vector (None in keyword mode).

        Everything that does not need the query's vector (`_keyword_stage`, or `done` when it was done ahead for this
        request and index state) is done while the model computes it, so that a search costs little more than the
        embedding itself.
        """
        index, settings = self.index, self.settings
        by_keyword, prefetched = done if done is not None else self._keyword_stage(request, allowed)
        wants_vector = request.mode in ("hybrid", "vector")
        query_vector = None
        if wants_vector:
            # Wait for the embedding even when nothing is allowed: a failure must not go unseen.
            query_vector = embedding.result() if embedding is not None else index.embedder.embed_query(request.query or "")
        candidates: dict[str, _Candidate] = {}
        if query_vector is not None and allowed:
            for memory_id in self._vector_candidates(query_vector, allowed):
                c = candidates[memory_id] = by_keyword.get(memory_id) or _Candidate(memory_id)
                c.vector_rank = 0  # the real rank follows from the exact scores below
        else:
            query_vector = None
        for memory_id, c in by_keyword.items():
            candidates.setdefault(memory_id, c)
        if query_vector is not None:
            self._score_vectors(candidates, query_vector, prefetched, whole_share(request.query, self.settings))
        hybrid = request.mode == "hybrid"
        best = max((c.keyword_coverage for c in candidates.values() if c.keyword_rank is not None), default=0.0)
        # What is lent comes from the best hit on a memory of one section. A section of a long document covering the
        # question's words is one of many chances to: the runbook's "Database migrations" covers "database", "get" and
        # "machine" of "how do I get a database going on my own machine", and lent its 72 % to five notes that say
        # "database" or "get" (cosine <= 0.14) over the note that answers (bench/results/s10-served10.md). The
        # section keeps its own coverage, and the question keeps being read by its best hit of all (below).
        lender = max((c.keyword_coverage for c in candidates.values()
                      if c.keyword_rank is not None and c.keyword_coverage > 0.0 and not self._sectioned(c.memory_id)),
                     default=0.0)
        lent = settings.keyword_confidence_lent * lender
        confidence = {i: keyword_confidence(c, settings, lent) if hybrid else 1.0 for i, c in candidates.items()}
        # Does the keyword channel have anything to say about this question? A question in other words shares only
        # the user's own words ("query", "live", "data") with a few notes, none of which covers much of it; their
        # BM25 still stands out among candidates that share nothing, and lifted them over the answer the vector
        # channel had (bench/results/search.md, issue 26 session 8). Code-like terms keep their weight: they have
        # no paraphrase.
        if hybrid and best <= settings.keyword_question_low:
            confidence = {i: candidates[i].keyword_exact for i in confidence}
        self._fuse(candidates, request.mode, confidence)
        # A long question read whole to whole sits at 0.6-0.75 from several notes at once: for the order (not the
        # relevance shown) its cosines reach full evidence later, or a 3 % outcome lift decides between them.
        share = whole_share(request.query, self.settings)
        full = settings.cosine_full + share * (settings.long_query_cosine_full - settings.cosine_full)
        # The vector channel's own order: when even its best match is weak (a question in other words), what is
        # nearly as near is listed too, under cosine_floor (found_by_vector).
        best_vector = max((c.vector_score for c in candidates.values()
                           if c.vector_rank is not None and c.vector_score is not None), default=math.inf)
        for memory_id, c in candidates.items():
            v = vector_evidence(c.vector_score, settings.cosine_floor, settings.cosine_full) if c.vector_score is not None else None
            k = None if c.keyword_rank is None else c.keyword_coverage
            c.evidence = combined_evidence(v, k)
            ranked = vector_evidence(c.vector_score, settings.cosine_floor, full) if c.vector_score is not None else None
            c.weighed = combined_evidence(ranked, None if k is None else k * confidence[memory_id])
            # Never further under the floor than the margin: a question nothing answers lists nothing, as before.
            c.near = c.vector_rank is not None and (c.vector_score or 0.0) > max(best_vector, settings.cosine_floor) - settings.vector_margin
            # The label says which channel had evidence for it: a note the vector channel lists only for its place
            # (found_by_vector) has none, and a note that shares a word with the question is "keyword", not "both".
            by_vector = c.vector_rank is not None and above_cosine_floor(c, settings)
            by_keyword = c.keyword_rank is not None
            c.channel = "both" if by_vector and by_keyword else "keyword" if by_keyword else "vector"
        kept = {k: c for k, c in candidates.items() if c.channel != "vector" or found_by_vector(c, settings)}
        return kept, query_vector

    def _vector_candidates(self, query_vector: np.ndarray, allowed: Mapping[str, Memory]) -> list[str]:
        """The memories whose chunks are nearest the query (FAISS over chunk vectors, filtered before top-k)."""
        index, settings = self.index, self.settings
        unrestricted = len(allowed) == index.memory_count()
        unit_filter: Iterable[int] | None = None
        left_out: np.ndarray | None = None
        if unrestricted:
            pass
        elif isinstance(allowed, AllBut):  # every memory but a few (superseded ones): their units, none decoded
            left_out = self._units_left_out(allowed)
        else:
            unit_filter = (u for m in allowed.values() for u, _, role in index.entry(m.path).units if role == WHOLE)
        hits = sorted(index.search_units(query_vector, settings.candidates * CHUNK_HITS_PER_CANDIDATE, unit_filter,
                                         left_out), key=_stable)
        owners = dict.fromkeys(owner[0] for owner in index.owners_of_units([unit for unit, _ in hits]) if owner is not None)
        return list(owners)[:settings.candidates]

    def _units_left_out(self, allowed: AllBut) -> np.ndarray:
        """The whole units of the memories `allowed` leaves out, kept with it: the same view serves every search
        until the index changes (`_allowed`)."""
        cached = self._left_out_units
        if cached is not None and cached[0] is allowed:
            return cached[1]
        units = self.index.whole_units_of(allowed.left_out)
        self._left_out_units = (allowed, units)
        return units

    def _keyword_candidates(self, request: SearchRequest, found: list[_Owned]) -> dict[str, _Candidate]:
        """One candidate per memory the keyword channel found, with its rank, score and term coverage."""
        index, settings = self.index, self.settings
        candidates: dict[str, _Candidate] = {}
        if not found:
            return candidates
        terms = query_terms(request.query or "")
        code = set(query_terms(" ".join(_CODE_TOKEN.findall(request.query or ""))))
        learned = self._learned(request)
        idf = index.keyword_idf([*terms, UNSEEN] if learned else terms)
        ceiling = (idf.pop(UNSEEN) or 1.0) if learned else 1.0
        total = sum(idf.values()) or 1.0
        top = found[0].hit.score
        for rank, (hit, memory_id, heading) in enumerate(_best_per_memory(found)):
            c = candidates[memory_id] = _Candidate(memory_id, keyword_rank=rank, keyword_score=hit.score, heading=heading)
            if rank < COVERAGE_DEPTH:
                # A word only the neighbours say counts as much as the context field weighs it.
                coverage = sum(idf[t] * (1.0 if t in hit.own_terms else settings.context_boost
                                         if t in hit.context_terms else 0.0) for t in terms) / total
                c.keyword_coverage = coverage * (hit.score / top if top else 0.0) ** 0.5
                c.keyword_exact = sum(t in hit.own_terms for t in code) / len(code) if code else 0.0
                if learned:
                    c.keyword_rarity = max((idf[t] for t in terms if t in hit.own_terms), default=0.0) / ceiling
        return candidates

    def _keyword_hits(self, request: SearchRequest, allowed: Mapping[str, Memory]) -> list[_Owned]:
        """The keyword channel's chunk hits within `allowed`, best first (ties by chunk id), with their owners."""
        index, settings = self.index, self.settings
        found = index.keyword_search(request.query or "", settings.candidates, _keyword_filter(request, allowed, index),
                                     settings.keyword_postings_budget, settings.context_boost)
        owned = [_Owned(h, *owner) for h, owner in zip(found, index.owners_of_chunks([h.chunk_id for h in found]))
                 if owner is not None and owner[0] in allowed]  # exact filter
        owned.sort(key=lambda o: _stable((o.hit.chunk_id, o.hit.score)))
        return owned

    def _unit_vectors(self, memory_ids: list[str]) -> _Units:
        """The memories' stored unit vectors (independent of the query), with what each row is.

        Built by columns over all the memories at once: a search reads ~1,000 units at 10k memories, and a Python
        step for each one added up. A chunk id is a hash of its memory's id, so no two memories share one: numbered
        in first-seen order over all the units, each memory's chunks are a run, as when numbered memory by memory."""
        index = self.index
        units_of = [index.entry(index.memory(memory_id).path).units for memory_id in memory_ids]
        flat = list(chain.from_iterable(units_of))
        ids, unit_chunks, unit_roles = zip(*flat) if flat else ((), (), ())
        position = {chunk: n for n, chunk in enumerate(dict.fromkeys(unit_chunks))}
        group = np.fromiter(map(position.__getitem__, unit_chunks), dtype=np.int64, count=len(flat))
        offsets = [0, *accumulate(map(len, units_of))]
        # A memory's chunks run from its first unit's chunk to the next memory's (none for a memory of no units).
        firsts = np.append(group, len(position))[offsets].tolist()
        rows = {m: slice(offsets[n], offsets[n + 1]) for n, m in enumerate(memory_ids)}
        groups = {m: slice(firsts[n], firsts[n + 1]) for n, m in enumerate(memory_ids)}
        return _Units(rows, groups, index.unit_vectors(np.array(ids, dtype=np.int64)),
                      np.fromiter(map(_ROLE_CODE.__getitem__, unit_roles), dtype=np.int8, count=len(flat)), group,
                      list(position))

    def _score_vectors(self, candidates: dict[str, _Candidate], query_vector: np.ndarray,
                       prefetched: _Units | None = None, whole_share: float = 0.0) -> None:
        """Every candidate, keyword-only ones too, gets its exact vector score, so the fusion compares like with like.

        A chunk scores its best sentence (the whole chunk when it has no sentence units), blended
        with its best units that read it together with its previous and next memory (the whole chunk
        when it has none). A memory scores its best chunk (ties: the smallest chunk id). Vector
        ranks follow these scores.
        """
        index = self.index
        blocks = [prefetched] if prefetched else []
        known = prefetched.rows if prefetched else {}
        blocks.append(self._unit_vectors([i for i in candidates if i not in known]))
        found = []  # the vector channel's candidates and their best chunks, whose headings they show
        for block in blocks:
            for memory_id, (score, chunk) in self._best_chunks(block, query_vector, whole_share).items():  # candidates only
                c = candidates[memory_id]
                c.vector_score = score
                if c.vector_rank is not None:
                    found.append((c, chunk))
        for (c, _), owner in zip(found, index.owners_of_chunks([chunk for _, chunk in found])):
            c.heading = owner[1]  # type: ignore[index]  # a candidate's chunk is indexed
        by_vector = sorted((c for c in candidates.values() if c.vector_rank is not None),
                           key=lambda c: (-(c.vector_score or 0.0), c.memory_id))
        for rank, c in enumerate(by_vector):
            c.vector_rank = rank

    def _fuse(self, candidates: dict[str, _Candidate], mode: Mode, confidence: dict[str, float] | None = None) -> None:
        """Order the union of both channels' candidates (`confidence`: each candidate's keyword_confidence, its
        share of the keyword weight in hybrid mode; all of it when not given).

        zscore (default): each channel's raw scores are standardized over the candidates, mixed
        with the channel weights, and squashed to 0..1 with a logistic. Unlike rank fusion this
        keeps how far ahead a result is: a memory that is clearly best in one channel is not
        averaged away (on the LoCoMo dev split it lifted hybrid MRR@10 from 0.39 to the 0.5s).
        """
        s = self.settings
        if not candidates:
            return
        if s.fusion == "rrf":
            k = s.rrf_k
            for c in candidates.values():
                vector = s.vector_weight / (k + c.vector_rank + 1) if c.vector_rank is not None and mode != "keyword" else 0.0
                keyword = s.keyword_weight / (k + c.keyword_rank + 1) if c.keyword_rank is not None and mode != "vector" else 0.0
                c.mix = (vector, keyword)
                c.fused = (vector + keyword) / ((s.vector_weight + s.keyword_weight) / (k + 1))
            return
        vector_z = _zscores({i: c.vector_score or 0.0 for i, c in candidates.items()}, floor=COSINE_NOISE)
        keyword = {i: c.keyword_score or 0.0 for i, c in candidates.items()}
        keyword_z = _zscores(keyword, floor=0.1 * max(keyword.values()))
        weights = {"hybrid": (s.vector_weight, s.keyword_weight),
                   "vector": (1.0, 0.0), "keyword": (0.0, 1.0)}[mode]
        for memory_id, c in candidates.items():
            share = 1.0 if confidence is None else confidence[memory_id]
            c.mix = (weights[0] * vector_z[memory_id], weights[1] * share * keyword_z[memory_id])
            mixed = c.mix[0] + c.mix[1]
            c.fused = 1.0 / (1.0 + math.exp(-mixed))

    def _rank(self, candidates: dict[str, _Candidate], allowed: Mapping[str, Memory], request: SearchRequest,
              now: datetime, named: timewords.Window | None = None, query_vector: np.ndarray | None = None,
              people: Named = NOBODY, time_share: float = 1.0, pasted: float = 0.0) -> list[Hit]:
        settings = self.settings
        if request.graph:
            self._expand_graph(candidates, allowed, request, query_vector)
        hits = []
        learned, covered, rarest = self._learned(request), 0.0, 0.0
        if learned:
            # How much of the question the best keyword hit covers: whether the keyword channel has anything to say.
            covered = max((c.keyword_coverage for c in candidates.values() if c.keyword_rank is not None), default=0.0)
            rarest = max((c.keyword_rarity for c in candidates.values() if c.keyword_rank is not None), default=0.0)
        for c in candidates.values():
            memory = allowed.get(c.memory_id)
            if memory is None:
                continue
            relevance = calibrate(c.evidence, settings.calibration_midpoint, settings.calibration_steepness)
            # A question in other words puts its answer near cosine 0.15-0.19, a relevance under 0.05, where plain
            # cosine still ranks it first: what the vector channel finds (found_by_vector) is listed however weak.
            # The threshold keeps cutting what only shares a word or two (a keyword-only answer while the vectors
            # are still being filled in) and what nothing finds at all.
            if relevance < settings.score_threshold and not found_by_vector(c, settings):
                continue
            # The order weighs the keyword channel by what it has to say for this query (keyword_confidence);
            # the relevance shown stays what both channels found, so a word-for-word hit is still listed.
            weight = calibrate(c.weighed, settings.calibration_midpoint, settings.calibration_steepness)
            quality = self.quality(memory, now)
            # Rank fusion knows positions, calibrated evidence knows absolute strength; both count.
            order = (1 - settings.evidence_weight) * c.fused + settings.evidence_weight * weight
            # A query that names whose memories it asks about (indexer/people.py): theirs first among near ties.
            author = people.factor(memory, settings.author_boost)
            order *= author
            # Recency lifts young memories in proportion to how relevant they are: a new but
            # unrelated memory must not outrank an old exact answer.
            recency = weight * settings.recency_weight * recency_bonus(memory, now, settings.recency)
            final = order * quality + recency
            matched = 0.0  # what the query's own time words add (Hit.explain["time_match"]): part of the match
            if named is not None and named.holds(memory.created_at):
                # "the redis problem from yesterday": written in the window the query names.
                matched = weight * settings.time_match_boost * time_share
                recency += matched
                final += matched
            # Code the memory cites changed since it was written: still shown, below an equally good fresh one.
            stale = tuple(self.index.vault.stale(memory))
            factor = settings.stale_factor if stale else 1.0
            final *= factor
            explain = {"order": order, "weighed": weight, "quality": quality, "recency": recency, "stale_factor": factor,
                       "vector_mix": c.mix[0], "keyword_mix": c.mix[1], "author_factor": author, "time_match": matched}
            if learned:
                explain.update(keyword_coverage=c.keyword_coverage, keyword_covered=covered,
                               sectioned=float(self._sectioned(c.memory_id)), keyword_rarity=c.keyword_rarity,
                               keyword_rarest=rarest)
            hits.append(Hit.made(memory, relevance, final, c.channel, heading=c.heading, vector_score=c.vector_score,
                                 keyword_score=c.keyword_score, quality=quality, via=c.via, stale=stale,
                                 written=self.written(memory), explain=explain))
        # Fitted on hybrid answers: a single channel keeps its own order.
        # A question that names a time window ("from yesterday") is left to the hand-made order as far as it is a
        # question about time: the time match was tuned on that order, and the fit saw no such questions.
        timed = time_share if named is not None else 0.0
        return relearned(hits, max(pasted, timed)) if settings.learned_order and request.mode == "hybrid" else hits

    def _expand_graph(self, candidates: dict[str, _Candidate], allowed: Mapping[str, Memory], request: SearchRequest,
                      query_vector: np.ndarray | None = None) -> None:
        """Successors stand in for superseded hits; the strongest hits lend relevance to linked memories.

        What a link lends is scaled by how near the linked memory itself is to the query: a hub (the
        runbook every note links to) must not hand its relevance, equal for all, to ten unrelated notes
        (issue 26: eight of ten results at one value, 0.551, above the fresh memory that answered).
        """
        graph, factor = self.index.link_view, self.settings.graph_factor
        for c in list(candidates.values()):
            if c.memory_id in allowed or request.include_superseded:
                continue
            successor = graph.successor(c.memory_id)
            if successor and successor in allowed and self._open_to_lending(candidates.get(successor)):
                candidates[successor] = replace(c, memory_id=successor, channel="graph", via=c.memory_id)
        strongest = sorted(candidates.values(), key=lambda c: c.fused, reverse=True)[:3]
        linked = {n: c for c in reversed(strongest) for n in sorted(graph.neighbours(c.memory_id))
                  if n in allowed and self._open_to_lending(candidates.get(n))}  # the strongest linker wins
        own = self._own_vector_scores(list(linked), query_vector, whole_share(request.query, self.settings))
        for neighbour, c in linked.items():
            cosine = own.get(neighbour)
            nearness = 0.0 if cosine is None else min(1.0, max(0.0, cosine / self.settings.cosine_full))
            share = factor * (0.5 + 0.5 * nearness)
            listed = candidates.get(neighbour)  # listed for its place in the vector order (found_by_vector): it stays
            candidates[neighbour] = _Candidate(neighbour, vector_score=cosine, fused=c.fused * share,
                                               evidence=c.evidence * share, weighed=c.weighed * share,
                                               channel="graph", via=c.memory_id, near=bool(listed and listed.near))

    def _open_to_lending(self, candidate: _Candidate | None) -> bool:
        """Whether a link (or a succession) may bring this memory in: it is no candidate, or one listed only for its
        place in the vector channel's order (below cosine_floor, no keyword hit; found_by_vector), with no evidence
        of its own. Without the second, a linked note near nothing in a small vault lost what its link lends."""
        return candidate is None or (candidate.channel == "vector" and not above_cosine_floor(candidate, self.settings))

    def _own_vector_scores(self, memory_ids: list[str], query_vector: np.ndarray | None,
                           whole_share: float = 0.0) -> dict[str, float]:
        """The memories' vector scores for the query, scored as the vector channel scores its candidates."""
        if query_vector is None or not memory_ids:
            return {}
        return {m: score for m, (score, _) in self._best_chunks(self._unit_vectors(memory_ids), query_vector, whole_share).items()}

    def _best_chunks(self, block: _Units, query_vector: np.ndarray,
                     whole_share: float = 0.0) -> dict[str, tuple[float, int]]:
        """Each memory's vector score and the chunk that gave it: its best chunk (ties: the smallest chunk id),
        less what `section_score` takes from a book whose best section barely leads the next, and what
        `standout_shortfall` takes from one whose best section does not stand out from all its sections. The second
        fades for a long question as it is read whole (`whole_share`): a pasted alert compared whole to whole sits near
        every section of the book it belongs to, and its answering section stood out by 1.65 standard deviations
        (held-out book set, "Grafana just went red")."""
        settings = self.settings
        scores = block.chunk_scores(query_vector, settings.previous_weight, settings.next_weight,
                                    settings.pooling_sharpness, whole_share, settings.pooling_lift_sentences)
        standout_share = settings.section_standout_share * (1.0 - whole_share)
        best = {}
        for memory_id, span in block.groups.items():
            if span.stop - span.start == 1:  # most memories: one chunk, its own score (no rival, no spread)
                best[memory_id] = (section_score(scores[span.start], None, settings.section_lead,
                                                 settings.section_lead_share), block.chunks[span.start])
                continue
            ranked = sorted(range(span.start, span.stop), key=lambda g: (-scores[g], block.chunks[g]))
            second = scores[ranked[1]] if len(ranked) > 1 else None
            score = section_score(scores[ranked[0]], second, settings.section_lead, settings.section_lead_share)
            if standout_share > 0.0:
                score -= standout_share * standout_shortfall(scores[span], settings.section_standout)
            best[memory_id] = (score, block.chunks[ranked[0]])
        return best

    def _learned(self, request: SearchRequest) -> bool:
        """Whether this search computes what the learned order reads: with the setting on, or asked for it."""
        return (self.settings.learned_order or request.features) and request.mode == "hybrid"

    def _sectioned(self, memory_id: str) -> bool:
        """Whether the memory is indexed as several sections (a book, a long note). Kept per index version: asked
        for each candidate of each search (~200 at 10k memories), and a memory's sections change only with it."""
        version, known = self._sections
        if version != self.index.version:
            self._sections = version, known = self.index.version, {}
        found = known.get(memory_id)
        if found is None:
            memory = self.index.memory(memory_id)
            entry = self.index.entry(memory.path) if memory is not None else None
            found = known[memory_id] = entry is not None and len(entry.chunk_ids) > 1
        return found

    def _successor(self, memory: Memory) -> str | None:
        return self.index.link_view.successor(memory.id)


def relearned(hits: list[Hit], long_share: float = 0.0) -> list[Hit]:
    """The hits ordered by the learned order (ranking.learned_order) where the hand-made order stood; the outcome
    record, recency, the query's time words and staleness move it as they moved that one. It fades into the hand
    order as the question grows long (`long_share`, whole_share): fitted on questions of a sentence, it read a pasted
    paragraph's low keyword coverage as a paraphrase (long prompts 0.807 -> 0.799, padded 0.795 -> 0.767)."""
    if long_share >= 1.0 or all(h.vector_score is None for h in hits):
        return hits  # no vector to weigh against (the model host starting, vector_wait spent): the hand order
    best_vector = max((h.vector_score for h in hits if h.vector_score is not None), default=0.0)
    best_keyword = max((h.keyword_score or 0.0 for h in hits), default=0.0)
    relearned = []
    for h in hits:
        e = h.explain or {}
        note_hit = h.channel in ("keyword", "both") and not e["sectioned"]
        # The match before the named person's lift, as the fit read it; the lift multiplies the learned match as it
        # multiplied the hand-made one (counted once, and never clipped away at the logistic's edge).
        author = e["author_factor"]
        order = learned_order(learned_features(e["order"] / author, h.vector_score, best_vector, e["keyword_covered"],
                                               note_hit, h.keyword_score, best_keyword, e["keyword_rarity"])) * author
        order = (1.0 - long_share) * order + long_share * e["order"]
        final = (order * e["quality"] + e["recency"]) * e["stale_factor"]
        kept = {"hand_order": e["order"], "hand_final": h.final}  # what the lifts anchor by (multihop.standing)
        relearned.append(h.but(final=final, explain={**e, "order": order, **kept}))
    return relearned


def whole_share(query: str | None, settings: SearchSettings) -> float:
    """0 for a question of up to `long_query_from` words, 1 from `long_query_full` words, linear between:
    how far a standalone note is read as a whole rather than for its closest sentences. A pasted
    paragraph or log is matched whole to whole (coding sets, long prompts: MRR@10 0.91 -> 0.94, plain
    cosine 0.93; bench/results/search.md issue 26 session 3)."""
    words = len(_WORD.findall(query or ""))
    low, high = settings.long_query_from, settings.long_query_full
    return min(1.0, max(0.0, (words - low) / (high - low)))


def time_words_share(query: str | None, settings: SearchSettings) -> float:
    """How much a query's time words ask for memories written then: all of it in a question, nothing in a long
    paste (whole_share 1), linear between. A pasted alert, log or chat message tells its own story in time words
    ("since 14:05", "I'm on call this week", "most recent call last"): they date what was pasted, not the memory
    that answers, and lifted notes written that week over the book section that did (bench/results/s9-book9.md)."""
    return 1.0 - whole_share(query, settings)


def _pooled(embedder: Any, text: str, part: Future[np.ndarray], weight: float) -> np.ndarray:
    """The whole prompt's vector and its salient lines' vector, pooled: the normalised sum, the parts' at `weight`.
    A memory's cosine to it is a weighted mean of its cosines to both (up to one factor for every memory), so the
    error line and the question the whole prompt read among its frames and timestamps count again."""
    whole = np.asarray(embedder.embed_query(text), dtype=np.float32)
    pooled = whole + weight * np.asarray(part.result(), dtype=np.float32)
    norm = float(np.linalg.norm(pooled))
    return pooled / norm if norm > 0 else whole


def _started(embedder: CachedEmbedder, text: str) -> PendingVector:
    """The query's vector, on its way while the keyword channel runs. Sent from this thread when the embedder can: a
    thread of the pool had to take the interpreter from this one, busy with the keyword channel, before it could
    even send the request to the embedding host, up to the 5 ms switch interval later (submit to send 4.8 ms at the
    median at 10k; bench/results/s14-lead.md); and this thread reads the answer when it needs it."""
    pending = embedder.start_query(text)
    return pending if pending is not None else _QUERY_EMBEDDING.submit(embedder.embed_query, text)


def above_cosine_floor(candidate: _Candidate, settings: SearchSettings) -> bool:
    """Whether the vector channel has evidence for this candidate: its score is above `cosine_floor`."""
    return candidate.vector_score is not None and candidate.vector_score > settings.cosine_floor


def found_by_vector(candidate: _Candidate, settings: SearchSettings) -> bool:
    """Whether the vector channel speaks for this candidate, so that it is listed however weak its relevance:
    above `cosine_floor`, or within `vector_margin` of the vector channel's best score for this question (`near`,
    which only reaches under the floor when that best is itself weak: a question in other words).

    MiniLM puts an answer asked in other words at cosine 0.15-0.25, and pools a short note a little under its whole
    text's cosine, so the absolute floor alone left out answers plain cosine ranks second (bench/results/search.md,
    issue 26 session 7: "where do I fetch credentials when setting up a computer", its note pooled at 0.143). Such a hit
    keeps the relevance `cosine_floor` gives it (about 0): it is listed, not shown as relevant, and the hook does
    not inject it. A memory reached through a link has no rank in the vector channel: its own cosine decides."""
    return candidate.near or above_cosine_floor(candidate, settings)


def keyword_confidence(candidate: _Candidate, settings: SearchSettings, lent: float = 0.0) -> float:
    """0..1: how much the keyword channel has to say about this candidate for this query.

    BM25 ranks whatever shares a word with the query, and its z-scores make any shared word stand out
    among candidates that share none. For "how do I get a database running on my laptop" (whose answer
    says "docker compose" and "postgres") the notes that share "database" are not evidence; for "what did
    Caroline say about the adoption agency" the turns that say it are. What differs is how much of the
    query a hit covers (idf-weighted): little when the words are the user's own, most of it when they
    name what the memory names. Each candidate is weighed by its own coverage: nothing up to
    `keyword_confidence_low`, all of it from `keyword_confidence_high`. It used to be the best hit's
    coverage for every candidate, so one hit that covered the query lent its weight to twenty that
    shared one word with it (bench/results/search.md, issue 26 session 4). Some of it is still lent (`lent`:
    `keyword_confidence_lent` times the best hit's coverage, when that is more than a hit's own): a question
    whose words are the memories' own ("what did Melanie say about swimming") makes its partial hits
    likelier too. Lending 0.65 of it was the best on the dev sets (coding dev MRR@10 0.857 -> 0.858, LoCoMo
    R@10 0.788 -> 0.796, against none lent), and left the fresh and hold-out sets as they were. A hit on code-like terms
    counts at least by the share of the query's code-like terms it holds: all of it for "why ERR_4711", a sixth for
    a note that shares only `billing/webhooks.py` with a pasted traceback naming six (that one path put the wrong
    note first on long coding prompts; bench/results/search.md, issue 26 session 5b). Exact tokens still always hit: the
    relevance that lists a result is not weighed.
    """
    low, high = settings.keyword_confidence_low, settings.keyword_confidence_high
    return max(candidate.keyword_exact, min(1.0, max(0.0, (max(candidate.keyword_coverage, lent) - low) / (high - low))))


def _zscores(scores: dict[str, float], floor: float) -> dict[str, float]:
    """Standardize one channel's scores; a spread below `floor` is treated as noise, not signal."""
    values = list(scores.values())
    mean = sum(values) / len(values)
    spread = max(math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)), floor, 1e-9)
    return {k: (v - mean) / spread for k, v in scores.items()}


def _stable(hit: tuple[int, float]) -> tuple[float, int]:
    """Order channel hits by score, ties by chunk id: engines break ties by insertion order,
    which differs between an incrementally updated index and a rebuild."""
    return (-round(hit[1], 6), hit[0])


def _excerpt(memory: Memory, heading: str) -> str:
    """The text of the section that matched, when a memory is indexed as several chunks."""
    if not heading:
        return ""
    return next((chunk.text for chunk in chunks_for(memory) if chunk.heading == heading), "")


def _best_per_memory(hits: Iterable[_Owned]) -> list[_Owned]:
    """Fold chunk hits into memories: each memory is ranked by its best chunk."""
    seen: set[str] = set()
    best = []
    for owned in hits:
        if owned.memory_id in seen:
            continue
        seen.add(owned.memory_id)
        best.append(owned)
    return best


def _keyword_filter(request: SearchRequest, allowed: Mapping[str, Memory], index: Index) -> KeywordFilter | None:
    """Push the request's filters into Whoosh's own fields; hidden-by-graph memories become a mask."""
    if len(allowed) == index.memory_count():
        return None
    if isinstance(allowed, AllBut):
        # Every memory but the hidden ones (no filter asked): a mask of those few. A filter of the statuses kept
        # walked every active document in Python each search: 100k of them, most of a search's CPU at 100k memories
        # with one memory superseded (bench/results/s18-lead.md).
        return KeywordFilter(excluded_ids=allowed.left_out)
    hidden = frozenset() if request.include_superseded else frozenset(index.link_view.superseded_ids())
    after = None
    if request.days_back is not None:
        after = _days_before(request.now or datetime.now(timezone.utc), request.days_back)
    if request.after is not None:
        after = max(after, request.after) if after else request.after
    # Whoosh knows created_at only; a memory without one is dated by its file's mtime, which only
    # the exact filter (`allowed`) sees, so time filters stay out of Whoosh when such a memory exists.
    # Without a time filter nothing is asked of the dates (and no memory is decoded to read them).
    dated = (after is None and request.before is None) or all(m.created_at is not None for m in allowed.values())
    return KeywordFilter(
        collections=frozenset(request.collections) or None,
        types=frozenset(request.types) or None,
        tags=frozenset(t.lower().lstrip("#") for t in request.tags) or None,
        statuses=None if request.include_superseded else frozenset({"active"}),
        privacy=frozenset(request.privacy) if request.privacy is not None else None,
        created_after=after if dated else None,
        created_before=request.before if dated else None,
        excluded_ids=hidden,
    )


@dataclass(frozen=True)
class WindowUsed:
    """The time window that shaped an answer, and where it came from, for the caller to show."""

    source: str  # days_back | after/before | query
    use: str  # filter: only memories inside it; boost: a topic query ranks those inside it higher
    start: datetime | None
    end: datetime | None
    words: str = ""  # the query's time words
    note: str = ""  # why the query's own time words were not used

    def holds(self, hit: Hit) -> bool:
        moment = hit.moment()
        return ((self.start is None or moment >= self.start.timestamp())
                and (self.end is None or moment < self.end.timestamp()))

    def as_dict(self) -> dict[str, Any]:
        shape: dict[str, Any] = {"source": self.source, "use": self.use,
                                 "start": _iso(self.start), "end": _iso(self.end)}
        shape.update({k: v for k, v in (("words", self.words), ("note", self.note)) if v})
        return shape


def window_used(request: SearchRequest, now: datetime | None = None,
                settings: SearchSettings | None = None) -> WindowUsed | None:
    """Which window `Searcher.search` applies to this request: an explicit one (days_back, after,
    before) always wins over time words in the query; else the query's own time words filter a
    vague question ("what did we do yesterday") and boost a topic one ("the deploy fix from last week"),
    unless the query is a long paste (`settings` given: time_words_share 0), whose time words boost nothing."""
    if request.memory_id:
        return None
    now = now or request.now or datetime.now(timezone.utc)
    vague = timewords.is_vague(request.query or "")
    named = timewords.window(request.query, now, present=vague) if request.query else None
    if _explicit(request):
        start = _explicit_start(request, now)
        end = request.before if request.before is not None else (now if request.days_back is not None else None)
        source = "days_back" if request.days_back is not None else "after/before"
        note = (f"the explicit window wins over {named.words!r} in the query" if named is not None else "")
        return WindowUsed(source, "filter", start, end, note=note)
    if named is None or (not vague and settings is not None and time_words_share(request.query, settings) <= 0.0):
        return None
    use = "filter" if vague else "boost"
    return WindowUsed("query", use, named.start, named.end, words=named.words)


def _explicit(request: SearchRequest) -> bool:
    """The caller set the time window: the query's own time words are then not used."""
    return request.days_back is not None or request.after is not None or request.before is not None


def _explicit_start(request: SearchRequest, now: datetime) -> datetime | None:
    """The earliest creation time the caller's window admits: the later of `after` and now - days_back."""
    if request.days_back is None:
        return request.after
    cutoff = _days_before(now, request.days_back)
    return max(request.after, cutoff) if request.after else cutoff


def _days_before(now: datetime, days: float) -> datetime:
    """`now` less `days` days, or EARLIEST when that is before it: a days_back of a million (a model asking for "all of
    it") or infinity failed the search with an OverflowError."""
    try:
        return max(now - timedelta(days=days), EARLIEST)
    except OverflowError:
        return EARLIEST


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def with_shown(hits: list[Hit], sort_by: str = "relevance") -> list[Hit]:
    """Ranked hits with the number they show: how likely each is the answer (ranking.shown_relevance).

    A relevance alone says how strongly a memory matches the question, not whether it is the one that answers: on
    LoCoMo nearly every turn matched at 0.8 or more (they all name the speakers the question names), and a hit at
    0.5-0.6 was right less often than one at 0.4-0.5 on three sets (bench/results/s10-calib10.md). Each number is read
    before the outcome record, recency and staleness move the order, so one can stand above the one before it: the
    number that would rise above the one listed before it is shown just under that one (ranking.never_rising), in a
    list ordered by relevance (`sort_by`; by recency or score each shows its own)."""
    reads = shown_inputs(hits)
    numbers = [shown_relevance(*read) for read in reads if read is not None]
    shown = iter(never_rising(numbers) if sort_by == "relevance" else numbers)
    return [h if read is None else h.but(shown=next(shown)) for h, read in zip(hits, reads)]


def shown_inputs(hits: list[Hit]) -> list[tuple[float, float, int] | None]:
    """What each ranked hit's shown number is read from (None for a lookup or a timeline's hit): the relevance that
    ranked it, how far its order score is ahead of the best other hit's (negative: behind), and how many hits have a
    higher order score. The order score is the match before the outcome record, recency and staleness move it: a stale
    or unproven memory shows as much as it matches, wherever those put it in the list. Hits from several vaults are
    read against each other. With the learned order the order score read is the hand-made one it replaced (kept as
    `hand_order`): SHOWN_ODDS was fitted on that, and refitted on the learned order's match the shown numbers of
    LoCoMo's top 10s plateaued (148 of 760 questions with one value 3+ times between 0.10 and 0.99, against 10);
    the learned order decides the places, the hand-made one what each place shows."""
    orders = sorted((-_shown_order(h) for h in hits if h.explain is not None))

    def margin(order: float) -> float:
        if order < -orders[0]:
            return order + orders[0]
        # the best hit: ahead of the runner-up (0 when tied with it); a lone hit is ahead of nothing, by its own score
        return order + (orders[1] if len(orders) > 1 else 0.0)

    return [None if h.explain is None else (h.explain.get("weighed", h.relevance), margin(_shown_order(h)),
                                            bisect.bisect_left(orders, -_shown_order(h)))
            for h in hits]


def _shown_order(hit: Hit) -> float:
    explain = hit.explain or {}
    return explain.get("hand_order", explain["order"])


def returned(hits: list[Hit], sort_by: str, now: datetime, fresh_days: float, limit: int, merged: bool) -> list[Hit]:
    """The hits a vault's search returns: its top `limit` in order (order_hits); for a merge of vaults (`merged`,
    see Searcher.search), those and its top `limit` by final score, in final-score order."""
    ordered = order_hits(hits, sort_by, now, fresh_days)[:limit]
    if not merged:
        return ordered
    either = {h.memory.id: h for h in [*order_hits(hits, sort_by, now)[:limit], *ordered]}
    return order_hits(list(either.values()), sort_by, now)


def order_hits(hits: list[Hit], sort_by: str, now: datetime | None = None, fresh_days: float = 0.0) -> list[Hit]:
    """Hits in the order a search returns them; ties broken by id, so the order is stable. Relevance is
    calibrated to an absolute 0..1, so hits from several indices can be ordered together. By relevance, a fresh
    unused memory and a used one are compared without their quality lifts (`fresh_days`: fresh_unscored_days)."""
    if sort_by == "recency":
        key = lambda h: (h.moment(), h.final)  # noqa: E731
    elif sort_by == "score":
        key = lambda h: (h.memory.score, h.final)  # noqa: E731
    elif sort_by == "relevance":
        # Timeline hits (final 0) from several vaults still come newest first.
        key = lambda h: (h.final, h.relevance, h.moment())  # noqa: E731
    else:
        raise ValidationError("sort_by must be relevance, recency or score")
    ordered = sorted(hits, key=lambda h: (*key(h), h.memory.id), reverse=True)
    # Here, not in the Searcher: the server merges its vaults' hits with this same order (mcp_server/service/privacy.py).
    if sort_by != "relevance":
        return ordered
    return fair_to_fresh(ordered, now or datetime.now(timezone.utc), fresh_days)


def _known(what: str, asked: tuple[str, ...], valid: tuple[str, ...]) -> None:
    """A filter value no memory can have (`--collection pattern`, `--type bug`) is a typo, not a question that found
    nothing: it is refused naming what is valid, instead of answering "(no relevant memories)"."""
    unknown = [value for value in asked if value not in valid]
    if unknown:
        raise ValidationError(f"unknown {what} {unknown[0]!r}; expected one of: {', '.join(valid)}")
