"""Fresh memories asked in other words, through the running server (issue 26's outside measure, mimicked).

The set is bench/served_fresh_set.py (48 memories, one question each, no content word shared). The run:
  1. copies the bundled example vault (its own memdir.toml, the user vault switched off so nothing outside
     the run is searched) and, unless --example-only, writes the coding development set's scored memories
     into it (as bench/fresh_paraphrase.py does);
  2. starts the vault server as the CLI does (`memdir serve`, this run's own servers folder) and lets it
     index the vault itself;
  3. adds each fresh memory through the server, the `memdir add` path (ops.Add over the server's API);
  4. waits until the server's health says no unit is left without its vector;
  5. asks each question through the server, the `memdir search` / search_memory path (ops.Search, the tool's
     defaults: no filter, default limit), and reads the ids and the relevance each result shows;
  6. stops the server, then ranks the same questions in-process (Searcher, default settings, the clock now, the
     vault's lifecycle schedule as the server reads it) to tell the server's path from the ranking itself.
Baselines see every memory of the vault as the server left it: plain all-MiniLM-L6-v2 cosine over
"title\\nbody" (the query embedded the way memdir embeds it), and Okapi BM25 over word tokens.

Shown relevance (item 4): for each question, the largest number of results in the top 10 that show the same
value (two decimals, as the tool prints it), and how often a result shown at a given relevance is the
wanted memory.

    python bench/served_fresh.py                 # checks the set's rules, then the table
    python bench/served_fresh.py --check         # only the rules (no model, no server)
    python bench/served_fresh.py --misses        # the questions memdir misses in its top 3
    python bench/served_fresh.py --example-only  # the example vault alone, as the outside measure had it
    python bench/served_fresh.py --set notes     # the third hold-out (bench/served_notes_set.py) instead
    python bench/served_fresh.py --set holdout   # the fourth (bench/served_holdout_set.py): never tuned on
    python bench/served_fresh.py --set holdout5  # the fifth (bench/served_holdout5_set.py): kept for checking
    python bench/served_fresh.py --set holdout6  # the sixth (bench/served_holdout6_set.py): a third unseen check
    python bench/served_fresh.py --set holdout7  # the seventh (bench/served_holdout7_set.py): books against notes
    python bench/served_fresh.py --set holdout8  # the eighth (bench/served_holdout8_set.py): the same, session 21
    python bench/served_fresh.py --set tune9     # notes against notes (bench/served_tune9_set.py): for tuning, session 22
    python bench/served_fresh.py --set holdout9  # the ninth (bench/served_holdout9_set.py): notes against notes, s22
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from coding import NOW as CODING_NOW, PlainBM25, build_vault, first_hit, plain_cosine, system_figures  # noqa: E402
from coding_set import MEMORIES as CODING_MEMORIES  # noqa: E402
from fresh_paraphrase import content_words  # noqa: E402
from served_fresh_set import FRESH, QUESTIONS  # noqa: E402
import served_holdout5_set  # noqa: E402
import served_holdout6_set  # noqa: E402
import served_holdout7_set  # noqa: E402
import served_holdout8_set  # noqa: E402
import served_holdout9_set  # noqa: E402
import served_holdout_set  # noqa: E402
import served_notes_set  # noqa: E402
import served_tune9_set  # noqa: E402
from vault.model import COLLECTIONS, TYPES  # noqa: E402

EXAMPLE_VAULT = REPO / ".memories-example"
SYSTEMS = ("memdir", "cosine", "bm25", "in-process", "in-process-vector")
RELEVANCE_BANDS = ((0.0, 0.40), (0.40, 0.55), (0.55, 1.01))
MEMDIR = [sys.executable, "-m", "mcp_server"]

# Each later set's module and the fewest memories it must hold (the first, "served", is this module's own import).
LATER_SETS = {"notes": (served_notes_set, 30), "holdout": (served_holdout_set, 40),
              "holdout5": (served_holdout5_set, 40), "holdout6": (served_holdout6_set, 40),
              "holdout7": (served_holdout7_set, 40), "holdout8": (served_holdout8_set, 40),
              "tune9": (served_tune9_set, 60), "holdout9": (served_holdout9_set, 40)}


def chosen_set(name: str) -> tuple[list, list, int]:
    """A set's memories, its questions and the fewest memories it must hold: "served" is
    bench/served_fresh_set.py (session 6), "notes" bench/served_notes_set.py (session 8, committed before tuning),
    "holdout" bench/served_holdout_set.py (session 10, committed before anything ran on it; never tuned on),
    "holdout5" bench/served_holdout5_set.py (session 10, the check for whoever tunes on the fourth), "holdout6"
    bench/served_holdout6_set.py (session 11, a third unseen check: the fourth and fifth disagreed against cosine),
    "holdout7" bench/served_holdout7_set.py (session 18, the check for tuning book sections against notes),
    "holdout8" bench/served_holdout8_set.py (session 21, the same check, written before that session's tuning),
    "tune9" bench/served_tune9_set.py (session 22, fresh notes beside older notes, not books: a set to tune on),
    "holdout9" bench/served_holdout9_set.py (session 22, notes against notes, written before that session's tuning)."""
    if name in LATER_SETS:
        module, minimum = LATER_SETS[name]
        return module.FRESH, module.QUESTIONS, minimum
    return FRESH, QUESTIONS, 40


def rule_violations(name: str = "served") -> list[str]:
    """Every way the set breaks its own rules; empty when it keeps them."""
    memories, questions, minimum = chosen_set(name)
    fresh = {m[0]: m for m in memories}
    problems = [] if len(memories) >= minimum else [f"only {len(memories)} fresh memories (at least {minimum})"]
    problems += [f"{m[0]}: no collection {m[1]!r} (one of {', '.join(COLLECTIONS)})" for m in memories
                 if m[1] not in COLLECTIONS]  # the server refuses it when the run adds it
    problems += [f"{m[0]}: no type {m[2]!r} (one of {', '.join(TYPES)})" for m in memories if m[2] not in TYPES]
    asked = Counter(key for _, wanted in questions for key in wanted)
    problems += [f"{key} is never asked for" for key in sorted(set(fresh) - set(asked))]
    problems += [f"{key} is asked for {n} times (once each)" for key, n in sorted(asked.items()) if n > 1]
    for text, wanted in questions:
        for key in wanted:
            _, _, _, title, body = fresh[key]
            shared = content_words(text) & content_words(f"{title}\n{body}")
            if shared:
                problems.append(f"{text[:60]!r} shares {sorted(shared)} with {key}")
    return problems


def prepare(root: Path, example_only: bool) -> None:
    """The older vault: the example vault with its own settings (user vault off), plus the coding set."""
    shutil.copytree(EXAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".memdir"))
    toml = root / "memdir.toml"
    text = toml.read_text()
    start = text.index("user_vault = ")
    toml.write_text(text[:start] + 'user_vault = ""' + text[text.index("  #", start):])
    if not example_only:
        build_vault(root, CODING_NOW, CODING_MEMORIES)


class Served:
    """The vault server as `memdir serve` runs it, in this run's own servers folder."""

    def __init__(self, root: Path, folder: Path) -> None:
        from mcp_server import client

        self.root, self.client = root, client
        os.environ["MEMDIR_SERVERS_DIR"] = str(folder)  # this run's own server, never the user's
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
        self.process = subprocess.Popen([*MEMDIR, "serve", "--vault", str(root)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 600
        while client.running() is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start; see {client.log_file()}")
            time.sleep(0.1)
        client.ensure(root, timeout=600)

    def run(self, request):  # noqa: ANN001, ANN201 - an ops.Op and its result, as the CLI's Remote runs it
        return request.result_of(self.client.call(self.root, request.op, request.wire()))

    def waiting_units(self) -> int:
        health = self.client.request(self.client.running(), "GET", "/api/health", vault=self.root)
        return int(health.get("unembedded", 0))

    def wait_for_vectors(self, timeout: float = 900) -> float:
        started = time.monotonic()
        while self.waiting_units():
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"{self.waiting_units()} units still without vectors after {timeout:.0f} s")
            time.sleep(0.5)
        return time.monotonic() - started

    def stop(self) -> None:
        from mcp_server.embedding import host as embed_host

        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=120)
        host = embed_host.running()  # this run's own host, in this run's folder: nothing else would end it
        if host is not None:
            os.kill(host.pid, signal.SIGTERM)


def plateau(shown: list[float | None], low: float = 0.0, high: float = 1.0) -> int:
    """The largest number of results that show one and the same relevance (as printed, two decimals), counting
    values from `low` to `high` (bench/calibration.py counts 0.10-0.99: the outside measure's eight at 0.551)."""
    values = Counter(v for v in (round(v, 2) for v in shown if v is not None) if low <= v <= high)
    return max(values.values(), default=0)


def reliability(rows: list[dict]) -> dict:
    """Per band of shown relevance: how many results showed it and the share that was the wanted memory;
    the same for the first result alone."""
    def bands(pairs: list[tuple[float, bool]]) -> dict:
        out = {}
        for low, high in RELEVANCE_BANDS:
            inside = [right for value, right in pairs if low <= value < high]
            out[f"{low:.2f}-{min(high, 1):.2f}"] = {"shown": len(inside),
                                                    "right": round(statistics.fmean(inside), 3) if inside else None}
        return out

    every, first = [], []
    for r in rows:
        for rank, (memory_id, value) in enumerate(zip(r["ranked"]["memdir"], r["shown"])):
            if value is None:
                continue
            every.append((value, memory_id in r["wanted"]))
            if rank == 0:
                first.append((value, memory_id in r["wanted"]))
    return {"every result": bands(every), "first result": bands(first)}


def evaluate(embedder_name: str, cache: Path, example_only: bool, name: str = "served") -> tuple[dict, list[dict]]:
    from indexer.embed import CachedEmbedder, make_embedder
    from indexer.index import Index
    from indexer.search import SearchRequest, Searcher
    from locomo import search_settings
    from mcp_server.service import operations as ops
    from mcp_server.config import load_config
    from vault import Vault

    fresh_memories, questions, _ = chosen_set(name)
    embedder = CachedEmbedder(make_embedder(embedder_name), cache)
    rows: list[dict] = []
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="memdir-served-fresh-") as tmp:
        root = Path(tmp) / "vault"
        prepare(root, example_only)
        started = time.monotonic()
        served = Served(root, Path(tmp) / "servers")
        try:
            timings["open_s"] = time.monotonic() - started
            ids = {}
            for key, collection, kind, title, body in fresh_memories:
                added = served.run(ops.Add(content=body, title=title, type=kind, collection=collection))
                ids[key] = added.memory.id
            timings["vectors_wait_s"] = served.wait_for_vectors()
            answers = {}
            for text, _ in questions:
                found = served.run(ops.Search(query=text))
                answers[text] = [(hit.id, hit.relevance) for hit in found.results]
        finally:
            served.stop()
        memories = Vault(root).scan().memories
        texts = {m.id: f"{m.title}\n{m.body}" for m in memories}
        every = set(texts)
        vectors = dict(zip(texts, embedder.embed(list(texts.values()))))
        bm25 = PlainBM25(texts)
        index = Index.open(Vault(root), embedder)
        # As the server reads (mcp_server/service/app.py): with the vault's lifecycle schedule off (the example vault's
        # `every = "off"`), what the next run would remove is still listed. LifecycleSettings() here hid the example
        # vault's old working notes and the coding set's working memories, which the server lists (issue 26, session 9).
        lifecycle = load_config(root).lifecycle
        searcher = Searcher(index, search_settings([]), lifecycle=lifecycle if lifecycle.every_seconds else None)
        now = datetime.now(timezone.utc)
        try:
            for text, wanted in questions:
                embedder.forget_queries()
                request = SearchRequest(query=text, limit=10, now=now)
                ranked = {"memdir": [memory_id for memory_id, _ in answers[text]],
                          "cosine": plain_cosine(vectors, embedder.embed_query(text), every),
                          "bm25": bm25.rank(text, every),
                          "in-process": [h.memory.id for h in searcher.search(request)],
                          "in-process-vector": [h.memory.id for h in searcher.search(
                              SearchRequest(query=text, limit=10, now=now, mode="vector"))]}
                rows.append({"question": text, "wanted": [ids[k] for k in wanted], "keys": list(wanted),
                             "ranked": ranked, "shown": [value for _, value in answers[text]]})
        finally:
            index.close()
    plateaus = [plateau(r["shown"]) for r in rows]
    middle = [plateau(r["shown"], 0.10, 0.99) for r in rows]
    result = {"questions": len(rows), "memories": len(texts), "fresh": len(fresh_memories),
              **{system: system_figures(rows, system) for system in SYSTEMS},
              "plateau": {"median": statistics.median(plateaus), "max": max(plateaus),
                          "questions with 3+ equal": sum(p >= 3 for p in plateaus),
                          "questions with 3+ equal at 0.10-0.99": sum(p >= 3 for p in middle)},
              "reliability": reliability(rows), "timings_s": {k: round(v, 1) for k, v in timings.items()}}
    return result, rows


def table(result: dict) -> str:
    lines = [f"{result['memories']} memories ({result['fresh']} fresh, added through the server), "
             f"{result['questions']} questions asked through the server",
             f"{'':10}" + "".join(f"{s:>19}" for s in SYSTEMS)]
    for metric in ("hit@1", "hit@3", "mrr@10"):
        lines.append(f"{metric:10}" + "".join(f"{result[s][metric]:19.3f}" for s in SYSTEMS))
    p = result["plateau"]
    lines.append(f"shown relevance: equal values in a top 10, median {p['median']}, max {p['max']}, "
                 f"questions with 3+ equal {p['questions with 3+ equal']} (at 0.10-0.99: "
                 f"{p['questions with 3+ equal at 0.10-0.99']})")
    for which, bands in result["reliability"].items():
        cells = "  ".join(f"{band}: {v['right'] if v['right'] is not None else '-'} of {v['shown']}"
                          for band, v in bands.items())
        lines.append(f"right when shown at ({which}): {cells}")
    lines.append(f"timings: {result['timings_s']}")
    return "\n".join(lines)


def misses(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        rank = first_hit(r["wanted"], r["ranked"]["memdir"])
        if rank is not None and rank <= 3:
            continue
        others = {s: first_hit(r["wanted"], r["ranked"][s]) for s in SYSTEMS[1:]}
        lines.append(f"{r['keys'][0]} memdir {rank}  " + "  ".join(f"{s} {v}" for s, v in others.items())
                     + f"  {r['question']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite",
                        help="embedding cache for the baselines and the in-process ranking (documents only)")
    parser.add_argument("--example-only", action="store_true", help="no coding set: the example vault alone")
    parser.add_argument("--set", dest="name", choices=("served", *LATER_SETS),
                        default="served",
                        help="served: bench/served_fresh_set.py (48); notes: bench/served_notes_set.py (36, the third "
                             "hold-out, written before session 8 tuned anything); holdout: bench/served_holdout_set.py "
                             "(44, the fourth, for checking ranking changes for overfitting); holdout5: "
                             "bench/served_holdout5_set.py (40, the fifth, the check once the fourth is tuned on); holdout6: "
                             "bench/served_holdout6_set.py (58, the sixth, a third check nobody tunes on); holdout7: "
                             "bench/served_holdout7_set.py (44, the seventh, the check for book-section tuning); "
                             "holdout8: bench/served_holdout8_set.py (44, the eighth, the same check, session 21); tune9: "
                             "bench/served_tune9_set.py (65 notes beside older notes, session 22: for tuning); "
                             "holdout9: bench/served_holdout9_set.py (50, the ninth, notes against notes, session 22)")
    parser.add_argument("--check", action="store_true", help="only check the set's rules")
    parser.add_argument("--misses", action="store_true", help="list the questions memdir misses in its top 3")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    problems = rule_violations(args.name)
    if problems:
        sys.exit("the set breaks its rules:\n" + "\n".join(problems))
    if args.check:
        memories, questions, _ = chosen_set(args.name)
        print(f"ok: {len(memories)} fresh memories, {len(questions)} questions, no shared content word")
        return
    result, rows = evaluate(args.embedder, args.cache, args.example_only, args.name)
    print(json.dumps(result, indent=2) if args.json else table(result))
    if args.misses:
        print(misses(rows))


if __name__ == "__main__":
    main()
