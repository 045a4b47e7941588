"""One memory's record under wrong scores: how often does the learner misjudge it, and how soon?

`bench/learning.py` runs 8 rounds, too few to show what a learner does to a long record. Here a
memory is helpful (every honest score `worked`) or misleading (`failed`), each score is wrong with
probability P, and after N uses the ranking factor is read from memdir's learner (`default`) and
from the one before wave 2 session 5 (`previous`, bench/beta_learner.py). Reported: the share of
helpful memories demoted by more than a tenth (factor < 0.9), and the share of misleading ones
that are not (factor > 0.9), over `--memories` seeded records per cell.

    python bench/record_noise.py
"""

from __future__ import annotations

import argparse
import random
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from beta_learner import BetaDecayLearner  # noqa: E402
from indexer.learner import QualityModel  # noqa: E402
from indexer.ranking import QualityFn  # noqa: E402
from vault.model import Memory  # noqa: E402
from vault.scoring import SUCCESS_CREDIT  # noqa: E402

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
FLIPPED = {"worked": "failed", "failed": "worked"}
LEARNERS: dict[str, QualityFn] = {"previous": BetaDecayLearner(), "default": QualityModel()}


def record(truth: str, wrong: float, uses: int, rng: random.Random) -> Memory:
    outcomes = [FLIPPED[truth] if rng.random() < wrong else truth for _ in range(uses)]
    return Memory(id="m-00000001", path="history/m.md", collection="history", type="learning", title="t", body="b",
                  uses=uses, success_count=sum(SUCCESS_CREDIT[o] for o in outcomes), outcomes=tuple(outcomes[-20:]))


def misjudged(learner: QualityFn, truth: str, wrong: float, uses: int, memories: int) -> float:
    rng = random.Random(f"{truth}-{wrong}-{uses}")
    factors = [learner(record(truth, wrong, uses, rng), NOW) for _ in range(memories)]
    return sum((f < 0.9) if truth == "worked" else (f > 0.9) for f in factors) / memories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=2000)
    args = parser.parse_args()
    cells = [("helpful demoted", "worked", wrong, uses) for wrong in (0.2, 0.35) for uses in (5, 20, 40)]
    cells += [("misleading not demoted", "failed", wrong, uses) for wrong in (0.2, 0.35) for uses in (3, 5, 20)]
    print(f"{'':>44}" + "".join(f"{name:>10}" for name in LEARNERS))
    for label, truth, wrong, uses in cells:
        shares = [misjudged(learner, truth, wrong, uses, args.memories) for learner in LEARNERS.values()]
        print(f"{f'{label}, {wrong:.0%} wrong, {uses} uses':>44}" + "".join(f"{share:>10.3f}" for share in shares))


if __name__ == "__main__":
    main()
