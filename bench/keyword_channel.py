"""Keyword channel: Whoosh's internal blocks against owned postings, side by side in one run.

The same chunk documents (built by memdir's indexer: title with tags and aliases, body, the
neighbours' text; analysed by memdir's own analyser) are indexed by four candidates:

  whoosh-blocks  today's path: Whoosh stores, numpy scores BM25F over its private block readers
  whoosh-public  the same code with postings read through Whoosh's public matcher API (the fallback)
  fts5           SQLite FTS5 (stdlib sqlite3) over the analysed tokens, bm25() with column weights
                 title 2, body 1, context = context_boost (FTS5 fixes k1 1.2, b 0.75)
  numpy          postings per generation: term -> (rows, weights) arrays, memdir's BM25F formula

Every candidate answers the Searcher's keyword-channel calls, so each is measured twice on
quality: raw (its top 100 chunks, best chunk per memory) and through memdir's own search in
keyword mode with the channel swapped in (`--hybrid` adds hybrid mode, with the real model).
Speed: windows of LoCoMo turns as bench/speed.py writes them (LoCoMo data is read from
../shared/bench, never copied), 200 LoCoMo questions, candidates interleaved per query.

    python bench/keyword_channel.py --json                     # LoCoMo dev + coding set + speed at 10k
    python bench/keyword_channel.py --sizes 10000,100000       # ... and at 100k
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Protocol, Sequence

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import coding  # noqa: E402
import locomo  # noqa: E402
import speed  # noqa: E402
from indexer.arrays import sorted_contains  # noqa: E402
from indexer.chunking import Chunk, chunks_for  # noqa: E402
from indexer.embed import CachedEmbedder, HashingEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.keyword import ANALYZER, KeywordFilter, KeywordHit, KeywordIndex, PostingsCache, _document, query_terms, rarest_first  # noqa: E402
from indexer.search import SearchRequest, Searcher  # noqa: E402
from indexer.settings import SearchSettings  # noqa: E402
from vault import Vault  # noqa: E402
from vault.model import Memory  # noqa: E402
from vault.parse import parse  # noqa: E402
from vault.settings import LifecycleSettings  # noqa: E402

CANDIDATES = ("whoosh-blocks", "whoosh-public", "fts5", "numpy")
FIELDS = ("title", "body", "context")
TITLE_BOOST = 2.0  # the title field's field_boost in indexer/keyword.schema()
Documents = list[tuple[Memory, list[Chunk]]]


class Channel(Protocol):
    """What indexer/search.py asks of the index's keyword channel."""

    def search(self, text: str, k: int, filters: KeywordFilter | None = None, postings_budget: int = 0,
               context_boost: float = 0.0) -> list[KeywordHit]: ...
    def idf(self, terms: Sequence[str]) -> dict[str, float]: ...
    def set_weighting(self, b: float, k1: float) -> None: ...
    def replace(self, memories_and_chunks: Sequence[tuple[Memory, Sequence[Chunk]]], removed_ids: Iterable[str] = ()) -> None: ...
    def close(self) -> None: ...


def analysed(memory: Memory, chunk: Chunk) -> dict[str, list[str]]:
    """The chunk's fields as memdir's analyser tokenises them for Whoosh (identifier parts, stems)."""
    document = _document(memory, chunk)
    return {field: [t.text for t in ANALYZER(str(document.get(field, "")))] for field in FIELDS}


def passes(filters: KeywordFilter | None, memory: Memory) -> bool:
    """KeywordFilter applied to a Memory in Python (Whoosh applies it as a filter query)."""
    if filters is None:
        return True
    if memory.id in filters.excluded_ids:
        return False
    for values, value in ((filters.collections, memory.collection), (filters.types, memory.type),
                          (filters.statuses, memory.status), (filters.privacy, memory.privacy),
                          (filters.memory_ids, memory.id)):
        if values is not None and value not in values:
            return False
    if filters.tags and not {t.lower() for t in memory.tags} & filters.tags:
        return False
    created = memory.created_at
    if filters.created_after and (created is None or created.timestamp() < math.floor(filters.created_after.timestamp())):
        return False
    return not (filters.created_before and (created is None or created.timestamp() > math.ceil(filters.created_before.timestamp())))


def selective(terms: list[str], cost: dict[str, int], budget: int) -> list[str]:
    """The postings budget as KeywordIndex applies it."""
    return rarest_first(terms, cost, budget) if budget > 0 else terms


class Fts5Channel:
    """SQLite FTS5 over the analysed tokens (stored space-joined, split again on spaces only)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "keyword.sqlite"
        self.db = sqlite3.connect(self.path, check_same_thread=False)
        # `tokenchars` keeps the analyser's dotted and snake_case identifiers whole, as Whoosh stores them.
        self.db.executescript("""
            CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(title, body, context,
                tokenize = "unicode61 remove_diacritics 0 tokenchars '._'");
            CREATE VIRTUAL TABLE IF NOT EXISTS vocab USING fts5vocab(docs, 'col');
            CREATE TABLE IF NOT EXISTS owner (chunk INTEGER PRIMARY KEY, memory TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS owner_memory ON owner (memory);
        """)
        self.memory: dict[int, Memory] = {}  # chunk -> its memory, for filters (the server holds these anyway)

    def set_weighting(self, b: float, k1: float) -> None:
        """FTS5's bm25() has k1 1.2 and b 0.75 built in; a Python rank function is not possible through sqlite3."""

    def replace(self, memories_and_chunks: Sequence[tuple[Memory, Sequence[Chunk]]], removed_ids: Iterable[str] = ()) -> None:
        with self.db:
            for memory_id in [*removed_ids, *(m.id for m, _ in memories_and_chunks)]:
                gone = [row for (row,) in self.db.execute("SELECT chunk FROM owner WHERE memory = ?", (memory_id,))]
                self.db.executemany("DELETE FROM docs WHERE rowid = ?", [(c,) for c in gone])
                self.db.execute("DELETE FROM owner WHERE memory = ?", (memory_id,))
                for chunk in gone:
                    self.memory.pop(chunk, None)
            rows = []
            for memory, chunks in memories_and_chunks:
                for chunk in chunks:
                    fields = analysed(memory, chunk)
                    rows.append((chunk.chunk_id, *(" ".join(fields[f]) for f in FIELDS)))
                    self.memory[chunk.chunk_id] = memory
            self.db.executemany("INSERT INTO docs (rowid, title, body, context) VALUES (?, ?, ?, ?)", rows)
            self.db.executemany("INSERT INTO owner VALUES (?, ?)", [(r[0], self.memory[r[0]].id) for r in rows])

    def _document_frequency(self, terms: Sequence[str], columns: Sequence[str]) -> dict[str, int]:
        marks = ",".join("?" * len(terms))
        found = dict.fromkeys(terms, 0)
        for term, count in self.db.execute(
                f"SELECT term, sum(doc) FROM vocab WHERE term IN ({marks}) AND col IN ({','.join('?' * len(columns))})"
                " GROUP BY term", (*terms, *columns)):
            found[term] = count
        return found

    def search(self, text: str, k: int, filters: KeywordFilter | None = None, postings_budget: int = 0,
               context_boost: float = 0.0) -> list[KeywordHit]:
        asked = query_terms(text)
        if not asked or k <= 0:
            return []
        columns = ("title", "body", "context") if context_boost > 0 else ("title", "body")
        terms = selective(asked, self._document_frequency(asked, columns), postings_budget)
        match = "{" + " ".join(columns) + "} : (" + " OR ".join(f'"{t}"' for t in terms) + ")"
        rank = f"bm25(docs, {TITLE_BOOST}, 1.0, {max(context_boost, 0.0)})"
        limit = "" if filters is not None else f" LIMIT {int(k)}"
        rows = self.db.execute(f"SELECT rowid, -{rank} AS s, title, body, context FROM docs WHERE docs MATCH ? "
                               f"ORDER BY s DESC, rowid{limit}", (match,))
        hits = []
        for chunk, score, title, body, context in rows:
            if not passes(filters, self.memory[chunk]):
                continue
            own = set(title.split()) | set(body.split())
            around = set(context.split())
            hits.append(KeywordHit(chunk, score, frozenset(t for t in asked if t in own),
                                   frozenset(t for t in asked if t in around)))
            if len(hits) == k:
                break
        return hits

    def idf(self, terms: Sequence[str]) -> dict[str, float]:
        (count,) = self.db.execute("SELECT count(*) FROM owner").fetchone()
        frequency = self._document_frequency(list(terms), ("body",))
        return {t: math.log(count / (frequency[t] + 1)) + 1 for t in terms}  # Whoosh's idf, as coverage uses it

    def close(self) -> None:
        self.db.close()


class NumpyChannel:
    """Postings per generation: each term's rows and weights as arrays, memdir's BM25F over them.

    A generation's arrays are immutable; replacing a document re-derives them from the analysed
    documents (kept as term counts), which is what an update costs here.
    """

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.b, self.k1 = 0.75, 1.2
        self.documents: dict[int, tuple[Memory, dict[str, Counter[str]]]] = {}
        self.chunks = np.zeros(0, dtype=np.int64)

    def set_weighting(self, b: float, k1: float) -> None:
        self.b, self.k1 = b, k1

    def replace(self, memories_and_chunks: Sequence[tuple[Memory, Sequence[Chunk]]], removed_ids: Iterable[str] = ()) -> None:
        dropped = set(removed_ids) | {m.id for m, _ in memories_and_chunks}
        self.documents = {c: d for c, d in self.documents.items() if d[0].id not in dropped}
        for memory, chunks in memories_and_chunks:
            for chunk in chunks:
                fields = analysed(memory, chunk)
                self.documents[chunk.chunk_id] = (memory, {f: Counter(fields[f]) for f in FIELDS})
        self._build()

    def _build(self) -> None:
        self.chunks = np.array(sorted(self.documents), dtype=np.int64)
        self.memories = [self.documents[int(c)][0] for c in self.chunks]
        self.postings: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        self.lengths: dict[str, np.ndarray] = {}
        for field in FIELDS:
            rows: dict[str, list[int]] = {}
            weights: dict[str, list[float]] = {}
            lengths = np.zeros(len(self.chunks))
            boost = TITLE_BOOST if field == "title" else 1.0
            for row, chunk in enumerate(self.chunks.tolist()):
                counts = self.documents[chunk][1][field]
                lengths[row] = sum(counts.values())
                for term, count in counts.items():
                    rows.setdefault(term, []).append(row)
                    weights.setdefault(term, []).append(count * boost)
            self.postings[field] = {t: (np.array(rows[t], dtype=np.int64), np.array(weights[t])) for t in rows}
            self.lengths[field] = lengths
        self._save()

    def _save(self) -> None:
        """One file per generation: every field's postings concatenated, with a term table."""
        arrays: dict[str, np.ndarray] = {"chunks": self.chunks}
        for field, postings in self.postings.items():
            terms = sorted(postings)
            arrays[f"{field}_terms"] = np.array(terms, dtype=object).astype(str)
            arrays[f"{field}_ends"] = np.cumsum([len(postings[t][0]) for t in terms], dtype=np.int64)
            arrays[f"{field}_rows"] = np.concatenate([postings[t][0] for t in terms]).astype(np.int32) if terms else np.zeros(0)
            arrays[f"{field}_weights"] = np.concatenate([postings[t][1] for t in terms]).astype(np.float32) if terms else np.zeros(0)
            arrays[f"{field}_lengths"] = self.lengths[field].astype(np.float32)
        np.savez(self.folder / "postings.npz", **arrays)

    def search(self, text: str, k: int, filters: KeywordFilter | None = None, postings_budget: int = 0,
               context_boost: float = 0.0) -> list[KeywordHit]:
        asked = query_terms(text)
        if not asked or k <= 0 or not len(self.chunks):
            return []
        boosts = {"title": 1.0, "body": 1.0, **({"context": context_boost} if context_boost > 0 else {})}
        cost = {t: sum(len(self.postings[f].get(t, ((),))[0]) for f in boosts) for t in asked}
        terms = selective(asked, cost, postings_budget)
        count = len(self.chunks)
        scores = np.zeros(count)
        for field, boost in boosts.items():
            average = self.lengths[field].mean() or 1.0
            for term in terms:
                found = self.postings[field].get(term)
                if found is None:
                    continue
                rows, weights = found
                idf = math.log(count / (len(rows) + 1)) + 1
                norm = (1 - self.b) + self.b * self.lengths[field][rows] / average if self.b else 1.0
                scores[rows] += boost * idf * (weights * (self.k1 + 1)) / (weights + self.k1 * norm)
        if filters is not None:
            scores[[row for row, m in enumerate(self.memories) if not passes(filters, m)]] = 0.0
        found = np.flatnonzero(scores > 0.0)
        if len(found) > k:
            found = found[np.argpartition(-scores[found], k - 1)[:k]]
        found = found[np.lexsort((found, -scores[found]))]
        own = self._containing(asked, ("title", "body"), found)
        around = self._containing(asked, ("context",), found)
        return [KeywordHit(int(self.chunks[row]), float(scores[row]), own[n], around[n]) for n, row in enumerate(found)]

    def _containing(self, terms: Sequence[str], fields: Sequence[str], rows: np.ndarray) -> list[frozenset[str]]:
        held: list[set[str]] = [set() for _ in rows]
        for term in terms:
            present = np.zeros(len(rows), dtype=bool)
            for field in fields:
                found = self.postings[field].get(term)
                if found is not None:
                    present |= sorted_contains(found[0], rows)
            for n in np.flatnonzero(present).tolist():
                held[n].add(term)
        return [frozenset(h) for h in held]

    def idf(self, terms: Sequence[str]) -> dict[str, float]:
        count = len(self.chunks)
        return {t: math.log(count / (len(self.postings["body"].get(t, ((),))[0]) + 1)) + 1 for t in terms}

    def close(self) -> None:
        pass


def build(name: str, folder: Path, documents: Documents, settings: SearchSettings) -> tuple[Channel, float]:
    """The candidate's channel over the documents, and the seconds its build took (analysis included)."""
    started = time.perf_counter()
    channel: Channel
    if name == "whoosh-public":  # reads the index whoosh-blocks wrote: same files, the other read path
        channel = KeywordIndex.open(folder / "whoosh-blocks", read_blocks=False)
    elif name == "whoosh-blocks":
        channel = KeywordIndex.create(folder / name)
        channel.replace(documents)
    else:
        channel = (Fts5Channel if name == "fts5" else NumpyChannel)(folder / name)
        channel.replace(documents)
    seconds = time.perf_counter() - started
    channel.set_weighting(settings.bm25_b, settings.bm25_k1)
    return channel, seconds


def size_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 2)


def ask(channel: Channel, text: str, settings: SearchSettings, k: int | None = None) -> list[KeywordHit]:
    """The channel asked as indexer/search.py asks it."""
    return channel.search(text, k or settings.candidates, None, settings.keyword_postings_budget, settings.context_boost)


def ranked_memories(index: Index, hits: list[KeywordHit]) -> list[str]:
    return list(dict.fromkeys(index.chunk_owner(h.chunk_id)[0] for h in hits))


class Agreement:
    """How far a candidate's scores are from whoosh-blocks' on the chunks both return."""

    def __init__(self) -> None:
        self.worst: dict[str, float] = {}

    def add(self, name: str, hits: list[KeywordHit], reference: list[KeywordHit]) -> None:
        theirs = {h.chunk_id: h.score for h in reference}
        gaps = [abs(h.score - theirs[h.chunk_id]) / theirs[h.chunk_id] for h in hits if h.chunk_id in theirs]
        self.worst[name] = max(self.worst.get(name, 0.0), *gaps, 0.0)


def swapped(index: Index, channel: Channel, settings: SearchSettings, **extra: object) -> Searcher:
    """memdir's own Searcher with the candidate as its keyword channel."""
    index._keyword = channel  # type: ignore[assignment]
    return Searcher(index, settings, **extra)  # type: ignore[arg-type]


def locomo_quality(data: list[dict], settings: SearchSettings, embedder: CachedEmbedder, views: list[str]) -> dict:
    rows: dict[tuple[str, str], list] = {(n, v): [] for n in CANDIDATES for v in views}
    agreement = Agreement()
    memories = 0
    for sample in data:
        with tempfile.TemporaryDirectory(prefix="memdir-kwbench-") as tmp:
            root = Path(tmp) / "vault"
            contains = locomo.build_vault(root, sample, "turn")
            memories += len(contains)
            turns = {t for ids in contains.values() for t in ids}
            index = Index.open(Vault(root), embedder)
            own = index._keyword
            documents = [(m, chunks_for(m, index.neighbours(m))) for m in index.all_memories()]
            channels = {}
            for name in CANDIDATES:
                channels[name], _ = build(name, Path(tmp) / "channels", documents, settings)
            questions = [(item, locomo.relevant_ids(item, turns)) for item in sample["qa"] if item.get("category") != 5]
            questions = [(item, wanted) for item, wanted in questions if wanted]
            for name, channel in channels.items():
                searcher = swapped(index, channel, settings)
                for item, wanted in questions:
                    for view in views:
                        if view == "raw":
                            hits = ask(channel, item["question"], settings)
                            if name != "whoosh-blocks":
                                agreement.add(name, hits, ask(channels["whoosh-blocks"], item["question"], settings))
                            found = ranked_memories(index, hits)[:10]
                        else:
                            mode = "keyword" if view == "memdir-keyword" else "hybrid"
                            request = SearchRequest(query=item["question"], limit=10, mode=mode, graph=False,  # type: ignore[arg-type]
                                                    include_superseded=True)
                            found = [h.memory.id for h in searcher.search(request)]
                        rows[(name, view)].append((item["category"], wanted, [contains[i] for i in found]))
            index._keyword = own
            for channel in channels.values():
                channel.close()
            index.close()
    result: dict = {name: {} for name in CANDIDATES}
    for (name, view), found in rows.items():
        summary = locomo.summarize(found, [], memories, 0.0)
        result[name][view] = {"R@10": summary["recall@10"], "MRR@10": summary["mrr@10"]}
    result["max_relative_score_gap_to_whoosh_blocks"] = {n: float(f"{g:.3g}") for n, g in agreement.worst.items()}
    result["questions"] = len(rows[(CANDIDATES[0], views[0])])
    return result


def coding_quality(settings: SearchSettings, embedder: CachedEmbedder, views: list[str]) -> dict:
    ages = {m[0]: m[5] for m in coding.MEMORIES}
    result: dict = {}
    with tempfile.TemporaryDirectory(prefix="memdir-kwbench-") as tmp:
        root = Path(tmp) / "vault"
        coding.build_vault(root, coding.NOW)
        index = Index.open(Vault(root), embedder)
        own = index._keyword
        documents = [(m, chunks_for(m, index.neighbours(m))) for m in index.all_memories()]
        for name in CANDIDATES:
            channel, _ = build(name, Path(tmp) / "channels", documents, settings)
            searcher = swapped(index, channel, settings, lifecycle=LifecycleSettings())
            ranks: dict[str, list[int | None]] = {view: [] for view in views}
            for text, wanted, _kind, extra in coding.QUESTIONS:
                allowed = {i for i in ages if coding.in_window(ages[i], extra)}
                for view in views:
                    if view == "raw":
                        found = [i for i in ranked_memories(index, ask(channel, text, settings, 10_000)) if i in allowed]
                    else:
                        mode = "keyword" if view == "memdir-keyword" else "hybrid"
                        request = SearchRequest(query=text, limit=10, days_back=extra.get("days_back"), now=coding.NOW,
                                                mode=mode)  # type: ignore[arg-type]
                        found = [h.memory.id for h in searcher.search(request)]
                    ranks[view].append(coding.first_hit(list(wanted), found))
            result[name] = {view: {"hit@3": round(statistics.fmean(r is not None and r <= 3 for r in found), 3),
                                   "MRR@10": round(statistics.fmean(1 / r if r else 0.0 for r in found), 3)}
                            for view, found in ranks.items()}
            index._keyword = own
            channel.close()
        index.close()
    result["questions"] = len(coding.QUESTIONS)
    return result


def speed_at(size: int, data: Path, settings: SearchSettings, searches: int, updates: int = 5) -> dict:
    """Build, size, query latency and one-document replacement at `size` memories, every candidate in one run."""
    with tempfile.TemporaryDirectory(prefix="memdir-kwspeed-") as tmp:
        root = Path(tmp) / "vault"
        speed.generate(root, size, data)
        memories = [parse(p.read_bytes(), str(p.relative_to(root))) for p in sorted(root.rglob("*.md"))]
        documents = [(m, chunks_for(m)) for m in memories]
        shutil.rmtree(root)
        folder = Path(tmp) / "channels"
        result: dict = {"memories": size, "chunks": sum(len(c) for _, c in documents)}
        started = time.perf_counter()
        for memory, chunks in documents:
            for chunk in chunks:
                analysed(memory, chunk)
        result["python_analysis_seconds"] = round(time.perf_counter() - started, 2)
        channels: dict[str, Channel] = {}
        for name in CANDIDATES:
            channels[name], seconds = build(name, folder, documents, settings)
            result[name] = {"build_s": round(seconds, 2),
                            "disk_mb": size_mb(folder / ("whoosh-blocks" if name == "whoosh-public" else name))}
        latency: dict[str, list[float]] = {name: [] for name in CANDIDATES}
        for n, query in enumerate(speed.queries(searches, data)):
            for name in CANDIDATES[n % len(CANDIDATES):] + CANDIDATES[:n % len(CANDIDATES)]:  # rotate who goes first
                started = time.perf_counter()
                ask(channels[name], query, settings)
                latency[name].append((time.perf_counter() - started) * 1000)
        probe = speed.queries(searches, data)[0]
        for name in CANDIDATES:
            result[name]["search_p50_ms"] = round(statistics.median(latency[name]), 2)
            result[name]["search_p95_ms"] = round(speed.percentile(latency[name], 0.95), 2)
            if name == "whoosh-public":
                result[name]["update_ms"] = "shares whoosh-blocks' index"
                continue
            update_ms, after_ms = [], []
            for n in range(updates):
                memory = documents[n * 997 % len(documents)][0]
                changed = replace(memory, body=f"{memory.body}\nrevised zqxupdate{n}")
                started = time.perf_counter()
                channels[name].replace([(changed, chunks_for(changed))])
                update_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                ask(channels[name], probe, settings)
                after_ms.append((time.perf_counter() - started) * 1000)
                assert ask(channels[name], f"zqxupdate{n}", settings)[0].chunk_id in {c.chunk_id for c in chunks_for(changed)}
            result[name]["update_one_ms_p50"] = round(statistics.median(update_ms), 1)
            result[name]["first_search_after_update_ms_p50"] = round(statistics.median(after_ms), 1)
        for name in CANDIDATES[:2]:  # last, as it empties their caches: as after a start or a merge
            cold_ms = []
            channels[name].set_weighting(settings.bm25_b, settings.bm25_k1)  # reopens: sees the updates above
            for query in speed.queries(searches, data)[:50]:
                channels[name]._postings = PostingsCache(read_blocks=name == "whoosh-blocks")  # type: ignore[attr-defined]
                started = time.perf_counter()
                ask(channels[name], query, settings)
                cold_ms.append((time.perf_counter() - started) * 1000)
            result[name]["cold_search_p50_ms"] = round(statistics.median(cold_ms), 2)
            result[name]["cold_search_p95_ms"] = round(speed.percentile(cold_ms, 0.95), 2)
        for channel in channels.values():
            channel.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--sizes", default="10000", help="comma-separated vault sizes for the speed part (0 = none)")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--hybrid", action="store_true", help="also measure memdir hybrid with each channel (real model)")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    settings = SearchSettings()
    views = ["raw", "memdir-keyword", *(["memdir-hybrid"] if args.hybrid else [])]
    embedder = (CachedEmbedder(make_embedder(args.embedder), args.cache) if args.hybrid
                else CachedEmbedder(HashingEmbedder(), None))  # keyword mode never reads vectors' meaning
    result: dict = {"settings": {"bm25_b": settings.bm25_b, "bm25_k1": settings.bm25_k1,
                                 "context_boost": settings.context_boost,
                                 "keyword_postings_budget": settings.keyword_postings_budget,
                                 "candidates": settings.candidates}}
    if not args.skip_quality:
        result["locomo_dev"] = locomo_quality(json.loads(args.data.read_text()), settings, embedder, views)
        result["coding"] = coding_quality(settings, embedder, views)
    result["speed"] = [speed_at(int(s), args.data, settings, args.searches) for s in args.sizes.split(",") if int(s)]
    print(json.dumps(result, indent=2) if args.json else table(result))


def table(result: dict) -> str:
    lines = []
    for corpus, metrics in (("locomo_dev", ("R@10", "MRR@10")), ("coding", ("hit@3", "MRR@10"))):
        if corpus not in result:
            continue
        views = list(result[corpus][CANDIDATES[0]])
        lines.append(f"{corpus} ({result[corpus]['questions']} questions)".ljust(16)
                     + "".join(f"{f'{v} {m}':>22}" for v in views for m in metrics))
        for name in CANDIDATES:
            lines.append(f"  {name:14}" + "".join(f"{result[corpus][name][v][m]:22.3f}" for v in views for m in metrics))
    if "locomo_dev" in result:
        lines.append(f"max relative score gap to whoosh-blocks: {result['locomo_dev']['max_relative_score_gap_to_whoosh_blocks']}")
    for s in result["speed"]:
        lines.append(f"{s['memories']} memories, {s['chunks']} chunks (memdir's analyser in Python: {s['python_analysis_seconds']} s)")
        for name in CANDIDATES:
            lines.append(f"  {name:14} " + ", ".join(f"{k}={v}" for k, v in s[name].items()))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
