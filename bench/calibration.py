"""What a shown relevance means: for each band of relevance, how often a hit in that band was right.

Every question of the development sets is asked through memdir's search (default settings, top 10);
each hit is "right" when it is a memory the question wants (LoCoMo: a turn that is evidence for the
answer). A relevance people can read has a precision that rises with it: a hit shown at 0.55 must be
right more often than one shown at 0.40 (issue 26, item 4). Hits of a timeline (a question that names no
subject, answered newest first) carry no relevance and are left out. The last line of each table says whether
precision rises from band to band (bands with fewer than 10 hits are left out of that check).

    python bench/calibration.py                 # coding dev, coding hold-out, fresh paraphrase, LoCoMo dev
    python bench/calibration.py --sets coding   # one set (coding, holdout, fresh, locomo)
    python bench/calibration.py --json
    python bench/calibration.py --set vector_top=0   # a setting changed (numbers only), to compare in one run

Under the table: how many hits are shown at 0.4 or more and how many of them are wrong, and the same for the hits
whose relevance reaches the prompt hook's `min_relevance` (0.35), which is what it would inject.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import coding  # noqa: E402
import coding_holdout  # noqa: E402
import fresh_paraphrase  # noqa: E402
import locomo  # noqa: E402
from coding_set import MEMORIES, QUESTIONS  # noqa: E402
from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.search import SearchRequest, Searcher  # noqa: E402
from indexer.settings import SearchSettings  # noqa: E402
from vault import Vault  # noqa: E402
from vault.settings import LifecycleSettings  # noqa: E402

BANDS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0001)
MIN_HITS = 10  # a band with fewer hits says too little to be checked for order


SETTINGS = SearchSettings()  # main() applies --set
INJECTED_FROM = 0.35  # the prompt hook's default min_relevance (mcp_server/config.py)
SHOWN_HIGH = 0.4


def _asked(root: Path, embedder, questions: list[tuple[str, set[str], dict]]) -> list[tuple[float, bool, float]]:
    """(shown relevance, right, relevance) of every hit in the top 10 of every question."""
    index = Index.open(Vault(root), embedder)
    searcher = Searcher(index, SETTINGS, lifecycle=LifecycleSettings())
    pairs = []
    try:
        for text, wanted, request_fields in questions:
            for hit in searcher.search(SearchRequest(query=text, limit=10, **request_fields)):
                if hit.channel == "timeline":
                    continue  # "what did we do yesterday": listed by time, with no relevance to read
                pairs.append((hit.relevance if hit.shown is None else hit.shown, hit.memory.id in wanted, hit.relevance))
    finally:
        index.close()
    return pairs


def coding_pairs(embedder, memories: list[tuple], questions: list[tuple]) -> list[tuple[float, bool, float]]:
    with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
        coding.build_vault(Path(tmp), coding.NOW, memories)
        asked = [(text, set(wanted), {"days_back": extra.get("days_back"), "now": coding.NOW})
                 for text, wanted, _kind, extra in questions]
        return _asked(Path(tmp), embedder, asked)


def fresh_pairs(embedder) -> list[tuple[float, bool, float]]:
    with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
        root = Path(tmp) / "vault"
        fresh_paraphrase.build(root)
        asked = [(text, set(wanted), {"now": coding.NOW}) for text, wanted, _kind, _near in fresh_paraphrase.QUESTIONS]
        return _asked(root, embedder, asked)


def locomo_pairs(embedder) -> list[tuple[float, bool, float]]:
    data = json.loads(locomo.DEFAULT_DATA.read_text())
    pairs = []
    for sample in data:
        with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
            contains = locomo.build_vault(Path(tmp), sample, "turn")
            turns = set(contains)
            asked = [(item["question"], locomo.relevant_ids(item, turns), {"graph": False, "include_superseded": True})
                     for item in sample["qa"] if item.get("category") != 5 and locomo.relevant_ids(item, turns)]
            pairs += _asked(Path(tmp), embedder, asked)
    return pairs


def table(pairs: list[tuple[float, bool, float]]) -> dict:
    bands = []
    for low, high in zip(BANDS, BANDS[1:]):
        inside = [right for relevance, right, _ in pairs if low <= relevance < high]
        bands.append({"band": f"{low:.1f}-{min(high, 1.0):.1f}", "hits": len(inside),
                      "right": round(statistics.fmean(inside), 3) if inside else None})
    checked = [b["right"] for b in bands if b["hits"] >= MIN_HITS]
    high = [right for shown, right, _ in pairs if shown >= SHOWN_HIGH]
    injected = [right for _, right, relevance in pairs if relevance >= INJECTED_FROM]
    return {"bands": bands, "rising": all(a <= b for a, b in zip(checked, checked[1:])),
            "shown_high": {"hits": len(high), "wrong": high.count(False)},
            "injected": {"hits": len(injected), "wrong": injected.count(False)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", action="append", choices=["coding", "holdout", "fresh", "locomo"])
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a search setting")
    args = parser.parse_args()
    global SETTINGS
    SETTINGS = locomo.search_settings(args.set)
    embedder = CachedEmbedder(make_embedder(args.embedder), args.cache)
    runs = {"coding": lambda: coding_pairs(embedder, MEMORIES, QUESTIONS),
            "holdout": lambda: coding_pairs(embedder, coding_holdout.MEMORIES, coding_holdout.QUESTIONS),
            "fresh": lambda: fresh_pairs(embedder), "locomo": lambda: locomo_pairs(embedder)}
    result = {name: table(runs[name]()) for name in (args.sets or list(runs))}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    names = list(result)
    print("relevance " + "".join(f"{name:>20}" for name in names))
    print("          " + "".join(f"{'hits   right':>20}" for _ in names))
    for row in range(len(BANDS) - 1):
        cells = []
        for name in names:
            band = result[name]["bands"][row]
            right = "-" if band["right"] is None else f"{band['right']:.3f}"
            cells.append(f"{band['hits']:>12} {right:>7}")
        print(f"{result[names[0]]['bands'][row]['band']:<10}" + "".join(cells))
    print("rising    " + "".join(f"{'yes' if result[n]['rising'] else 'NO':>20}" for n in names))
    for key, label in (("shown_high", f"shown>={SHOWN_HIGH}"), ("injected", f"rel>={INJECTED_FROM}")):
        print(f"{label:<10}" + "".join(f"{result[n][key]['hits']:>12} {result[n][key]['wrong']:>7}" for n in names)
              + "   (hits, wrong)")


if __name__ == "__main__":
    main()
