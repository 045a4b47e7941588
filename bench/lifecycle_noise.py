"""Does the lifecycle trash helpful memories when scores are wrong part of the time?

A memory's truth is fixed (helpful: every honest score is `worked`; misleading: `failed`); each
score is flipped with probability `--noise`. Scores go through memdir's own counter math
(`vault.scoring.outcome_updates`) and after each one the lifecycle decides (`vault.lifecycle.plan`),
one use an hour, for `--uses` uses. Reported per `[lifecycle] remove_after_failures` value: the
share of memories removed within those uses and the median use at which they were. With 1 the
rule is the one before wave 2 session 5 (any score below `remove_below` removed the memory).

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
from vault.scoring import outcome_updates  # noqa: E402
from vault.settings import LifecycleSettings, ScoringSettings  # noqa: E402

START = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
FLIPPED = {"worked": "failed", "failed": "worked"}
COUNTERS = ("score", "uses", "success_count", "outcomes", "last_used_at", "last_outcome")


def removed_at(truth: str, score: float, noise: float, uses: int, lifecycle: LifecycleSettings, seed: int) -> int | None:
    """The use after which the lifecycle removed the memory, or None if it survived."""
    rng = random.Random(seed)
    scoring = ScoringSettings()
    memory = Memory(id="m-00000001", path="working/m.md", collection="working", type="learning", title="t",
                    body="b", score=score, created_at=START)
    for use in range(1, uses + 1):
        now = START + timedelta(hours=use)
        outcome = FLIPPED[truth] if rng.random() < noise else truth
        memory = replace(memory, **{k: v for k, v in outcome_updates(memory, outcome, now, scoring).items()
                                    if k in COUNTERS})
        decisions = plan([memory], now, lifecycle)
        if decisions and decisions[0].action == "remove":
            return use
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--uses", type=int, default=8)
    parser.add_argument("--memories", type=int, default=4000, help="simulated memories per row")
    args = parser.parse_args()
    cases = [("helpful, new (score 0.5)", "worked", 0.5), ("helpful, recorded as worked (0.7)", "worked", 0.7),
             ("misleading, new (0.5)", "failed", 0.5)]
    print(f"noise {args.noise}, {args.uses} uses, {args.memories} memories per row: removed share (median use)")
    print(f"{'remove_after_failures':>22}" + "".join(f"  {name:>34}" for name, _, _ in cases))
    for streak in (1, 2, 3, 4):
        lifecycle = LifecycleSettings(remove_after_failures=streak)
        cells = []
        for _, truth, score in cases:
            runs = [removed_at(truth, score, args.noise, args.uses, lifecycle, seed) for seed in range(args.memories)]
            hit = [r for r in runs if r is not None]
            median = f"{statistics.median(hit):.0f}" if hit else "-"
            cells.append(f"{len(hit) / len(runs):.3f} ({median})")
        print(f"{streak:>22}" + "".join(f"  {cell:>34}" for cell in cells))


if __name__ == "__main__":
    main()
