"""What reading a long prompt by its salient lines costs: in-process search latency at 10k memories, the real model.

    python bench/long_prompt_latency.py                 # 10k memories, 3 rounds of each prompt
    python bench/long_prompt_latency.py --size 1000

The vault is speed.py's (LoCoMo turns, seeded; embeddings cached in speed.py's cache). Each prompt is searched
with `salient_weight` at its default and at 0 (the whole prompt alone, as before), alternately in the same
loop, the query's embedding included every time (its cache is cleared). Prompt kinds: the 24 held-out pastes of
bench/long_prompt_set.py as they are, the same behind 8 kB of access log (10 kB prompts), the coding dev set's
28 long prompts, and 50 short LoCoMo questions. Besides the searches, the model time alone: the whole prompt's
embedding and its salient lines' embedding (indexer/salient.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import long_prompt_set  # noqa: E402
from coding_set import QUESTIONS  # noqa: E402
from speed import DEFAULT_DATA, generate, percentile, queries  # noqa: E402
from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.salient import salient_text  # noqa: E402
from indexer.search import SearchRequest, Searcher  # noqa: E402
from indexer.settings import SearchSettings  # noqa: E402
from vault import Vault  # noqa: E402


def summary(values: list[float]) -> dict:
    return {"p50_ms": round(statistics.median(values), 2), "p95_ms": round(percentile(values, 0.95), 2), "n": len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "speed-embeddings.sqlite")
    args = parser.parse_args()
    pastes = [q for q, *_ in long_prompt_set.QUESTIONS]
    kinds = {"held-out pastes (24)": pastes,
             "the same behind 8 kB of log (10 kB)": [long_prompt_set.padded(q) for q in pastes],
             "coding dev long prompts (28)": [q for q, _, kind, _ in QUESTIONS if kind == "long"],
             "short LoCoMo questions (50)": queries(50, args.data)}
    result: dict = {"memories": args.size}
    with tempfile.TemporaryDirectory(prefix="memdir-long-latency-") as tmp:
        root = Path(tmp) / "vault"
        generate(root, args.size, args.data)
        embedder = CachedEmbedder(make_embedder("all-MiniLM-L6-v2"), args.cache)
        index = Index.open(Vault(root), embedder)
        searchers = {"salient": Searcher(index, SearchSettings()), "whole only": Searcher(index, SearchSettings(salient_weight=0))}
        for prompt in kinds["short LoCoMo questions (50)"][:5]:  # warm: the OS caches, the first searches
            searchers["salient"].search(SearchRequest(query=prompt, limit=10))
        for kind, prompts in kinds.items():
            times: dict[str, list[float]] = {name: [] for name in searchers}
            for _ in range(args.rounds):
                for prompt in prompts:
                    for name, searcher in searchers.items():
                        embedder.forget_queries()
                        started = time.perf_counter()
                        searcher.search(SearchRequest(query=prompt, limit=10))
                        times[name].append((time.perf_counter() - started) * 1000)
            result[kind] = {name: summary(values) for name, values in times.items()}
        model: dict[str, list[float]] = {"whole prompt (first 2000 chars)": [], "salient lines": []}
        for prompt in pastes * args.rounds:
            for name, text in (("whole prompt (first 2000 chars)", prompt[:2000]), ("salient lines", salient_text(prompt))):
                if text:
                    started = time.perf_counter()
                    embedder.inner.embed_query(text)
                    model[name].append((time.perf_counter() - started) * 1000)
        result["model time, held-out pastes"] = {name: summary(values) for name, values in model.items()}
        started = time.perf_counter()
        for prompt in kinds["the same behind 8 kB of log (10 kB)"]:
            salient_text(prompt)
        result["salient_text on a 10 kB paste, ms"] = round((time.perf_counter() - started) * 1000 / len(pastes), 3)
        index.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
