"""Does the lifecycle trash helpful memories when scores are wrong part of the time?

A history memory's truth is fixed (helpful: every honest score is `worked`; misleading: `failed`);
each score is flipped with probability `--noise`. Scores go through memdir's own counter math
(`vault.scoring.outcome_updates`) and after each one the lifecycle decides (`vault.lifecycle.plan`),
one use an hour, for 8 and for `--uses` uses; only removals for a low score are counted. Reported per
`[lifecycle] remove_after_failures` value, beside the rule before wave 2 session 5 (a score below
`remove_below` removed the memory at once): the share of memories removed and the median use at
which they were. A takeaway recorded as worked starts as memdir writes it (`initial_counters`).

    python bench/lifecycle_noise.py
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vault.lifecycle import plan  # noqa: E402
from vault.model import Memory  # noqa: E402
from vault.scoring import COUNTER_KEYS, initial_counters, outcome_updates  # noqa: E402
from vault.settings import LifecycleSettings, ScoringSettings  # noqa: E402

START = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
FLIPPED = {"worked": "failed", "failed": "worked"}


def removed_at(truth: str, recorded: str | None, noise: float, uses: int, lifecycle: LifecycleSettings | None,
               seed: int) -> int | None:
    """The use after which the lifecycle removed the memory for its score, or None if it survived.
    `lifecycle` None is the rule before: a score below remove_below is enough."""
    rng = random.Random(seed)
    scoring = ScoringSettings()
    counters = initial_counters(recorded, scoring)
    memory = Memory(id="m-00000001", path="history/m.md", collection="history", type="learning", title="t",
                    body="b", created_at=START, score=counters["score"], outcomes=tuple(counters.get("outcomes", ())))
    settings = lifecycle or LifecycleSettings()
    for use in range(1, uses + 1):
        now = START + timedelta(hours=use)
        outcome = FLIPPED[truth] if rng.random() < noise else truth
        memory = replace(memory, **{k: v for k, v in outcome_updates(memory, outcome, now, scoring).items()
                                    if k in COUNTER_KEYS})
        if lifecycle is None:
            if memory.score < settings.remove_below:
                return use
            continue
        if any(d.action == "remove" and d.why.startswith("score") for d in plan([memory], now, lifecycle)):
            return use
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--uses", type=int, default=100, help="the longer horizon (the shorter one is 8 uses)")
    parser.add_argument("--memories", type=int, default=2000, help="simulated memories per cell")
    args = parser.parse_args()
    cases = [("helpful, new", "worked", None), ("helpful, recorded as worked", "worked", "worked"),
             ("misleading, new", "failed", None)]
    rules: list[tuple[str, LifecycleSettings | None]] = [("before: score alone", None)]
    rules += [(f"remove_after_failures = {n}", LifecycleSettings(remove_after_failures=n)) for n in (2, 3, 4)]
    print(f"noise {args.noise}, {args.memories} memories per cell: share removed for a low score (median use)")
    header = "".join(f"  {name + f', {uses} uses':>36}" for uses in (8, args.uses) for name, _, _ in cases)
    print(f"{'rule':>26}{header}")
    for label, lifecycle in rules:
        cells = []
        for uses in (8, args.uses):
            for _, truth, recorded in cases:
                runs = [removed_at(truth, recorded, args.noise, uses, lifecycle, seed) for seed in range(args.memories)]
                hit = [r for r in runs if r is not None]
                median = f"{statistics.median(hit):.0f}" if hit else "-"
                cells.append(f"{len(hit) / len(runs):.3f} ({median})")
        print(f"{label:>26}" + "".join(f"  {cell:>36}" for cell in cells))


if __name__ == "__main__":
    main()
