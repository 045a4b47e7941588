"""LoCoMo retrieval benchmark: memdir's own vault, indexer and search on the dev split.

Each conversation becomes its own vault (one memory per turn, or per session), written with
memdir's writer, indexed with memdir's indexer, and every non-adversarial question is asked
through memdir's search. A turn names the turn before it in its session as `previous:`. Task definition: ../shared/bench/README.md (the data is CC BY-NC and
is read from there, never copied into this project).

    python bench/locomo.py --json                       # hybrid, turn level
    python bench/locomo.py --mode all --json            # hybrid, bm25 and vector in one run
    python bench/locomo.py --granularity session --json
    python bench/locomo.py --granularity window --mode all   # 6-turn windows, 1-turn overlap (Engram's unit)
    python bench/locomo.py --halves --json              # also each half: tune on A, report on B

`--mode all` also runs two plain baselines over the same memories in the same run: `cosine`
(all-MiniLM-L6-v2 over each memory's text, nothing else) and `plain-bm25` (Okapi BM25, k1 1.2,
b 0.75, over its words).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import fields, replace
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.search import SearchRequest, Searcher  # noqa: E402
from indexer.settings import SearchSettings  # noqa: E402
from vault import Vault  # noqa: E402

DEFAULT_DATA = next((p for p in (REPO.parent / "shared" / "bench" / "locomo-dev.json",
                     Path("/work/shared/bench/locomo-dev.json")) if p.exists()), REPO.parent / "shared" / "bench" / "locomo-dev.json")
WINDOW_TURNS = 6  # turns per window ...
WINDOW_OVERLAP = 1  # ... sharing this many with the window before (snap-research/locomo#38's unit)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MODES = {"hybrid": "hybrid", "bm25": "keyword", "vector": "vector"}
PLAIN = ("cosine", "plain-bm25")  # baselines outside memdir, run with --mode all
# The dev conversations split in two (issue 26, sessions 6-7): a rule is tuned on half A and reported on half B.
HALVES = {"A": range(0, 3), "B": range(3, 5)}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → an aware datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turns_of(conversation: dict) -> list[tuple[int, datetime, dict]]:
    sessions = []
    for key, value in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(value, list):
            sessions.append((int(match.group(1)), session_date(conversation[f"{key}_date_time"]), value))
    return sorted(sessions)


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    return text + (f" [shares {turn['blip_caption']}]" if turn.get("blip_caption") else "")


def memory_id(dia_id: str) -> str:
    session, number = _EVIDENCE.fullmatch(dia_id).groups()  # type: ignore[union-attr]
    return f"d{int(session)}-{int(number)}"


def build_vault(root: Path, sample: dict, granularity: str, texts: dict[str, str] | None = None) -> dict[str, set[str]]:
    """Write the conversation as memories; returns memory id → the dia_ids it contains (and fills
    `texts` with each memory's body, for the plain baselines)."""
    vault = Vault(root)
    contains: dict[str, set[str]] = {}
    texts = {} if texts is None else texts
    for number, when, turns in turns_of(sample["conversation"]):
        day = when.strftime("%-d %B %Y")
        if granularity == "window":
            step = WINDOW_TURNS - WINDOW_OVERLAP
            for start in range(0, max(1, len(turns) - WINDOW_OVERLAP), step):
                window = turns[start:start + WINDOW_TURNS]
                mid = f"s{number}-w{start // step}"
                texts[mid] = "\n".join(turn_text(t) for t in window)
                fields_ = {"id": mid, "collection": "history", "type": "history", "created_at": when,
                           "title": f"Session {number}, {day}, turns {start + 1}-{start + len(window)}",
                           "speaker": sorted({t["speaker"] for t in window})}
                vault.writer.create(f"history/{mid}.md", fields_, texts[mid])
                contains[mid] = {memory_id(t["dia_id"]) for t in window}
            continue
        if granularity == "session":
            mid = f"s{number}"
            body = texts[mid] = "\n".join(turn_text(t) for t in turns)
            fields_ = {"id": mid, "collection": "history", "type": "history", "created_at": when,
                       "title": f"Session {number}, {day}", "speaker": sorted({t["speaker"] for t in turns})}
            vault.writer.create(f"history/{mid}.md", fields_, body)
            contains[mid] = {memory_id(t["dia_id"]) for t in turns}
            continue
        previous = None
        for turn in turns:
            mid = memory_id(turn["dia_id"])
            fields_ = {"id": mid, "collection": "history", "type": "history", "created_at": when,
                       "title": f"{turn['speaker']}, {day}", "speaker": turn["speaker"], "session": number}
            if previous:
                fields_["previous"] = previous  # as memdir's Stop hook links consecutive exchanges of a session
            texts[mid] = turn_text(turn)
            vault.writer.create(f"history/{mid}.md", fields_, texts[mid])
            contains[mid] = {mid}
            previous = mid
    return contains


def relevant_ids(item: dict, known: set[str]) -> set[str]:
    found = {f"d{int(s)}-{int(t)}" for text in item.get("evidence", []) for s, t in _EVIDENCE.findall(text)}
    return found & known


def evaluate(data: list[dict], granularity: str, modes: list[str], settings: SearchSettings,
             embedder: CachedEmbedder, conversations: int | None, halves: bool = False) -> dict:
    from coding import PlainBM25, plain_cosine  # the coding bench's baselines (it imports this module)

    plain = [m for m in modes if m in PLAIN]
    per_mode: dict[str, dict] = {m: {"rows": [], "latency": []} for m in modes}
    memories = 0
    index_seconds = 0.0
    for number, sample in enumerate(data[:conversations]):
        with tempfile.TemporaryDirectory(prefix="memdir-locomo-") as tmp:
            root = Path(tmp)
            texts: dict[str, str] = {}
            contains = build_vault(root, sample, granularity, texts)
            ids = list(texts)
            vectors = dict(zip(ids, embedder.embed([texts[i] for i in ids]))) if "cosine" in plain else {}
            bm25 = PlainBM25(texts) if "plain-bm25" in plain else None
            memories += len(contains)
            turns = {t for ids in contains.values() for t in ids}
            started = time.perf_counter()
            index = Index.open(Vault(root), embedder)
            index_seconds += time.perf_counter() - started
            searcher = Searcher(index, settings)
            for item in sample["qa"]:
                if item.get("category") == 5:
                    continue
                wanted = relevant_ids(item, turns)
                if not wanted:
                    continue
                for mode in plain:
                    ranked_ids = (plain_cosine(vectors, embedder.embed_query(item["question"]), set(ids)) if mode == "cosine"
                                  else bm25.rank(item["question"], set(ids)))  # type: ignore[union-attr]
                    per_mode[mode]["rows"].append((item["category"], wanted, [contains[i] for i in ranked_ids[:10]], number))
                for mode in modes:
                    if mode in PLAIN:
                        continue
                    request = SearchRequest(query=item["question"], limit=10, mode=MODES[mode], graph=False,  # type: ignore[arg-type]
                                            include_superseded=True)
                    embedder.forget_queries()  # every mode pays for its own query embedding
                    started = time.perf_counter()
                    hits = searcher.search(request)
                    per_mode[mode]["latency"].append((time.perf_counter() - started) * 1000)
                    ranked = [contains[h.memory.id] for h in hits]
                    per_mode[mode]["rows"].append((item["category"], wanted, ranked, number))
            index.close()
    results = {}
    for mode, v in per_mode.items():
        results[mode] = summarize([r[:3] for r in v["rows"]], v["latency"], memories, index_seconds)
        if halves:
            parts = {name: [r[:3] for r in v["rows"] if r[3] in part] for name, part in HALVES.items()}
            results[mode]["halves"] = {name: summarize(rows, [], memories, index_seconds) for name, rows in parts.items() if rows}
    return results


def summarize(rows: list, latency: list[float], memories: int, index_seconds: float) -> dict:
    def recall(wanted: set[str], ranked: list[set[str]], k: int) -> float:
        seen = set().union(*ranked[:k]) if ranked[:k] else set()
        return len(wanted & seen) / len(wanted)

    def reciprocal_rank(wanted: set[str], ranked: list[set[str]]) -> float:
        return next((1 / (i + 1) for i, ids in enumerate(ranked[:10]) if ids & wanted), 0.0)

    def mean(values: list[float]) -> float:
        return round(statistics.fmean(values), 4) if values else 0.0

    def hit(wanted: set[str], ranked: list[set[str]], k: int) -> float:
        # Any evidence turn in the top k: the per-question count some published figures call R@k (Engram's 1862/1982).
        return float(bool(wanted & set().union(*ranked[:k]))) if ranked else 0.0

    by_category = {}
    for number, name in CATEGORIES.items():
        subset = [r for r in rows if r[0] == number]
        by_category[name] = {"queries": len(subset), "recall@5": mean([recall(w, r, 5) for _, w, r in subset]),
                             "recall@10": mean([recall(w, r, 10) for _, w, r in subset]),
                             "hit@5": mean([hit(w, r, 5) for _, w, r in subset]),
                             "hit@10": mean([hit(w, r, 10) for _, w, r in subset])}
    ordered = sorted(latency)
    return {
        "recall@5": mean([recall(w, r, 5) for _, w, r in rows]),
        "recall@10": mean([recall(w, r, 10) for _, w, r in rows]),
        "mrr@10": mean([reciprocal_rank(w, r) for _, w, r in rows]),
        "hit@5": mean([hit(w, r, 5) for _, w, r in rows]),
        "hit@10": mean([hit(w, r, 10) for _, w, r in rows]),
        "mrr@10_by_category": {name: mean([reciprocal_rank(w, r) for c, w, r in rows if c == number])
                               for number, name in CATEGORIES.items()},
        "p50_ms": round(statistics.median(ordered), 2) if ordered else 0.0,
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2) if ordered else 0.0,
        "memories": memories,
        "queries": len(rows),
        "index_seconds": round(index_seconds, 2),
        "by_category": by_category,
    }


def search_settings(overrides: list[str]) -> SearchSettings:
    """SearchSettings with `--set KEY=VALUE` overrides applied (numbers only)."""
    settings = SearchSettings()
    types = {f.name: f.type for f in fields(SearchSettings)}
    for item in overrides:
        key, _, value = item.partition("=")
        settings = replace(settings, **{key: float(value) if "float" in str(types[key]) else int(value)})
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--granularity", choices=["turn", "session", "window"], default="turn")
    parser.add_argument("--mode", choices=["hybrid", "bm25", "vector", "all"], default="hybrid")
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite",
                        help="embedding cache shared by runs (documents only; queries are always embedded)")
    parser.add_argument("--conversations", type=int, help="only the first N conversations")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a [search] setting, e.g. --set evidence_weight=0.7")
    parser.add_argument("--halves", action="store_true",
                        help="also report conversations 1-3 (A, where rules are tuned) and 4-5 (B, held) apart")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    settings = search_settings(args.set)
    embedder = CachedEmbedder(make_embedder(args.embedder), args.cache)
    modes = ["hybrid", "bm25", "vector", *PLAIN] if args.mode == "all" else [args.mode]
    data = json.loads(args.data.read_text())
    results = evaluate(data, args.granularity, modes, settings, embedder, args.conversations, args.halves)
    if "vector" in modes and "bm25" in modes:
        best = {k: max(results["bm25"][k], results["vector"][k]) for k in ("recall@10", "mrr@10")}
        results["hybrid_gain_over_best_single"] = {
            k: round(results["hybrid"][k] / best[k] - 1, 4) if best[k] else None for k in best
        }
    output = results if len(modes) > 1 else results[modes[0]]
    print(json.dumps(output, indent=2) if args.json else _table(results))


def _table(results: dict) -> str:
    names = list(CATEGORIES.values())
    lines = [f"{'mode':12} {'R@5':>6} {'R@10':>6} {'MRR@10':>7} {'p50 ms':>7} {'p95 ms':>7}   R@5 / R@10 / MRR@10: "
             + "  ".join(f"{n:>19}" for n in names)]
    rows = [(mode, r) for mode, r in results.items() if mode in MODES or mode in PLAIN]
    rows += [(f"{mode} {name}", half) for mode, r in rows for name, half in r.get("halves", {}).items()]
    for mode, r in rows:
        lines.append(f"{mode:12} {r['recall@5']:6.3f} {r['recall@10']:6.3f} {r['mrr@10']:7.3f} {r['p50_ms']:7.1f} "
                     f"{r['p95_ms']:7.1f}   " + "  ".join(
                         f"{r['by_category'][n]['recall@5']:.3f}/{r['by_category'][n]['recall@10']:.3f}/"
                         f"{r['mrr@10_by_category'][n]:.3f}" for n in names))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
