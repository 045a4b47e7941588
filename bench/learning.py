"""Outcome learning, simulated: do misleading memories leave and new helpful ones arrive?

A generated vault holds, for each of several recurring questions, helpful memories, a
misleading memory that used to be right (8 uses, mostly worked), a fresh misleading one,
distractors, and a new helpful memory that is added after the first round. Each round asks
every question through memdir's search (top 4, as the hook injects), then scores what was
shown according to the ground truth (helpful → worked, misleading → failed, the rest →
unknown) through memdir's own scoring path, while a simulated human edits memory bodies at
the same time.

The model's real scores are noisy, so `--noise P` corrupts the ground-truth outcomes before
they are recorded (seeded, separately from the human editor), in one of three ways:

- `flip`: each worked/failed is flipped with probability P;
- `blame`: when a misleading memory is shown with helpful ones, with probability P its
  failure is pinned on one of those helpful memories instead (the realistic error);
- `praise`: each memory that did not help is called "worked" with probability P (a half-fit
  reported as a success).

`--seeds N` runs N seeds and reports each figure's median and worst next to the noise-free
run; `--models` compares quality models (`none` is no learning at all).

`--cite POLICY` simulates the signal the answer itself gives (issue 17, item 3): each shown
memory is cited in the answer (its `[id:]` or its text repeated) with a probability set by what
it really was (`--cite-rates helpful,misleading,other`, default 0.7,0.5,0.05: a model cites what
it used, and a misleading memory that misled the answer was used too), and the reported outcomes
are filtered by it before they are recorded: `gate-failed` drops a `failed` on a memory the
answer did not use (it cannot have misled it), `gate-worked` drops a `worked` on one it did not
use, `gate` drops both. Measured in bench/results/trust.md; none of them is kept in memdir.

    python bench/learning.py --json
    python bench/learning.py --noise 0.2 --noise-kind flip --seeds 5 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from beta_learner import BetaDecayLearner  # noqa: E402
from indexer.curator import Curator  # noqa: E402
from indexer.embed import make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from indexer.learner import QualityModel  # noqa: E402
from indexer.ranking import QualityFn  # noqa: E402
from indexer.search import SearchRequest, Searcher  # noqa: E402
from indexer.settings import SearchSettings  # noqa: E402
from vault import Vault, init_vault  # noqa: E402
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings  # noqa: E402

TOP = 4
START = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Topic:
    question: str
    helpful: tuple[str, ...]
    stale: str  # was right for a long time, misleading now
    wrong: str  # misleading from the start
    new: str  # the helpful memory that arrives after round 1


TOPICS = [
    Topic("How should database migrations run when we deploy?",
          ("Database migrations run in the Fly release command with lock_timeout set to 5 seconds.",
           "Deploys run Alembic migrations before the new machines start; a failed migration stops the deploy.",
           "Every database migration must be backwards compatible with the running release during deploys."),
          "Database migrations are run by hand with alembic upgrade on the production box after each deploy.",
          "Deploys skip database migrations; the app migrates its own schema when it starts.",
          "Since the November change, deploy migrations run as a release_command with a 10 minute timeout."),
    Topic("Which lock stops two workers importing the same statement?",
          ("Statement imports take a Postgres advisory transaction lock keyed by account and file hash.",
           "Two workers cannot import one statement: pg_try_advisory_xact_lock guards each import.",
           "A unique index on statement lines backs up the import lock so duplicates cannot be inserted."),
          "Statement imports are locked with a Redis SET NX key that expires after 60 seconds.",
          "Workers importing the same statement are fine; imports need no lock at all.",
          "The import lock is pg_try_advisory_xact_lock(hashtextextended(key, 0)) with an import: prefix."),
    Topic("How do we make Celery tasks safe to retry?",
          ("Celery tasks must be idempotent before retries are added: check for the existing row first.",
           "Retrying a Celery task is safe only when it upserts by a natural key instead of inserting blindly.",
           "Celery tasks run with acks_late, so every task can run twice and must tolerate it."),
          "Celery tasks are retried with acks_late off, which prevents any duplicate execution.",
          "Celery retries never run a task twice, so tasks do not need to be idempotent.",
          "Make each Celery task idempotent with an idempotency key column before enabling autoretry_for."),
    Topic("What timezone do bank statement booking dates use?",
          ("Bank statement booking dates are plain dates in the bank's local calendar; never convert them to UTC.",
           "Parse statement booking dates as date objects, not datetimes, so no timezone shift can happen.",
           "A timezone conversion of booking dates once moved month-end transactions into the next month."),
          "Bank statement booking dates are UTC timestamps and are converted to Europe/London on import.",
          "Booking dates on statements are in the user's browser timezone.",
          "Statement booking dates are calendar dates: store them in a date column without any timezone."),
    Topic("How are money amounts stored in the ledger?",
          ("Money is a Decimal in Python and numeric(18,4) in Postgres; floats are never used for amounts.",
           "Ledger amounts are stored as numeric(18,4) with a separate currency code column.",
           "Rounding of ledger money amounts happens once, at posting time, with ROUND_HALF_EVEN."),
          "Ledger amounts are stored as float64 cents in a double precision column.",
          "Money is stored as a string in the ledger and parsed when displayed.",
          "Amounts in the ledger use Python Decimal end to end and Postgres numeric, never binary floats."),
    Topic("Which Python version does the deploy image support?",
          ("The deploy image pins Python 3.11; do not use 3.12-only syntax.",
           "tidewater targets Python 3.11 because the Fly deploy image is built on python:3.11-slim.",
           "CI runs the test suite on Python 3.11 only, the same version as the deploy image."),
          "The deploy image runs Python 3.12, so the new generic syntax is allowed.",
          "Any Python version from 3.8 works in the deploy image.",
          "requires-python is >=3.11,<3.12 to match the deploy image's Python 3.11."),
]

DISTRACTORS = [
    "Dana prefers squash merges for feature branches.", "The runbook lists fly status and fly logs as first steps.",
    "ECB reference rates are fetched daily at 16:00 CET.", "ruff selects the E, F, I and UP rule sets.",
    "PR reviews happen in the morning before standup.", "The staging app is called tidewater-staging.",
    "Sentry DSN is configured for every process group.", "Object storage keeps statement files keyed by SHA-256.",
    "uv run is used for every project tool.", "Celery beat must run as exactly one process.",
    "The FX revaluation job runs at month end.", "Never force-push to the main branch.",
]


@dataclass
class Expected:
    uses: int = 0


def build(root: Path, embedder_name: str) -> tuple[dict[str, str], dict[str, set[str]], dict[str, str]]:
    """Write the vault; returns memory id → role, question → helpful ids, question → new memory text."""
    init_vault(root, f'[search]\nembedder = "{embedder_name}"\n')
    vault = Vault(root)
    roles: dict[str, str] = {}
    helpful: dict[str, set[str]] = {}
    counter = iter(range(10_000))

    def write(text: str, role: str, **extra: object) -> str:
        memory_id = f"m-{next(counter):08x}"
        fields = {"id": memory_id, "collection": "history", "type": "learning", "title": text[:60],
                  "created_at": START - timedelta(days=2), "score": 0.5, "uses": 0, "success_count": 0.0}
        fields.update(extra)
        vault.writer.create(f"history/{memory_id}.md", fields, text)
        roles[memory_id] = role
        return memory_id

    for topic in TOPICS:
        helpful[topic.question] = {write(text, "helpful") for text in topic.helpful}
        write(topic.stale, "misleading", score=0.85, uses=8, success_count=7.0,
              outcomes=["worked"] * 6 + ["partial", "worked"], created_at=START - timedelta(days=20))
        write(topic.wrong, "misleading")
    for text in DISTRACTORS:
        write(text, "distractor")
    return roles, helpful, {t.question: t.new for t in TOPICS}


NOISE_KINDS = ("flip", "blame", "praise")
FLIPPED = {"worked": "failed", "failed": "worked"}


def no_learning(memory: object, now: datetime) -> float:
    """Outcomes never move the ranking: the baseline learning has to beat."""
    return 1.0


MODELS: dict[str, QualityFn] = {
    "none": no_learning,
    "default": QualityModel(),
    "previous": BetaDecayLearner(),  # memdir's learner until wave 2 session 5, the measured baseline
}


def corrupt(outcomes: dict[str, str], roles: dict[str, str], kind: str, p: float,
            rng: random.Random) -> dict[str, str]:
    """What a fallible scorer reports for the ground-truth `outcomes` (see the module docstring)."""
    if p <= 0:
        return outcomes
    noisy = dict(outcomes)
    if kind == "flip":
        for memory_id, outcome in outcomes.items():
            if outcome in FLIPPED and rng.random() < p:
                noisy[memory_id] = FLIPPED[outcome]
    elif kind == "blame":
        helpful = sorted(m for m, o in outcomes.items() if o == "worked")
        for memory_id, outcome in outcomes.items():
            if roles[memory_id] == "misleading" and helpful and rng.random() < p:
                noisy[memory_id] = "unknown"
                noisy[rng.choice(helpful)] = "failed"
    elif kind == "praise":
        for memory_id, outcome in outcomes.items():
            if outcome != "worked" and rng.random() < p:
                noisy[memory_id] = "worked"
    else:
        raise ValueError(f"unknown noise kind {kind!r}; expected one of: {', '.join(NOISE_KINDS)}")
    return noisy


CITE_POLICIES = {"gate-failed": ("failed",), "gate-worked": ("worked",), "gate": ("worked", "failed")}


def cited_only(reported: dict[str, str], truth: dict[str, str], policy: str, rates: tuple[float, float, float],
               rng: random.Random) -> dict[str, str]:
    """The reported outcomes, less those `policy` drops for memories the simulated answer did not cite."""
    gated = CITE_POLICIES[policy]
    kept = {}
    for memory_id, outcome in reported.items():
        rate = rates[0] if truth[memory_id] == "worked" else rates[1] if truth[memory_id] == "failed" else rates[2]
        cited = rng.random() < rate
        kept[memory_id] = "unknown" if outcome in gated and not cited else outcome
    return kept


def simulate(rounds: int, embedder_name: str, seed: int, noise: float = 0.0, noise_kind: str = "flip",
             quality: QualityFn | None = None, cite: str | None = None,
             cite_rates: tuple[float, float, float] = (0.7, 0.5, 0.05)) -> dict:
    rng = random.Random(seed)
    noise_rng = random.Random(f"noise-{seed}")
    cite_rng = random.Random(f"cite-{seed}")
    with tempfile.TemporaryDirectory(prefix="memdir-learning-") as tmp:
        root = Path(tmp) / "vault"
        roles, helpful, new_texts = build(root, embedder_name)
        index = Index.open(Vault(root), make_embedder(embedder_name))
        settings = SearchSettings(embedder=embedder_name)
        searcher = Searcher(index, settings, quality)
        curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
        expected = {memory_id: Expected(index.get(memory_id).uses) for memory_id in roles}
        misleading_out: dict[str, int | None] = {m: None for m, r in roles.items() if r == "misleading"}
        misleading_seen: set[str] = set()
        new_in: dict[str, int | None] = {}
        precision: list[float] = []
        stale_saves: list[str] = []
        for round_number in range(1, rounds + 1):
            now = START + timedelta(hours=round_number)
            if round_number == 2:  # new helpful memories arrive after the first round
                for question, text in new_texts.items():
                    memory = curator.record_response(text, "worked", now=now, title=text[:60])
                    roles[memory.id] = "helpful"
                    helpful[question].add(memory.id)
                    expected[memory.id] = Expected(0)
                    new_in[memory.id] = None
            shown_total, helpful_total = 0, 0
            for question in helpful:
                hits = searcher.search(SearchRequest(query=question, limit=TOP, now=now))
                shown = [h.memory.id for h in hits]
                shown_total += len(shown)
                helpful_total += sum(1 for m in shown if m in helpful[question])
                for memory_id in shown:
                    if memory_id in new_in and new_in[memory_id] is None:
                        new_in[memory_id] = round_number - 2
                outcomes = {m: "worked" if m in helpful[question] else "failed" if roles[m] == "misleading"
                            else "unknown" for m in shown}
                for m in outcomes:
                    if roles[m] == "misleading":
                        misleading_seen.add(m)
                human = HumanEditor(root, rng, [m for m in shown if roles[m] == "helpful"], index)
                human.start()
                reported = corrupt(outcomes, roles, noise_kind, noise, noise_rng)
                if cite:
                    reported = cited_only(reported, outcomes, cite, cite_rates, cite_rng)
                scored = curator.score(reported, now=now)
                human.join()
                stale_saves += human.stale_saves
                for result in scored:  # the curator's own account of each write; the files must agree
                    if "uses" in result.changes:
                        expected[result.id].uses += 1
            for memory_id in misleading_out:
                still_shown = any(memory_id in [h.memory.id for h in searcher.search(
                    SearchRequest(query=q, limit=TOP, now=now))] for q in helpful)
                if misleading_out[memory_id] is None and memory_id in misleading_seen and not still_shown:
                    misleading_out[memory_id] = round_number
            precision.append(round(helpful_total / shown_total, 3) if shown_total else 0.0)
        index.sync()
        deficit = {memory_id: e.uses - index.get(memory_id).uses for memory_id, e in expected.items()}
        lost = sum(1 for d in deficit.values() if d)
        lost_to_stale_saves = sum(1 for m, d in deficit.items() if d and d == stale_saves.count(m))
        human_edits_kept = HumanEditor.kept(root)
        index.close()
    never = rounds + 1
    return {
        "rounds_to_drop_misleading": max((r if r is not None else never) for m, r in misleading_out.items()
                                         if m in misleading_seen) if misleading_seen else 0,
        "rounds_to_surface_helpful": max((r if r is not None else never) for r in new_in.values()) if new_in else 0,
        "precision_at_4": precision,
        "lost_updates": lost,
        "lost_to_stale_saves": lost_to_stale_saves,  # lost updates a save from an older copy explains, one for one
        "human_edits_kept": human_edits_kept,
        "misleading_memories_shown": len(misleading_seen),
        "new_helpful_memories": len(new_in),
        "rounds": rounds,
    }


class HumanEditor(threading.Thread):
    """Appends a line to the bodies of some shown memories while they are being scored.

    It saves as many editors do: truncate and write in place, without a lock and without looking
    whether the file changed since it was read. `stale_saves` names the memories whose save was made
    from a copy memdir had replaced in between (memdir writes by renaming a new file into place, so
    the file saved into is then not the one read); each such save drops the counters of that write.
    """

    MARK = "Edited by a human while memdir was scoring."

    def __init__(self, root: Path, rng: random.Random, candidates: list[str], index: Index) -> None:
        super().__init__(daemon=True)
        self.paths = {m: root / index.get(m).path for m in candidates if rng.random() < 0.5}
        self.stale_saves: list[str] = []

    def run(self) -> None:
        for memory_id, path in self.paths.items():
            with path.open() as buffer:
                read_from = os.fstat(buffer.fileno()).st_ino
                text = buffer.read()
            if self.MARK not in text:
                with path.open("w") as saving:  # what path.write_text does
                    if os.fstat(saving.fileno()).st_ino != read_from:
                        self.stale_saves.append(memory_id)
                    saving.write(text.rstrip("\n") + f"\n\n{self.MARK}\n")

    @classmethod
    def kept(cls, root: Path) -> int:
        return sum(1 for p in root.rglob("*.md") if ".memdir" not in p.parts and cls.MARK in p.read_text())


def summarise(runs: list[dict], rounds: int) -> dict:
    """Median and worst over seeds of each figure; precision is read at round 5 and the last round."""
    def figure(values: list[float], worst: str) -> dict:
        return {"median": statistics.median(values), "worst": max(values) if worst == "max" else min(values)}

    at5 = min(5, rounds) - 1
    return {
        "rounds_to_drop_misleading": figure([r["rounds_to_drop_misleading"] for r in runs], "max"),
        "rounds_to_surface_helpful": figure([r["rounds_to_surface_helpful"] for r in runs], "max"),
        f"precision_at_4_round_{at5 + 1}": figure([r["precision_at_4"][at5] for r in runs], "min"),
        f"precision_at_4_round_{rounds}": figure([r["precision_at_4"][-1] for r in runs], "min"),
        "lost_updates": max(r["lost_updates"] for r in runs),
        "lost_updates_not_stale_saves": max(r["lost_updates"] - r["lost_to_stale_saves"] for r in runs),
        "lost_to_stale_saves_all_seeds": sum(r["lost_to_stale_saves"] for r in runs),
        "seeds": len(runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--seed", type=int, default=1, help="first seed; --seeds N runs seed .. seed+N-1")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--noise", type=float, default=0.0, help="probability that one outcome is misreported")
    parser.add_argument("--noise-kind", choices=NOISE_KINDS, default="flip")
    parser.add_argument("--models", default="default", help=f"comma-separated, from: {', '.join(MODELS)}")
    parser.add_argument("--cite", choices=CITE_POLICIES, help="filter reported outcomes by a simulated citation signal")
    parser.add_argument("--cite-rates", default="0.7,0.5,0.05",
                        help="probability that the answer cites a helpful, a misleading and any other shown memory")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    models = args.models.split(",")
    for name in models:
        if name not in MODELS:
            parser.error(f"unknown model {name!r}; expected one of: {', '.join(MODELS)}")
    rates = tuple(float(r) for r in args.cite_rates.split(","))
    if len(rates) != 3:
        parser.error("--cite-rates takes three probabilities: helpful,misleading,other")
    cite = {"cite": args.cite, "cite_rates": rates}
    if args.seeds == 1 and args.noise == 0 and models == ["default"] and not args.cite:  # the original single run
        result: dict = simulate(args.rounds, args.embedder, args.seed)
        print(json.dumps(result, indent=2) if args.json else result)
        return
    seeds = range(args.seed, args.seed + args.seeds)
    result = {"noise": args.noise, "noise_kind": args.noise_kind, "cite": args.cite, "cite_rates": list(rates)}
    for name in models:
        clean = simulate(args.rounds, args.embedder, args.seed, quality=MODELS[name], **cite)
        noisy = [simulate(args.rounds, args.embedder, seed, args.noise, args.noise_kind, MODELS[name], **cite)
                 for seed in seeds] if args.noise > 0 else [clean]
        result[name] = {"no_noise": summarise([clean], args.rounds), "noisy": summarise(noisy, args.rounds)}
    print(json.dumps(result, indent=2) if args.json else result)


if __name__ == "__main__":
    main()
