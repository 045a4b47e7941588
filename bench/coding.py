"""Coding-memory benchmark: memdir's search against plain cosine and plain BM25, side by side in one run.

The set (bench/coding_set.py) is one software project's memories - decisions, constraints, learnings,
preferences, runbooks, session notes; fresh ones, established ones with outcome records, superseded
ones - and questions the way a developer types them. Memories are written with memdir's writer,
dated relative to a fixed Wednesday evening (searches are asked "now" = then), indexed with memdir's indexer, and searched the way the vault server does
(default settings, the lifecycle's read-time expiry on).

Baselines, over the same memories:
  cosine  all-MiniLM-L6-v2 over "title\\nbody", the query embedded the same way memdir embeds it
  bm25    Okapi BM25 (k1 1.2, b 0.75) over lower-cased word tokens of title and body
Both see every memory, superseded ones included (they know nothing about status); a question's
days_back window filters them too.

    python bench/coding.py            # table
    python bench/coding.py --json     # everything, per kind
    python bench/coding.py --misses   # the questions memdir hybrid gets wrong, with both baselines' ranks
    python bench/coding.py --holdout  # the hold-out set (bench/coding_holdout.py), another project, never tuned on
    python bench/coding.py --long-set # 24 held-out long prompts (bench/long_prompt_set.py) over the dev set's memories
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import coding_holdout  # noqa: E402
import long_prompt_set  # noqa: E402
from coding_set import MEMORIES, QUESTIONS  # noqa: E402
from locomo import search_settings  # noqa: E402
from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.search import SearchRequest, Searcher  # noqa: E402
from indexer.settings import SearchSettings  # noqa: E402
from vault import Vault  # noqa: E402
from vault.model import Memory  # noqa: E402
from vault.scoring import outcome_updates  # noqa: E402
from vault.settings import LifecycleSettings, ScoringSettings  # noqa: E402

OUTCOME = {"w": "worked", "p": "partial", "f": "failed"}
NOW = datetime(2026, 11, 25, 18, 0, tzinfo=timezone.utc)  # a Wednesday; the set's ages count back from it
SYSTEMS = ("hybrid", "cosine", "bm25", "memdir-vector", "memdir-keyword")
_TOKEN = re.compile(r"[a-z0-9]+")


def scored_fields(collection: str, created: datetime, outcomes: str, now: datetime) -> dict:
    """The frontmatter a memory has after its outcome record, scored as memdir scores it, spread over its life."""
    if not outcomes:
        return {}
    memory = Memory(id="x", path="x.md", collection=collection, type="fact", title="x", body="", created_at=created)
    step = (now - created) / (len(outcomes) + 1)
    changed: dict = {}
    for n, letter in enumerate(outcomes, 1):
        changed = {**changed, **outcome_updates(memory, OUTCOME[letter], created + step * n, ScoringSettings())}
        memory = replace(memory, **{k: tuple(v) if k == "outcomes" else v for k, v in changed.items()})
    return changed


def build_vault(root: Path, now: datetime, memories: list[tuple] = MEMORIES) -> None:
    vault = Vault(root)
    for mid, collection, kind, title, body, age, outcomes, extra in memories:
        created = now - timedelta(days=age)
        front = {"id": mid, "collection": collection, "type": kind, "title": title, "created_at": created}
        front.update(scored_fields(collection, created, outcomes, now))
        front.update({key: list(value) if isinstance(value, tuple) else value for key, value in extra.items()})
        vault.writer.create(f"{collection}/{mid}.md", front, body)


def in_window(age: float, extra: dict) -> bool:
    return "days_back" not in extra or age <= extra["days_back"]


class PlainBM25:
    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = {i: Counter(_TOKEN.findall(text.lower())) for i, text in docs.items()}
        self.length = {i: sum(c.values()) for i, c in self.tf.items()}
        self.average = statistics.fmean(self.length.values())
        df = Counter(t for c in self.tf.values() for t in c)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def rank(self, query: str, allowed: set[str]) -> list[str]:
        terms = _TOKEN.findall(query.lower())
        scores = {}
        for i in allowed:
            tf, norm = self.tf[i], self.k1 * (1 - self.b + self.b * self.length[i] / self.average)
            score = sum(self.idf.get(t, 0.0) * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if t in tf)
            if score > 0:
                scores[i] = score
        return sorted(scores, key=lambda i: (-scores[i], i))


def plain_cosine(vectors: dict[str, np.ndarray], query: np.ndarray, allowed: set[str]) -> list[str]:
    scores = {i: float(vectors[i] @ query) for i in allowed}
    return sorted(scores, key=lambda i: (-scores[i], i))


def evaluate(embedder: CachedEmbedder, settings: SearchSettings, kinds: set[str] | None,
             memories: list[tuple], questions: list[tuple]) -> tuple[dict, list]:
    now = NOW
    ages = {m[0]: m[5] for m in memories}
    texts = {m[0]: f"{m[3]}\n{m[4]}" for m in memories}
    ids = list(texts)
    matrix = embedder.embed([texts[i] for i in ids])
    vectors = dict(zip(ids, matrix))
    bm25 = PlainBM25(texts)
    rows: list[dict] = []
    latency: list[float] = []
    with tempfile.TemporaryDirectory(prefix="memdir-coding-") as tmp:
        root = Path(tmp)
        build_vault(root, now, memories)
        index = Index.open(Vault(root), embedder)
        searcher = Searcher(index, settings, lifecycle=LifecycleSettings())
        try:
            for text, wanted, kind, extra in questions:
                if kinds and kind not in kinds:
                    continue
                allowed = {i for i in ids if in_window(ages[i], extra)}
                ranked: dict[str, list[str]] = {}
                embedder.forget_queries()
                started = time.perf_counter()
                request = SearchRequest(query=text, limit=10, days_back=extra.get("days_back"), now=now)
                ranked["hybrid"] = [h.memory.id for h in searcher.search(request)]
                latency.append((time.perf_counter() - started) * 1000)
                for system, mode in (("memdir-vector", "vector"), ("memdir-keyword", "keyword")):
                    ranked[system] = [h.memory.id for h in searcher.search(replace(request, mode=mode))]
                ranked["cosine"] = plain_cosine(vectors, embedder.embed_query(text), allowed)
                ranked["bm25"] = bm25.rank(text, allowed)
                rows.append({"question": text, "kind": kind, "wanted": list(wanted), "ranked": ranked})
        finally:
            index.close()
    return summarize(rows, latency, len(memories)), rows


def first_hit(wanted: list[str], ranked: list[str]) -> int | None:
    return next((n for n, i in enumerate(ranked[:10], 1) if i in wanted), None)


def system_figures(rows: list[dict], system: str) -> dict:
    """hit@1, hit@3 and MRR@10 of one system's rankings."""
    ranks = [first_hit(r["wanted"], r["ranked"][system]) for r in rows]
    return {
        "hit@1": round(statistics.fmean(r == 1 for r in ranks), 3),
        "hit@3": round(statistics.fmean(r is not None and r <= 3 for r in ranks), 3),
        "mrr@10": round(statistics.fmean(1 / r if r else 0.0 for r in ranks), 3),
    }


def summarize(rows: list[dict], latency: list[float], memories: int) -> dict:
    def figures(subset: list[dict]) -> dict:
        return {system: system_figures(subset, system) for system in SYSTEMS}

    result = {"questions": len(rows), "memories": memories, **figures(rows)}
    result["by_kind"] = {kind: {"questions": n, **figures([r for r in rows if r["kind"] == kind])}
                         for kind, n in sorted(Counter(r["kind"] for r in rows).items())}
    best = max(result["cosine"]["mrr@10"], result["bm25"]["mrr@10"])
    result["hybrid_mrr_over_best_plain"] = round(result["hybrid"]["mrr@10"] / best - 1, 4) if best else None
    ordered = sorted(latency)
    result["hybrid_p50_ms"] = round(statistics.median(ordered), 2)
    result["hybrid_p95_ms"] = round(ordered[int(0.95 * (len(ordered) - 1))], 2)
    return result


def table(result: dict, *, what: str = "", group: str = "kind", width: int = 11) -> str:
    """The figures as text: one row per metric and system, then hit@3 / MRR@10 by kind (or another grouping)."""
    lines = [f"{result['memories']} memories{what}, {result['questions']} questions",
             f"{'':16}" + "".join(f"{s:>16}" for s in SYSTEMS)]
    for metric in ("hit@1", "hit@3", "mrr@10"):
        lines.append(f"{metric:16}" + "".join(f"{result[s][metric]:16.3f}" for s in SYSTEMS))
    lines.append(f"hit@3 / mrr@10 by {group}:")
    for kind, r in result["by_kind"].items():
        lines.append(f"  {kind:{width}} {r['questions']:3}  " + "".join(
            f"{r[s]['hit@3']:7.3f} /{r[s]['mrr@10']:6.3f}" for s in SYSTEMS))
    lines.append(f"hybrid MRR@10 over the better plain baseline: {result['hybrid_mrr_over_best_plain']:+.1%}; "
                 f"hybrid p50 {result['hybrid_p50_ms']} ms, p95 {result['hybrid_p95_ms']} ms")
    return "\n".join(lines)


def misses(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        rank = first_hit(r["wanted"], r["ranked"]["hybrid"])
        if rank is not None and rank <= 3:
            continue
        others = {s: first_hit(r["wanted"], r["ranked"][s]) for s in SYSTEMS[1:]}
        lines.append(f"[{r['kind']}] {r['question'][:90]!r} wanted {r['wanted']} hybrid rank {rank} "
                     + " ".join(f"{s}={v}" for s, v in others.items()) + f"  got {r['ranked']['hybrid'][:3]}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite",
                        help="embedding cache shared by runs (documents only; queries are always embedded)")
    parser.add_argument("--kind", action="append", help="only questions of this kind (repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a [search] setting, e.g. --set evidence_weight=0.7")
    parser.add_argument("--misses", action="store_true", help="list the questions hybrid misses in its top 3")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--holdout", action="store_true",
                        help="run the hold-out set (bench/coding_holdout.py) instead of the development set")
    parser.add_argument("--long-set", action="store_true",
                        help="run the held-out long prompts (bench/long_prompt_set.py) over the development set's memories")
    parser.add_argument("--padded", action="store_true", help="with --long-set: each prompt behind 8 kB of access log")
    args = parser.parse_args()
    settings = search_settings(args.set)
    embedder = CachedEmbedder(make_embedder(args.embedder), args.cache)
    memories, questions = (coding_holdout.MEMORIES, coding_holdout.QUESTIONS) if args.holdout else (MEMORIES, QUESTIONS)
    if args.long_set:
        questions = long_prompt_set.QUESTIONS
        if args.padded:
            questions = [(long_prompt_set.padded(q), *rest) for q, *rest in questions]
    result, rows = evaluate(embedder, settings, set(args.kind) if args.kind else None, memories, questions)
    print(json.dumps(result, indent=2) if args.json else table(result))
    if args.misses:
        print(misses(rows))


if __name__ == "__main__":
    main()
