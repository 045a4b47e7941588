"""Fresh memories asked in other words (issue 26): memdir's search against plain cosine and plain BM25.

The set is bench/fresh_paraphrase_set.py: 66 memories stored hours ago (no outcome record) among the
older, scored memories of the example vault and the coding development set, each asked for with no
content word in common. Memories are written with memdir's writer, indexed with memdir's indexer and
searched the way the vault server does (default settings), as bench/coding.py does; the baselines see
every memory:
  cosine  all-MiniLM-L6-v2 over "title\\nbody" (the query embedded the way memdir embeds it)
  bm25    Okapi BM25 over lower-cased word tokens of title and body
and, on a line of its own, cosine over the pieces memdir indexes (a book by section, each memory once with its
best piece, as bench/book_questions.py ranks them): whole-memory cosine reads only a book's first 256 word
pieces, so it hardly ever shows a book; this one meets the book sections memdir's search meets.

    python bench/fresh_paraphrase.py            # checks the set's rules, then the table
    python bench/fresh_paraphrase.py --check    # only the rules (no model)
    python bench/fresh_paraphrase.py --misses   # the questions hybrid misses in its top 3
    python bench/fresh_paraphrase.py --json
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from coding import NOW, PlainBM25, build_vault, misses, plain_cosine, summarize, system_figures, table  # noqa: E402
from coding_set import MEMORIES as CODING_MEMORIES  # noqa: E402
from fresh_paraphrase_set import FRESH, QUESTIONS  # noqa: E402
from indexer.stopwords import STOP_WORDS  # noqa: E402

EXAMPLE_VAULT = REPO / ".memories-example"
_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ers", "er", "ly", "s")


def stem(word: str) -> str:
    """A crude stemmer: enough that "deploys" and "deploying" count as "deploy" when the rule is checked."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1}


def rule_violations() -> list[str]:
    """Every way the set breaks its own rules; empty when it keeps them."""
    fresh = {m[0]: m for m in FRESH}
    problems = []
    if len(FRESH) < 60:
        problems.append(f"only {len(FRESH)} fresh memories (at least 60)")
    older = len(CODING_MEMORIES) + sum(1 for _ in EXAMPLE_VAULT.rglob("*.md"))
    if older < 100:
        problems.append(f"only {older} older memories (at least 100)")
    asked = {i for _, wanted, _, _ in QUESTIONS for i in wanted}
    problems += [f"{i} is never asked for" for i in sorted(set(fresh) - asked)]
    for text, wanted, kind, _ in QUESTIONS:
        if kind not in ("short", "long"):
            problems.append(f"{text[:50]!r}: kind {kind!r}")
        for memory_id in wanted:
            _, _, _, title, body, _ = fresh[memory_id]
            shared = content_words(text) & content_words(f"{title}\n{body}")
            if shared:
                problems.append(f"{text[:60]!r} shares {sorted(shared)} with {memory_id}")
    return problems


def build(root: Path) -> dict[str, str]:
    """The vault (example vault + coding set + fresh memories); returns every memory's "title\\nbody"."""
    from vault import Vault

    shutil.copytree(EXAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".memdir", "memdir.toml"))
    build_vault(root, NOW, CODING_MEMORIES)
    vault = Vault(root)
    for memory_id, collection, kind, title, body, hours in FRESH:
        front = {"id": memory_id, "collection": collection, "type": kind, "title": title,
                 "created_at": NOW - timedelta(hours=hours)}
        vault.writer.create(f"{collection}/{memory_id}.md", front, body)
    scan = vault.scan()
    return {m.id: f"{m.title}\n{m.body}" for m in scan.memories}


def evaluate(embedder_name: str, cache: Path, settings_overrides: list[str]) -> tuple[dict, list[dict]]:
    import numpy as np

    from book_questions import best_per_memory, pieces
    from indexer.embed import CachedEmbedder, make_embedder
    from indexer.index import Index
    from indexer.search import SearchRequest, Searcher
    from locomo import search_settings
    from vault import Vault
    from vault.settings import LifecycleSettings

    embedder = CachedEmbedder(make_embedder(embedder_name), cache)
    rows: list[dict] = []
    latency: list[float] = []
    with tempfile.TemporaryDirectory(prefix="memdir-fresh-") as tmp:
        root = Path(tmp) / "vault"
        texts = build(root)
        ids = list(texts)
        vectors = dict(zip(ids, embedder.embed([texts[i] for i in ids])))
        found = pieces(root)
        piece_matrix = np.asarray(embedder.embed([text for _, _, text in found]))
        bm25 = PlainBM25(texts)
        index = Index.open(Vault(root), embedder)
        searcher = Searcher(index, search_settings(settings_overrides), lifecycle=LifecycleSettings())
        try:
            for text, wanted, kind, near_proven in QUESTIONS:
                embedder.forget_queries()
                ranked: dict[str, list[str]] = {}
                request = SearchRequest(query=text, limit=10, now=NOW)
                started = time.perf_counter()
                ranked["hybrid"] = [h.memory.id for h in searcher.search(request)]
                latency.append((time.perf_counter() - started) * 1000)
                for system, mode in (("memdir-vector", "vector"), ("memdir-keyword", "keyword")):
                    ranked[system] = [h.memory.id for h in searcher.search(replace(request, mode=mode))]
                ranked["cosine"] = plain_cosine(vectors, embedder.embed_query(text), set(ids))
                by_piece = best_per_memory((piece_matrix @ embedder.embed_query(text)).tolist(), found)
                ranked["cosine-pieces"] = [memory_id.split("#")[0] for memory_id in by_piece]
                ranked["bm25"] = bm25.rank(text, set(ids))
                split = f"{kind}, {'near proven' if near_proven else 'own topic'}"
                rows.append({"question": text, "kind": split, "wanted": list(wanted), "ranked": ranked})
        finally:
            index.close()
    result = summarize(rows, latency, len(texts))
    result["cosine-pieces"] = system_figures(rows, "cosine-pieces")
    return result, rows


def arguments(description: str, holdout: bool = False) -> argparse.Namespace:
    """The options this bench and bench/book_questions.py share."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite",
                        help="embedding cache shared by runs (documents only; queries are always embedded)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a [search] setting, e.g. --set evidence_weight=0.7")
    parser.add_argument("--check", action="store_true", help="only check the set's rules")
    parser.add_argument("--misses", action="store_true", help="list the questions hybrid misses in its top 3")
    parser.add_argument("--json", action="store_true")
    if holdout:
        parser.add_argument("--holdout", action="store_true", help="ask the held-out set instead")
    return parser.parse_args()


def main() -> None:
    args = arguments(__doc__)
    problems = rule_violations()
    if problems:
        sys.exit("the set breaks its rules:\n" + "\n".join(problems))
    if args.check:
        print(f"ok: {len(FRESH)} fresh memories, {len(QUESTIONS)} questions, no shared content word")
        return
    result, rows = evaluate(args.embedder, args.cache, args.set)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(table(result, what=f" ({len(FRESH)} fresh)", group="split", width=22))
        pieces = result["cosine-pieces"]
        print(f"cosine over indexed pieces (a book by section): hit@1 {pieces['hit@1']:.3f}  "
              f"hit@3 {pieces['hit@3']:.3f}  mrr@10 {pieces['mrr@10']:.3f}")
    if args.misses:
        print(misses(rows))


if __name__ == "__main__":
    main()
