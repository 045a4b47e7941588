"""How far can outcome learning get on bench/learning.py at all? A learner told what memdir cannot know.

Issue 17 set targets for `bench/learning.py --noise 0.2 --seeds 5`: the misleading memories out of
the top 4 within 3 rounds (median) and 5 (worst), precision@4 >= 0.95 by round 5. This script asks
whether any learner that sees only the scores could meet them, by replaying the bench (the same
recorded relevance, noise models and seeded generators as `bench/learning_replay.py`) with an
*informed* learner, one told four things memdir cannot know:

- the noise model and its rate (for `flip`, a score is wrong 20 % of the time);
- that a third of the memories relevant to a question are misleading (the prior);
- that the stale memories' old record says nothing about them now (it is skipped);
- which memories are relevant to each question: it can neither lift another topic's memory into
  a question's top 4 nor drop a relevant one below an irrelevant one.

It ranks a question's relevant memories by relevance times the posterior odds that each is
helpful (the Bayes update is exact for flip and praise; for blame, how often a helpful memory draws
a pinned failure depends on what was shown beside it, and a fixed estimate stands in for it), times
an optimism bonus that breaks near ties towards the memory scored fewer times (so a helpful memory
that one wrong score pushed out is tried again). `informed-hazard`
is the same learner without the third item: it reads the whole record through a two-state filter
that lets a memory go wrong before each use (hazard 0.2), as memdir's demotion does.
`memdir-gated` is memdir's learner given only the fourth item, the relevance gate.

This is a reference, not a bound: knowing more is not doing better everywhere. The informed
learner ranks greedily by its posterior, and on some figures it is behind memdir (flip, seeds 1-5:
the last misleading memory leaves in 7 rounds against memdir's 5; blame: precision@4 at round 5
0.917 against 0.958, since a helpful memory blamed on its first score is not shown again). What it
shows is that the flip targets are missed even by a learner told all of the above, and why: on
200 seeds all misleading memories are out by round 3 in 30.5 % of seeds for it (19.5 % for
memdir), and precision@4 at round 5 is >= 0.95 in 34.5 % (16.5 % for memdir); a median over 5
seeds needs more than half.

    python bench/learning_bound.py --seeds 5          # the issue's seeds
    python bench/learning_bound.py --seeds 60         # the same, measured on 60
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import learning  # noqa: E402
import learning_replay  # noqa: E402

OPTIMISM = 0.5  # log-odds bonus at no scores, shrinking with 1 / sqrt(scores + 1): a tie-breaker
PRIOR_MISLEADING = 1 / 3  # 2 of the 6 memories relevant to each question
HISTORY_USES = 8  # the stale memories start with 8 uses from before the bench


def likelihoods(kind: str, noise: float) -> dict[str, tuple[float, float]]:
    """outcome -> (P(reported | helpful), P(reported | misleading)) under the bench's noise model."""
    if kind == "flip":
        return {"worked": (1 - noise, noise), "failed": (noise, 1 - noise)}
    if kind == "praise":  # only non-helpful memories are misreported, as worked
        return {"worked": (1.0, noise), "failed": (1e-6, 1 - noise)}
    if kind == "blame":
        # A misleading memory's failure goes unreported with probability `noise` and lands on one of
        # the helpful memories shown with it: with ~1.5 misleading and ~2.5 helpful memories shown,
        # a helpful memory draws such a failure about 0.6 * noise of the time.
        wrongly_blamed = 0.6 * noise
        return {"worked": (1 - wrongly_blamed, 1e-6), "failed": (wrongly_blamed, 1 - noise)}
    raise ValueError(f"unknown noise kind {kind!r}")


def informed(kind: str, noise: float, skip_history: bool = True, hazard: float = 0.2) -> learning_replay.Factor:
    table = likelihoods(kind, noise)

    def factor(record: learning_replay.Record) -> float:
        if not hasattr(record, "history"):  # first seen before the bench scores it: what it brought along
            record.history = len(record.outcomes) if record.uses >= HISTORY_USES else 0
        outcomes = record.outcomes[record.history:] if skip_history else record.outcomes
        helpful = 1 - PRIOR_MISLEADING
        scored = 0
        for outcome in outcomes:
            if not skip_history:
                helpful *= 1 - hazard
            if outcome == "partial":
                outcome = "worked"
            if outcome in table:
                if_helpful, if_misleading = table[outcome]
                helpful = helpful * if_helpful / (helpful * if_helpful + (1 - helpful) * if_misleading)
                scored += 1
        helpful = min(max(helpful, 1e-12), 1 - 1e-12)
        return math.exp(math.log(helpful / (1 - helpful)) + OPTIMISM / math.sqrt(scored + 1))

    return factor


def relevance_gated(data: dict) -> dict:
    """The recording with every memory irrelevant to a question pushed far below the relevant ones.

    Relevant to a question: its helpful memories (the new one included) and the two misleading ones
    written for its topic (those whose relevance is highest for this question). Derived from the
    recorded roles: the gate is the relevance oracle; within a question it tells no role apart."""
    misleading = [m for m, role in data["roles"].items() if role == "misleading"]
    first = data["rounds"][0]
    home = {m: max(first, key=lambda q: first[q].get(m, [0.0])[0]) for m in misleading}
    relevant = {q: set(ids) | {m for m, a in data["arrivals"].items() if a == q} | {m for m, h in home.items() if h == q}
                for q, ids in data["helpful"].items()}
    rounds = [{q: {m: ([order, bonus] if m in relevant[q] else [order * 1e-12, bonus])
                   for m, (order, bonus) in candidates.items()} for q, candidates in table.items()}
              for table in data["rounds"]]
    return {**data, "rounds": rounds}


def misleading_out_by_round_three_chance(noise: float, misleading: int = 12) -> dict:
    """How often a seed could meet "out within 3 rounds": each misleading memory's first 3 scores
    must not be mostly `worked` (else it looks like a helpful memory with one wrong score)."""
    mostly_worked = 3 * noise ** 2 * (1 - noise) + noise ** 3
    every_one = (1 - mostly_worked) ** misleading
    return {"a misleading memory scored worked at least twice in its first 3": round(mostly_worked, 3),
            f"none of the {misleading} is": round(every_one, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=learning_replay.CACHE)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--kinds", default="flip,blame,praise")
    args = parser.parse_args()
    if not args.cache.exists():
        learning_replay.record(8, args.embedder, args.cache)
    data = json.loads(args.cache.read_text())
    gated = relevance_gated(data)
    seeds = range(args.seed, args.seed + args.seeds)
    result: dict = {"seeds": [seeds.start, seeds.stop - 1], "noise": args.noise,
                    "chance": misleading_out_by_round_three_chance(args.noise)}
    for kind in args.kinds.split(","):
        learners = {
            "previous": (data, learning_replay.model_factor(learning.MODELS["previous"])),
            "memdir": (data, learning_replay.model_factor(learning.MODELS["default"])),
            "memdir-gated": (gated, learning_replay.model_factor(learning.MODELS["default"])),
            "informed": (gated, informed(kind, args.noise)),
            "informed-hazard": (gated, informed(kind, args.noise, skip_history=False)),
        }
        result[kind] = {}
        for name, (recording, factor) in learners.items():
            noisy = learning_replay.summary(recording, factor, seeds, args.noise, kind)
            clean = learning_replay.summary(recording, factor, range(args.seed, args.seed + 1), 0.0, kind)
            result[kind][name] = {"no_noise": {k: clean[k] for k in ("leave", "enter", "p5")}, "noisy": noisy}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
