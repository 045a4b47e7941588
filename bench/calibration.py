"""What a shown relevance means: for each band of relevance, how often a hit in that band was right.

Every question of a set is asked through memdir's search (default settings, top 10); each hit is "right" when it
is a memory the question wants (LoCoMo: a turn that is evidence for the answer; books: the wanted book shown with a
wanted section). A relevance people can read has a precision that rises with it: a hit shown at 0.55 must be right
more often than one shown at 0.40 (issue 26, item 4). Hits of a timeline (a question that names no subject, answered
newest first) carry no relevance and are left out. The "rising" line says whether precision rises from band to band
(bands with fewer than 10 hits are left out of that check).

Sets: the development sets the shown number is fitted on (coding dev, fresh paraphrases, LoCoMo dev, and `absent`:
the fresh questions asked of their vault without the fresh memories, where every hit is wrong); more checks (the
served example and notes sets ranked in-process as bench/served_fresh.py's in-process column ranks them, the book
questions); the held-out sets (coding hold-out, the held-out handbook's questions, the fourth served hold-out, the
long prompts a developer pastes, bench/long_prompt_set.py, over the coding dev vault).

    python bench/calibration.py                 # every set
    python bench/calibration.py --sets coding   # one set (coding, fresh, locomo, absent, served, servednotes, book,
                                                #   holdout, bookholdout, servedholdout, long)
    python bench/calibration.py --json
    python bench/calibration.py --set vector_top=0   # a setting changed (numbers only), to compare in one run
    python bench/calibration.py --fit           # indexer/ranking.py's SHOWN_ODDS, fitted on the development sets
    python bench/calibration.py --hook          # the prompt hook's words over what it injects (see hook_words)

Under the table: how many hits are shown at 0.4 or more and how many of them are wrong, the same for the hits whose
relevance reaches the prompt hook's `min_relevance` (0.35), which is what it would inject, and the questions whose
top 10 show one value (as printed, two decimals) three times or more: any value, and 0.10-0.99.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import book_questions  # noqa: E402
import coding  # noqa: E402
import coding_holdout  # noqa: E402
import fresh_paraphrase  # noqa: E402
import locomo  # noqa: E402
import long_prompt_set  # noqa: E402
import served_fresh  # noqa: E402
import served_fresh_set  # noqa: E402
from coding_set import MEMORIES, QUESTIONS  # noqa: E402
from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.search import SearchRequest, Searcher, shown_inputs  # noqa: E402
from indexer.settings import SearchSettings  # noqa: E402
from vault import Vault  # noqa: E402
from vault.settings import LifecycleSettings  # noqa: E402

BANDS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0001)
MIN_HITS = 10  # a band with fewer hits says too little to be checked for order
FIT_SETS = ("coding", "fresh", "locomo", "absent")  # the development sets the shown number is fitted on


SETTINGS = SearchSettings()  # main() applies --set
ASKED = 10  # hits asked per question; the prompt hook asks 30 (--hook)
FEATURES = False  # also what the learned order reads, in Hit.explain (bench/learned_order.py's dump)
LIFECYCLE = LifecycleSettings()
INJECTED_FROM = 0.35  # the prompt hook's default min_relevance (mcp_server/config.py)
SHOWN_HIGH = 0.4


def _asked(root: Path, embedder, questions: list[tuple[str, set[str], dict]],
           lifecycle: LifecycleSettings | None = LIFECYCLE, label=lambda hit: hit.memory.id) -> list[list[tuple]]:
    """Each question's top 10: (hit, right) per hit, `right` when the hit's `label` is one the question wants."""
    index = Index.open(Vault(root), embedder)
    searcher = Searcher(index, SETTINGS, lifecycle=lifecycle)
    asked = []
    try:
        for text, wanted, request_fields in questions:
            hits = searcher.search(SearchRequest(query=text, limit=ASKED, features=FEATURES, **request_fields))
            # "what did we do yesterday": listed by time, with no relevance to read
            asked.append([(hit, label(hit) in wanted) for hit in hits if hit.channel != "timeline"])
    finally:
        index.close()
    return asked


def coding_asked(embedder, memories: list[tuple], questions: list[tuple]) -> list[list[tuple]]:
    with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
        coding.build_vault(Path(tmp), coding.NOW, memories)
        asked = [(text, set(wanted), {"days_back": extra.get("days_back"), "now": coding.NOW})
                 for text, wanted, _kind, extra in questions]
        return _asked(Path(tmp), embedder, asked)


def fresh_asked(embedder) -> list[list[tuple]]:
    with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
        root = Path(tmp) / "vault"
        fresh_paraphrase.build(root)
        asked = [(text, set(wanted), {"now": coding.NOW}) for text, wanted, _kind, _near in fresh_paraphrase.QUESTIONS]
        return _asked(root, embedder, asked)


def book_asked(embedder, holdout: bool) -> list[list[tuple]]:
    """The book questions (bench/book_questions.py's vault): a hit is right when it is the wanted book shown with a
    wanted section."""
    with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
        root = Path(tmp) / "vault"
        fresh_paraphrase.build(root)
        if holdout:
            book_questions.add_holdout_book(root)
        asked = [(text, {book_questions.label(book, section) for section in wanted}, {"now": coding.NOW})
                 for text, book, wanted, _kind in book_questions.question_set(holdout).QUESTIONS]
        return _asked(root, embedder, asked, label=lambda hit: book_questions.label(hit.memory.id, hit.heading))


def served_asked(embedder, name: str = "served") -> list[list[tuple]]:
    """A served set (bench/served_fresh.py --set NAME --example-only) ranked in-process, as that bench's in-process
    column ranks it: the example vault with its own settings, the set's fresh memories added now."""
    from mcp_server.config import load_config

    fresh, questions, _ = served_fresh.chosen_set(name)
    with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
        root = Path(tmp) / "vault"
        served_fresh.prepare(root, example_only=True)
        vault, now = Vault(root), datetime.now(timezone.utc)
        ids = {key: vault.add(body, title=title, type=kind, collection=collection, now=now).id
               for key, collection, kind, title, body in fresh}
        lifecycle = load_config(root).lifecycle
        asked = [(text, {ids[key] for key in wanted}, {"now": now}) for text, wanted in questions]
        return _asked(root, embedder, asked, lifecycle=lifecycle if lifecycle.every_seconds else None)


def absent_asked(embedder) -> list[list[tuple]]:
    """Questions whose answer is not in the vault: the fresh set's questions asked of its vault (the example vault and
    the coding set) without the fresh memories. Every hit is wrong; what shows high here shows high for nothing."""
    with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
        root = Path(tmp) / "vault"
        served_fresh.prepare(root, example_only=False)
        return _asked(root, embedder, [(q[0], set(), {"now": coding.NOW}) for q in fresh_paraphrase.QUESTIONS])


def locomo_asked(embedder) -> list[list[tuple]]:
    data = json.loads(locomo.DEFAULT_DATA.read_text())
    asked = []
    for sample in data:
        with tempfile.TemporaryDirectory(prefix="memdir-calibration-") as tmp:
            contains = locomo.build_vault(Path(tmp), sample, "turn")
            turns = set(contains)
            questions = [(item["question"], locomo.relevant_ids(item, turns), {"graph": False, "include_superseded": True})
                         for item in sample["qa"] if item.get("category") != 5 and locomo.relevant_ids(item, turns)]
            asked += _asked(Path(tmp), embedder, questions)
    return asked


def shown(hit) -> float:
    return hit.relevance if hit.shown is None else hit.shown


def plateau(values: list[float], low: float = 0.0, high: float = 1.0) -> int:
    """The largest number of one question's results that show one and the same value as printed (two decimals)."""
    return max(Counter(v for v in (round(v, 2) for v in values) if low <= v <= high).values(), default=0)


def table(asked: list[list[tuple]]) -> dict:
    pairs = [(shown(hit), right, hit.relevance) for hits in asked for hit, right in hits]
    bands = []
    for low, high in zip(BANDS, BANDS[1:]):
        inside = [right for relevance, right, _ in pairs if low <= relevance < high]
        bands.append({"band": f"{low:.1f}-{min(high, 1.0):.1f}", "hits": len(inside),
                      "right": round(statistics.fmean(inside), 3) if inside else None})
    checked = [b["right"] for b in bands if b["hits"] >= MIN_HITS]
    high = [right for value, right, _ in pairs if value >= SHOWN_HIGH]
    injected = [right for _, right, relevance in pairs if relevance >= INJECTED_FROM]
    values = [[shown(hit) for hit, _ in hits] for hits in asked]
    return {"bands": bands, "rising": all(a <= b for a, b in zip(checked, checked[1:])),
            "shown_high": {"hits": len(high), "wrong": high.count(False)},
            "injected": {"hits": len(injected), "wrong": injected.count(False)},
            "plateau": {"questions": len(asked), "any": sum(plateau(v) >= 3 for v in values),
                        "middle": sum(plateau(v, 0.10, 0.99) >= 3 for v in values)}}


def hook_words(asked: list[list[tuple]]) -> dict:
    """What the prompt hook injects for each question (its own choice, hooks_server._slots, default settings; always-
    injected memories aside) and the word it puts beside each (outward.relevance_label, from the shown number): per
    word, how many injected hits get it and how many of those are right; and how many questions get a right one."""
    from mcp_server.clients.hooks_server import _slots
    from mcp_server.config import ContextSettings
    from mcp_server.views.outward import relevance_label

    words: dict[str, list[int]] = {}
    found = 0
    for hits in asked:
        right = {id(hit): is_right for hit, is_right in hits}
        chosen = _slots([hit for hit, _ in hits], ContextSettings(), exclude=set())
        for hit in chosen:
            counts = words.setdefault(relevance_label(shown(hit)), [0, 0])
            counts[0] += 1
            counts[1] += right[id(hit)]
        found += any(right[id(hit)] for hit in chosen)
    return {"questions": len(asked), "found": found, "words": words}


def fitted_odds(asked: dict[str, list[list[tuple]]]) -> list[float]:
    """ranking.SHOWN_ODDS fitted to these sets: a logistic regression of "right" on a constant, the relevance that ranked
    the hit (as log-odds), its margin and its place (search.shown_inputs), each set weighing the same."""
    rows, rights, weights = [], [], []
    for hits_by_question in asked.values():
        read = [(inputs, right) for hits in hits_by_question
                for inputs, (_, right) in zip(shown_inputs([hit for hit, _ in hits]), hits) if inputs is not None]
        for (weighed, margin, place), right in read:
            clipped = min(max(weighed, 1e-4), 1 - 1e-4)
            rows.append([1.0, math.log(clipped / (1 - clipped)), margin, place])
            rights.append(float(right))
            weights.append(1.0 / len(read))
    x, y, w = np.array(rows), np.array(rights), np.array(weights) * len(rows) / len(asked)
    coefficients = np.zeros(x.shape[1])
    for _ in range(50):  # Newton's method on the weighted log-likelihood
        chance = 1 / (1 + np.exp(-x @ coefficients))
        curve = x.T @ ((w * chance * (1 - chance))[:, None] * x)
        coefficients += np.linalg.solve(curve + 1e-6 * np.eye(len(coefficients)), x.T @ (w * (y - chance)))
    return [round(float(c), 3) for c in coefficients]


def RUNS(embedder) -> dict:
    """Every set by name: the development sets (FIT_SETS), more checks (the served sets, books), then the held-out
    sets (servedholdout: bench/served_holdout_set.py, never looked at while the shown number was fitted)."""
    return {"coding": lambda: coding_asked(embedder, MEMORIES, QUESTIONS), "fresh": lambda: fresh_asked(embedder),
            "locomo": lambda: locomo_asked(embedder), "absent": lambda: absent_asked(embedder),
            "served": lambda: served_asked(embedder), "servednotes": lambda: served_asked(embedder, "notes"),
            "book": lambda: book_asked(embedder, holdout=False),
            "holdout": lambda: coding_asked(embedder, coding_holdout.MEMORIES, coding_holdout.QUESTIONS),
            "bookholdout": lambda: book_asked(embedder, holdout=True),
            "servedholdout": lambda: served_asked(embedder, "holdout"),
            "long": lambda: coding_asked(embedder, MEMORIES, long_prompt_set.QUESTIONS)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", action="append", choices=list(RUNS(None)))
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--fit", action="store_true", help="fit ranking.SHOWN_ODDS on the development sets and print it")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a search setting")
    parser.add_argument("--hook", action="store_true", help="the prompt hook's words over what it injects")
    args = parser.parse_args()
    global SETTINGS, ASKED
    SETTINGS = locomo.search_settings(args.set)
    embedder = CachedEmbedder(make_embedder(args.embedder), args.cache)
    runs = RUNS(embedder)
    if args.hook:
        ASKED = 30
        for name in args.sets or list(runs):
            words = hook_words(runs[name]())
            print(f"{name:<14} {words['found']:>4} of {words['questions']:>4} questions get a right memory;  "
                  + "  ".join(f"{word}: {hits} ({right} right)" for word, (hits, right) in sorted(words["words"].items())),
                  flush=True)
        return
    if args.fit:
        print("SHOWN_ODDS =", tuple(fitted_odds({name: runs[name]() for name in FIT_SETS})))
        return
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
    print("plateau   " + "".join(f"{result[n]['plateau']['any']:>7} {result[n]['plateau']['middle']:>4} "
                                 f"/{result[n]['plateau']['questions']:>4}" for n in names)
          + "   (questions whose top 10 show one value 3+ times: any, 0.10-0.99 / questions)")


if __name__ == "__main__":
    main()
