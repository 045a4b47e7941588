"""Why hybrid loses an answer memdir's own vector channel has (issue 26 item 1): one term at a time.

For every question of the fresh, book and long-prompt sets where the vector mode has a wanted result in its
top 3 and hybrid does not, the search is repeated with one ranking term switched off at a time, and the
terms whose removal brings the answer back into hybrid's top 3 are named. The terms:
  keyword   the keyword channel's part of the order (its confidence forced to 0; exact tokens keep theirs)
  evidence  the calibrated-relevance half of the order (evidence_weight 0: the fused z-score mix alone)
  fused     the z-score half (evidence_weight 1)
  quality   the outcome/quality prior (factor 1 for every memory)
  recency   the recency terms (recency_weight 0)
  thread    the thread lift (thread_lift 0)
  graph     what links lend (graph_factor 0)
  section   the book section rule (section_lead_share 0)
Then the wanted result's and the results above it's terms are printed (vector score, the two fusion mixes,
order, quality, recency, final score, channel).

    python bench/fusion_trace.py [--set key=value] [--sets fresh,books,dev-long,hold-long] [--quiet] [--worse]

--worse takes every question hybrid ranks below the vector mode (back = as high as the vector mode).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from coding import NOW, build_vault, first_hit  # noqa: E402

ABLATIONS = {
    "keyword": ["keyword_confidence_high=1", "keyword_confidence_low=0.99"],
    "evidence": ["evidence_weight=0"],
    "fused": ["evidence_weight=1"],
    "quality": None,  # a quality function that says 1 for every memory
    "recency": ["recency_weight=0"],
    "thread": ["thread_lift=0"],
    "graph": ["graph_factor=0"],
    "section": ["section_lead_share=0"],
}


def questions(name: str) -> list[tuple[str, list[str], dict]]:
    """(question, wanted labels, request extras) of one set."""
    if name == "fresh":
        from fresh_paraphrase_set import QUESTIONS
        return [(q, list(w), {}) for q, w, _, _ in QUESTIONS]
    if name == "books":
        from book_questions import label
        from book_questions_set import QUESTIONS
        return [(q, [label(book, f) for f in wanted], {}) for q, book, wanted, _ in QUESTIONS]
    from coding_set import QUESTIONS as DEV
    from coding_holdout import QUESTIONS as HOLD
    chosen = DEV if name == "dev-long" else HOLD
    return [(q, list(w), extra) for q, w, kind, extra in chosen if kind == "long"]


def build(name: str, root: Path) -> None:
    if name in ("fresh", "books"):
        from fresh_paraphrase import build as build_fresh
        build_fresh(root)
        return
    import coding_holdout
    root.mkdir()
    from coding_set import MEMORIES
    build_vault(root, NOW, MEMORIES if name == "dev-long" else coding_holdout.MEMORIES)


def ranked(searcher, request) -> tuple[list[str], list]:
    from book_questions import label
    hits = searcher.search(request)
    return [label(h.memory.id, h.heading) for h in hits], hits


def trace(name: str, base: list[str], quiet: bool, worse: bool = False) -> Counter:
    from indexer.embed import CachedEmbedder, make_embedder
    from indexer.index import Index
    from indexer.search import SearchRequest, Searcher
    from locomo import search_settings
    from vault import Vault
    from vault.settings import LifecycleSettings

    embedder = CachedEmbedder(make_embedder("all-MiniLM-L6-v2"), Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite")
    causes: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="memdir-trace-") as tmp:
        root = Path(tmp) / "vault"
        build(name, root)
        index = Index.open(Vault(root), embedder)
        life = LifecycleSettings()
        searcher = Searcher(index, search_settings(base), lifecycle=life)
        variants = {term: Searcher(index, search_settings(base + (extra or [])), lifecycle=life,
                                   quality=(lambda memory, now: 1.0) if extra is None else None)
                    for term, extra in ABLATIONS.items()}
        try:
            lost = 0
            for text, wanted, extra in questions(name):
                embedder.forget_queries()
                request = SearchRequest(query=text, limit=20, days_back=extra.get("days_back"), now=NOW)
                hybrid, hits = ranked(searcher, request)
                vector, _ = ranked(searcher, replace(request, mode="vector"))
                h, v = first_hit(wanted, hybrid), first_hit(wanted, vector)
                if v is None or (h is not None and h <= v) or (not worse and (v > 3 or (h is not None and h <= 3))):
                    continue
                goal = v if worse else 3
                lost += 1
                back = [t for t, s in variants.items() if (r := first_hit(wanted, ranked(s, request)[0])) is not None and r <= goal]
                causes.update(back or ["none alone"])
                if quiet:
                    continue
                print(f"[{name}] {text[:80]!r} vector {v} hybrid {h}; back without: {', '.join(back) or '-'}")
                shown = hybrid[:max(3, h or 3)]
                for position, (lab, hit) in enumerate(zip(hybrid, hits), 1):
                    if position > len(shown) and lab not in wanted:
                        continue
                    e = hit.explain
                    print(f"   {position:2d} {'*' if lab in wanted else ' '} {lab[:44]:44s} cos {hit.vector_score or 0:.3f} "
                          f"vz {e['vector_mix']:+.2f} kz {e['keyword_mix']:+.2f} order {e['order']:.3f} q {e['quality']:.3f} "
                          f"rec {e['recency']:.3f} final {hit.final:.3f} {hit.channel}")
                    if lab in wanted:
                        break
            what = "ranked lower by hybrid than by the vector mode" if worse else "in the vector mode's top 3, not hybrid's"
            print(f"{name}: {lost} questions {what}; "
                  f"back without: {dict(causes)}")
        finally:
            index.close()
    return causes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--sets", default="fresh,books,dev-long,hold-long")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--worse", action="store_true",
                        help="every question hybrid ranks below the vector mode (back = as high as the vector mode)")
    args = parser.parse_args()
    for name in args.sets.split(","):
        trace(name, args.set, args.quiet, args.worse)


if __name__ == "__main__":
    main()
