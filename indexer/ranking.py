"""Pure ranking math: channel evidence → relevance, and per-type recency.

Kept free of index state so it can be tested exhaustively. How a memory's outcome record moves its
rank is the learner's (learner.py), supplied to search as a `QualityFn`.
"""

from __future__ import annotations

import functools
import math
from datetime import datetime
from typing import Callable, Mapping, Sequence

from vault.model import Memory

QualityFn = Callable[[Memory, datetime], float]  # -> the factor a result's order is multiplied by (1 = neutral)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def calibrate(evidence: float, midpoint: float, steepness: float) -> float:
    """Map 0..1 evidence to a 0..1 relevance with a sigmoid rescaled so 0 → 0 and 1 → 1."""
    low, high = _calibration_ends(midpoint, steepness)
    return min(1.0, max(0.0, (sigmoid(steepness * (evidence - midpoint)) - low) / (high - low)))


@functools.lru_cache(maxsize=16)
def _calibration_ends(midpoint: float, steepness: float) -> tuple[float, float]:
    """The sigmoid at evidence 0 and 1: the same two numbers for every candidate of every search (~340 a search)."""
    return sigmoid(-steepness * midpoint), sigmoid(steepness * (1 - midpoint))


def vector_evidence(cosine: float, floor: float, full: float) -> float:
    """How strongly the embedding says "relevant": 0 at or below `floor`, 1 at or above `full`."""
    return min(1.0, max(0.0, (cosine - floor) / (full - floor)))


def combined_evidence(vector: float | None, keyword: float | None) -> float:
    """Noisy-or: either channel alone can make a memory relevant; both together more so."""
    missing_v = 1.0 - (vector or 0.0)
    missing_k = 1.0 - (keyword or 0.0)
    return 1.0 - missing_v * missing_k


# The log-odds that a ranked hit is one the question wants, fitted by `python bench/calibration.py --fit` on the
# development sets (coding dev, fresh paraphrases, LoCoMo dev, and the fresh questions asked where their answer is
# absent), each set weighing the same: a constant, the relevance the order used (as log-odds), the margin of its
# order score over the best other hit's, and its place in the list.
SHOWN_ODDS = (-1.517, 0.208, 4.683, -0.223)
# Under SHOWN_KNEE a chance is shown on a log scale that reaches 0 at SHOWN_LEAST: filler is right 1-5 % of the
# time, and as a chance it would print as 0.00-0.05, several at one value; spread, each shows its own.
SHOWN_KNEE, SHOWN_LEAST = 0.2, 0.001
SHOWN_STEP = 0.01  # what the tool prints: two decimals


def shown_relevance(weighed: float, margin: float, place: int) -> float:
    """The number a ranked hit shows: how likely it is the answer, read off the development sets. `weighed` is the
    relevance that ranked it (its own match), `margin` how far its order score is ahead of the best other hit's
    (negative: behind), `place` how many hits rank above it. Never more than `weighed`, so a question nothing
    answers well shows no confident first hit, however far ahead of the rest it is."""
    constant, evidence, ahead, below = SHOWN_ODDS
    clipped = min(max(weighed, 1e-4), 1.0 - 1e-4)
    odds = constant + evidence * math.log(clipped / (1.0 - clipped)) + ahead * margin + below * place
    chance = min(sigmoid(odds), max(weighed, 0.0))
    if chance >= SHOWN_KNEE:
        return chance
    return max(0.0, SHOWN_KNEE * (1.0 + math.log(max(chance, 1e-12) / SHOWN_KNEE) / math.log(SHOWN_KNEE / SHOWN_LEAST)))


def never_rising(shown: list[float]) -> list[float]:
    """Numbers in list order made never to rise down it: a number above the one listed before it is shown one printed
    step (SHOWN_STEP) under that one, or at half of it near 0. Pooling such a run to its mean instead (isotonic
    regression) showed one value three times or more in 58 of coding dev's 204 top 10s, against 21 unpooled and 27
    stepped; how often a band's hits are right moved by at most one hit either way (bench/results/s19-lead.md)."""
    out: list[float] = []
    for value in shown:
        if out and value > out[-1]:
            above = out[-1]
            value = above - SHOWN_STEP if above >= 2 * SHOWN_STEP else above / 2
        out.append(value)
    return out


def recency_bonus(memory: Memory, now: datetime, table: Mapping[str, Mapping[str, float]]) -> float:
    """Additive bonus for young memories of time-sensitive types; old memories are never penalised."""
    rule = table.get(memory.type)
    if not rule or memory.created_at is None:
        return 0.0
    age_days = max(0.0, (now - memory.created_at).total_seconds() / 86400)
    if age_days > rule["window_days"]:
        return 0.0
    return rule["max_boost"] * rule["decay"] ** age_days


def section_score(best: float, second: float | None, lead: float, share: float) -> float:
    """A memory of several chunks (a book's sections) scores its best chunk's cosine, less `share` of how far
    that chunk falls short of leading the next best one by `lead`. A book is many chances at one result: when
    its best two sections are about as close to the question, the best is a draw among near-equals (the book
    is on the question's topic), not a section that answers it, which stands out from its siblings. A memory
    of one chunk (`second` None) keeps its cosine."""
    if second is None:
        return best
    return best - share * max(0.0, lead - (best - second))


# How far above the standard the best-of-N ceiling sqrt(N - 1) must sit before `standout_shortfall` reads a memory.
CEILING_MARGIN = 1.2


def standout_shortfall(scores: Sequence[float], standout: float) -> float:
    """How far a memory's best section (the largest of `scores`, one per section) falls short of standing `standout`
    standard deviations above the mean of all its sections; 0 for a memory of fewer than three (no spread to read).

    `section_score` compares the best section with the next one only. A book on the question's topic has many
    sections near it, and its best is then the luckiest of them: on the served sets the Postgres cheatsheet's and the
    runbook's best sections stood 1.0-1.6 standard deviations above their siblings over the short note that answered
    ("how can I query live customer data safely", "did switching processor architecture for the pipeline machines
    pay off"), while the sections the book sets ask for stand 1.6-3.4 above theirs, 2 or more for all but seven of 36
    (bench/results/s10-served10.md).

    The best of N scores stands at most sqrt(N - 1) standard deviations above their mean (when the others are all
    equal): 1.41 for three sections, 1.73 for four. Below the standard, the shortfall grows with the spread, so a
    short memory would lose most exactly when one section alone answers. The rule reads only a memory whose ceiling
    clears the standard by a fifth (`CEILING_MARGIN`): seven sections or more at the default 2.0, as every book in
    the example vault has; a shorter one returns 0."""
    if len(scores) < 3 or math.sqrt(len(scores) - 1) < CEILING_MARGIN * standout:
        return 0.0
    mean = math.fsum(scores) / len(scores)
    spread = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / len(scores))
    return max(0.0, standout * spread - (max(scores) - mean))


# The learned order (SearchSettings.learned_order): the log-odds that one of two candidates is the wanted one, from
# the hand-made order's log-odds, how far the candidate's vector score is behind the question's best while the keyword
# channel covers little of the question, and a keyword hit on a short note that is weak against the question's best
# keyword hit while the channel covers under WEAK_COVERAGE of it. The features are a pairwise logistic's
# (bench/results/s11-learn11.md); the constants are not its optimum, which LoCoMo's many questions pull to where the
# served notes lose 0.019 MRR@10, but a point of a grid on which every development set gained or held (LoCoMo, with
# the named person's lift later counted once, 0.002 below: `python bench/learned_order.py --grid DIR`,
# bench/results/s12-lead.md).
# The hand order's log-odds count in full (1.0): where the keyword channel covers half the question or more and no
# weak note hit is in play, the learned order is the hand-made order exactly, and so are the rules tuned on it
# (a section's standout, the query's time words, a fresh note against a proven one). At 0.5, the grid's best, it
# halved the match's spread wherever the features said nothing, and the outcome record and recency, added after it,
# put "Statement files can be up to 50 MB" over the docker-compose note a question named its machine for.
LEARNED_FEATURES = ("order", "uncovered_vector_gap", "weak_note_keyword_hit")
LEARNED_ORDER = (1.0, 21.0, -12.0)
WEAK_COVERAGE = 0.3  # a question the keyword channel covers less of than this is one it has little to say about
# The vector gap counts in full where no keyword hit covers any of the question and not at all from this coverage on:
# where the words say this much, they are heard ("how do we stop two workers importing the same statement", covered
# 0.62, put its answer, 0.18 behind in meaning, from 3rd to 4th under the gap read as (1 - covered); every
# development set, LoCoMo's R@5 most, did better with the cut: bench/results/s12-lead.md).
KEYWORDS_SAY = 0.5


def learned_features(order: float, vector: float | None, best_vector: float, covered: float, note_keyword_hit: bool,
                     keyword: float | None, best_keyword: float, rarity: float = 0.0) -> list[float]:
    """A candidate as the learned order reads it. `covered`: how much of the question the best keyword hit covers;
    `note_keyword_hit`: the keyword channel found it and it is a memory of one section (a book always shares words)."""
    clipped = min(max(order, 1e-4), 1.0 - 1e-4)
    # No vector score (a memory not embedded yet, after a pull): no gap is known, so none is held against it; the
    # development sets had none, so nothing was fitted for it, and a guessed -0.5 buried such a memory.
    gap = 0.0 if vector is None else vector - best_vector
    share = (keyword or 0.0) / best_keyword if best_keyword > 0.0 else 0.0
    weak = float(note_keyword_hit) * (1.0 - share) * max(0.0, WEAK_COVERAGE - covered) / WEAK_COVERAGE
    weak *= 1.0 - rarity  # a rare word shared (a name, an error code) is the point, however little else is
    return [math.log(clipped / (1.0 - clipped)), gap * max(0.0, 1.0 - covered / KEYWORDS_SAY), weak]


def learned_order(features: Sequence[float]) -> float:
    """The learned order's match, 0..1: it stands where the hand-made order stood."""
    return sigmoid(sum(w * f for w, f in zip(LEARNED_ORDER, features)))
