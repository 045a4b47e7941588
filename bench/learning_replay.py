"""Outcome learning, replayed: many learners and many seeds in seconds instead of hours.

`bench/learning.py` runs memdir's real search and scoring path for every round, which takes a
minute per seed. Outcomes move only the quality factor, never what a question retrieves or how
relevant each memory is, so one recording run captures, for every round and question, each
candidate's relevance-derived `order` and its recency bonus (no learning, no noise, no human
edits). The replay then re-ranks those candidates with a learner's factor, corrupts outcomes with
the same noise models and seeded generators as the real bench, and reports the same figures.

It is a screen, not the measurement: a learner worth keeping is re-measured with
`bench/learning.py`, whose figures are the ones quoted.

    python bench/learning_replay.py --record            # once (a real run, ~1 minute)
    python bench/learning_replay.py --noise 0.2 --noise-kind flip --seeds 20
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import learning  # noqa: E402
from indexer.ranking import QualityFn, recency_bonus  # noqa: E402
from indexer.settings import SearchSettings  # noqa: E402
from vault.scoring import SUCCESS_CREDIT  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "memdir-learning-replay.json"


def record(rounds: int, embedder_name: str, path: Path) -> None:
    """Run the real bench once without learning and keep every candidate's order and recency bonus."""
    from indexer.curator import Curator
    from indexer.embed import make_embedder
    from indexer.index import Index
    from indexer.search import SearchRequest, Searcher
    from vault import Vault
    from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

    captured: list[dict] = []
    original = Searcher._rank

    def rank(self, candidates, allowed, request, now, named=None):  # noqa: ANN001
        hits = original(self, candidates, allowed, request, now, named)
        bonus = {h.memory.id: h.relevance * recency_bonus(h.memory, now, self.settings.recency) for h in hits}
        captured.append({h.memory.id: [h.final - bonus[h.memory.id], bonus[h.memory.id]] for h in hits})
        return hits

    Searcher._rank = rank
    with tempfile.TemporaryDirectory(prefix="memdir-replay-") as tmp:
        root = Path(tmp) / "vault"
        roles, helpful, new_texts = learning.build(root, embedder_name)
        index = Index.open(Vault(root), make_embedder(embedder_name))
        searcher = Searcher(index, SearchSettings(embedder=embedder_name), learning.no_learning)
        curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
        start = {m: _state(index.get(m)) for m in roles}
        questions = list(helpful)
        table: list[dict] = []
        arrivals: dict[str, str] = {}
        for round_number in range(1, rounds + 1):
            now = learning.START + timedelta(hours=round_number)
            if round_number == 2:
                for question, text in new_texts.items():
                    memory = curator.record_response(text, "worked", now=now, title=text[:60])
                    arrivals[memory.id] = question
                    start[memory.id] = _state(memory)
            per_question = {}
            for question in questions:
                captured.clear()
                searcher.search(SearchRequest(query=question, limit=learning.TOP, now=now))
                per_question[question] = captured[-1]
            table.append(per_question)
        index.close()
    Searcher._rank = original
    path.write_text(json.dumps({"roles": roles, "helpful": {q: sorted(ids) for q, ids in helpful.items()},
                                "arrivals": arrivals, "start": start, "rounds": table}))


def _state(memory) -> dict:  # noqa: ANN001
    return {"collection": memory.collection, "uses": memory.uses, "success_count": memory.success_count,
            "outcomes": list(memory.outcomes), "importance": memory.importance, "confidence": memory.confidence}


@dataclass
class Record:
    """What the learner reads of a memory: the fields `QualityModel` uses."""

    collection: str
    uses: int
    success_count: float
    outcomes: list[str] = field(default_factory=list)
    importance: float | None = None
    confidence: float | None = None

    def score(self, outcome: str) -> None:
        if outcome in SUCCESS_CREDIT:
            self.uses += 1
            self.success_count += SUCCESS_CREDIT[outcome]
            self.outcomes = (self.outcomes + [outcome])[-20:]


Factor = Callable[[Record], float]


def model_factor(model: QualityFn) -> Factor:
    return lambda record: model(record, learning.START)  # type: ignore[arg-type]


def replay(data: dict, factor: Factor, seed: int, noise: float, kind: str) -> dict:
    """One seed of bench/learning.py's loop over the recorded candidates."""
    noise_rng = random.Random(f"noise-{seed}")
    roles = dict(data["roles"])
    helpful = {q: set(ids) for q, ids in data["helpful"].items()}
    records = {m: Record(**s) for m, s in data["start"].items() if m in roles}
    rounds = len(data["rounds"])
    misleading_out: dict[str, int | None] = {m: None for m, r in roles.items() if r == "misleading"}
    seen: set[str] = set()
    new_in: dict[str, int | None] = {}
    precision = []

    def top(candidates: dict[str, list[float]]) -> list[str]:
        # As memdir's searcher ranks: order times the quality factor, plus the recency bonus.
        final = {m: order * factor(records[m]) + bonus for m, (order, bonus) in candidates.items() if m in records}
        return [m for m, _ in sorted(final.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:learning.TOP]]

    for round_number, table in enumerate(data["rounds"], start=1):
        if round_number == 2:
            for memory_id, question in data["arrivals"].items():
                roles[memory_id] = "helpful"
                helpful[question].add(memory_id)
                records[memory_id] = Record(**data["start"][memory_id])
                new_in[memory_id] = None
        shown_total = helpful_total = 0
        for question, candidates in table.items():
            shown = top(candidates)
            shown_total += len(shown)
            helpful_total += sum(1 for m in shown if m in helpful[question])
            for m in shown:
                if m in new_in and new_in[m] is None:
                    new_in[m] = round_number - 2
            truth = {m: "worked" if m in helpful[question] else "failed" if roles[m] == "misleading" else "unknown"
                     for m in shown}
            seen.update(m for m in shown if roles[m] == "misleading")
            for m, outcome in learning.corrupt(truth, roles, kind, noise, noise_rng).items():
                records[m].score(outcome)
        for m in misleading_out:
            if misleading_out[m] is None and m in seen and not any(m in top(c) for c in table.values()):
                misleading_out[m] = round_number
        precision.append(round(helpful_total / shown_total, 3) if shown_total else 0.0)
    never = rounds + 1
    return {"rounds_to_drop_misleading": max(r if r is not None else never for m, r in misleading_out.items() if m in seen),
            "rounds_to_surface_helpful": max((r if r is not None else never) for r in new_in.values()) if new_in else 0,
            "precision_at_4": precision}


def summary(data: dict, factor: Factor, seeds: range, noise: float, kind: str) -> dict:
    runs = [replay(data, factor, s, noise, kind) for s in seeds]
    leave = [r["rounds_to_drop_misleading"] for r in runs]
    enter = [r["rounds_to_surface_helpful"] for r in runs]
    p5 = [r["precision_at_4"][4] for r in runs]
    p8 = [r["precision_at_4"][-1] for r in runs]
    return {"leave": (statistics.median(leave), max(leave)), "enter": (statistics.median(enter), max(enter)),
            "p5": (statistics.median(p5), min(p5)), "p8": (statistics.median(p8), min(p8)),
            "p5_mean": round(statistics.mean(p5), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--noise-kind", choices=learning.NOISE_KINDS, default="flip")
    parser.add_argument("--models", default="previous,default", help=f"comma-separated, from: {', '.join(learning.MODELS)}")
    args = parser.parse_args()
    if args.record or not args.cache.exists():
        record(args.rounds, args.embedder, args.cache)
    data = json.loads(args.cache.read_text())
    seeds = range(args.seed, args.seed + args.seeds)
    result = {}
    for name in args.models.split(","):
        factor = model_factor(learning.MODELS[name])
        result[name] = {"no_noise": summary(data, factor, range(args.seed, args.seed + 1), 0.0, "flip"),
                        args.noise_kind: summary(data, factor, seeds, args.noise, args.noise_kind)}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
