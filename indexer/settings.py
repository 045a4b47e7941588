"""The indexer's sections of memdir.toml: hybrid search, ranking, per-type recency and the watcher."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from vault.config import InvalidSetting, above_zero, finite, setting, within

# After ragdocs' per-type windows and decay rates, with half its boosts: the boost is added to a
# relevance on the same 0..1 scale, where 0.2 was enough to lift a weak match over an exact one.
DEFAULT_RECENCY = {
    "journal": {"window_days": 14.0, "max_boost": 0.1, "decay": 0.95},
    "plan": {"window_days": 21.0, "max_boost": 0.075, "decay": 0.93},
    "fact": {"window_days": 7.0, "max_boost": 0.05, "decay": 0.98},
    "observation": {"window_days": 14.0, "max_boost": 0.1, "decay": 0.92},
    "reflection": {"window_days": 30.0, "max_boost": 0.075, "decay": 0.98},
    "context": {"window_days": 7.0, "max_boost": 0.075, "decay": 0.9},
    "objective": {"window_days": 21.0, "max_boost": 0.05, "decay": 0.95},
    "history": {"window_days": 7.0, "max_boost": 0.05, "decay": 0.9},
    # Decisions, learnings, preferences and constraints had no rule, so of two memories written the same minute a
    # fact was lifted and a decision was not, and the fact won near ties it did not answer (served hold-out 4:
    # bench/results/s11-intent11.md). They get a fact's rule: young is young, whatever the type.
    "decision": {"window_days": 7.0, "max_boost": 0.05, "decay": 0.98},
    "learning": {"window_days": 7.0, "max_boost": 0.05, "decay": 0.98},
    "preference": {"window_days": 7.0, "max_boost": 0.05, "decay": 0.98},
    "constraint": {"window_days": 7.0, "max_boost": 0.05, "decay": 0.98},
}


@dataclass(frozen=True)
class SearchSettings:
    """Hybrid search and ranking."""

    # Keys older memdir.toml files hold that nothing reads any more; loading accepts them (see vault/config.py).
    # shown_gap_scale, shown_gap_floor: the shown relevance's old rule, replaced by a fit (indexer/ranking.py SHOWN_ODDS).
    RETIRED: ClassVar[frozenset[str]] = frozenset({"shown_gap_scale", "shown_gap_floor"})

    embedder: str = setting("all-MiniLM-L6-v2", "embedding model: all-MiniLM-L6-v2, or hashing-256 (tests only)")
    candidates: int = setting(100, "top-N memories taken from each channel (vector, keyword) before fusion")
    keyword_postings_budget: int = setting(30000, "query terms are used rarest first up to this many postings (0 = all)")
    fusion: str = setting("zscore", "zscore: convex mix of per-query z-scored channel scores; rrf: Reciprocal Rank Fusion")
    rrf_k: int = setting(60, "Reciprocal Rank Fusion constant (fusion = rrf)")
    vector_weight: float = setting(0.5, "weight of the vector channel in the fusion")
    keyword_weight: float = setting(0.8, "weight of the keyword channel in the fusion, when it has something to say "
                                          "(see keyword_confidence_low/high)")
    keyword_confidence_low: float = setting(0.3, "a keyword hit counts for nothing in the fusion when it covers at most "
                                                 "this share of the query's words (idf-weighted)")
    keyword_confidence_high: float = setting(0.7, "... and for the full keyword_weight from this share up")
    keyword_confidence_lent: float = setting(0.65, "each keyword hit counts as covering at least this fraction of what "
                                                  "the best keyword hit covers (0: each hit by its own coverage alone)")
    bm25_b: float = setting(0.0, "BM25 length normalisation (0 = none; memories and chunks are short)")
    bm25_k1: float = setting(0.5, "BM25 term-frequency saturation")
    context_boost: float = setting(0.35, "keyword weight of a word found in a memory's neighbours (previous/next)")
    previous_weight: float = setting(0.5, "vector score: weight of the memory read together with its previous one")
    next_weight: float = setting(0.3, "vector score: weight of the memory read together with its next one")
    pooling_sharpness: float = setting(12.0, "vector score of a standalone note: soft maximum (log-mean-exp) of its whole "
                                             "text's and its sentences' cosines at this sharpness (0 = mean of the best "
                                             "sentence and the whole)")
    pooling_lift_sentences: int = setting(2, "a standalone note of more sentences than this is lifted above its whole "
                                             "text's cosine by only (this + 1) / (its sentences + 1) of what the soft "
                                             "maximum adds: a long note has more chances to hold one sentence near the "
                                             "question by accident (8, the most sentence units a note has: off)")
    section_lead: float = setting(0.05, "a memory of several sections (a book) whose best section leads the next by less "
                                        "than this cosine ...")
    section_lead_share: float = setting(0.5, "... scores its best section less this share of the shortfall (0 = off): "
                                             "near-equal sections say the book is on the topic, not which part answers")
    section_standout: float = setting(2.0, "a memory with enough sections to tell (seven at 2.0) whose best section stands "
                                            "fewer than this many standard deviations above the mean of its sections ...")
    section_standout_share: float = setting(0.5, "... scores it less this share of the shortfall (in cosine; faded out "
                                                 "for a long question as it is read whole; 0 = off): a book whose "
                                                 "sections are all near the question is on its topic, and its best "
                                                 "section is the luckiest of many, not one that answers")
    long_query_from: int = setting(15, "a question longer than this many words reads standalone notes more as a whole "
                                       "(a pasted paragraph or log is compared whole to whole) ...")
    long_query_full: int = setting(35, "... and from this many words only as a whole")
    salient_weight: float = setting(1.0, "a long question's error lines and its user's own sentences (indexer/salient.py) "
                                         "are embedded as a second query, pooled with the whole question's vector at this "
                                         "weight, reached with the whole reading above (0 = off)")
    cosine_floor: float = setting(0.15, "cosine at or below which the vector channel gives no evidence")
    vector_margin: float = setting(0.1, "what the vector channel puts within this cosine of its best match for the "
                                        "question is listed even under cosine_floor (never more than this under it), at the "
                                        "relevance cosine_floor gives it (a question in other words puts its answer near "
                                        "0.15; 0 = off)")
    keyword_question_low: float = setting(0.5, "when no keyword hit covers more than this share of the question "
                                               "(idf-weighted), the keyword channel has nothing to say about it: it "
                                               "weighs nothing in the order, code-like terms apart (a question in other "
                                               "words shares only the user's own words with the notes; 0 = off)")
    cosine_full: float = setting(0.65, "cosine at or above which it gives full evidence")
    long_query_cosine_full: float = setting(0.95, "the cosine of full evidence in the order (not the relevance shown) for a "
                                                  "question read whole to whole (long_query_full words), linear from "
                                                  "cosine_full: a pasted log sits at 0.6-0.75 from several notes at once")
    calibration_midpoint: float = setting(0.35, "evidence that calibrates to relevance 0.5")
    calibration_steepness: float = setting(8.0, "steepness of the sigmoid calibration")
    evidence_weight: float = setting(0.5, "order by (1 - w) * fused rank + w * calibrated relevance")
    learned_order: bool = setting(True, "adjust the order above where the keyword channel says little: by how far a "
                                        "hit is behind the best in meaning, and against weak keyword hits on short "
                                        "notes (bench/learned_order.py)")
    quality_lift_cap: float = setting(0.05, "most a good outcome record lifts a result (0.05 = 5 %): it breaks near "
                                            "ties, it never buries a fresh memory that answers better")
    fresh_unscored_days: float = setting(7.0, "a memory written within this many days and never used is ranked against "
                                              "a used one without either's positive quality lift: a record earned on "
                                              "other questions does not bury a note too new to have one (0 = off)")
    quality_gain: float = setting(0.25, "share of a memory's tier weight that a good record adds to its rank: proven "
                                        "memories break ties, they do not outrank better answers")
    quality_decay: float = setting(0.5, "a good record (the lift) fades by count: the latest outcome counts 1, the one "
                                        "before this much, then its square, ... (1 = never fades)")
    quality_prior: float = setting(0.5, "pseudo-successes and pseudo-failures every record starts with (the lift's Beta prior)")
    quality_explore: float = setting(0.1, "optimism for little evidence in the lift: quality += explore / sqrt(1 + s + f)")
    quality_weight_new: float = setting(0.2, "how far a good record lifts a memory with 0 uses: factor 1 + gain * 2w(q - 0.5)")
    quality_weight_emerging: float = setting(0.35, "... with 1-2 uses")
    quality_weight_established: float = setting(0.5, "... with 3-9 uses")
    quality_weight_proven: float = setting(0.6, "... with 10 or more uses")
    quality_stale_hazard: float = setting(0.2, "the demotion's chance that a memory went wrong since it was last used: "
                                                "before each outcome P(helpful) *= 1 - this, so no long record outweighs "
                                                "failures in a row")
    quality_worked_if_misleading: float = setting(0.2, "how often the scorer is taken to call a misleading memory "
                                                        "\"worked\" (a worked multiplies the odds of helpful by "
                                                        "(1 - failed_if_helpful) / this)")
    quality_failed_if_helpful: float = setting(0.3, "how often the scorer is taken to call a helpful memory \"failed\": "
                                                    "blamed for a neighbour, or a half-fit (a failed multiplies the odds "
                                                    "by this / (1 - worked_if_misleading))")
    quality_demotion: float = setting(0.6, "how far a record that says \"misleading now\" takes a result down: "
                                           "factor 1 - demotion * badness^curve, badness = (1/2 - P(helpful)) / (1/2)")
    quality_curve: float = setting(3.0, "above 1, a mixed record costs little and a clear one much (a new memory: "
                                        "one failed 13 %, two 39 %; after a long good record one costs nothing)")
    quality_weight_memory_bank: float = setting(0.3, "how far a memory_bank fact's stated importance and confidence move "
                                                     "its rank (factor 1 +- 2w(q - 0.5), a good one times quality_gain)")
    quality_bank_outcome_share: float = setting(0.2, "share of a memory_bank fact's quality taken from its outcomes, once it has "
                                                     "quality_bank_outcome_uses uses")
    quality_bank_outcome_uses: int = setting(3, "uses before a memory_bank fact's outcomes count at all")
    time_match_boost: float = setting(0.3, "added to a result's rank, times its relevance, when it was written in the "
                                            "window the query's time words name (\"the redis bug from yesterday\"); "
                                            "none for a long paste, fading from long_query_from to long_query_full words")
    thread_lift: float = setting(0.15, "the best hit and the memories up to thread_reach previous:/next links from it "
                                       "(its captured conversation's nearby turns) rank by 1 + this (0 = off; indexer/multihop.py)")
    thread_reach: int = setting(2, "how many turns before and after the best hit its thread lift reaches (0 = off)")
    conversation_lift: float = setting(0.1, "among the 30 strongest hits, the one whose whole text is nearest the query and "
                                             "the memories up to conversation_reach previous:/next links from it (its "
                                             "session) rank by 1 + this (0 = off; indexer/multihop.py)")
    conversation_reach: int = setting(10, "how many turns before and after that hit its conversation lift reaches (0 = off)")
    hop_seeds: int = setting(0, "second hop: search again from this many of the strongest hits, the query vector moved towards each (0 = off)")
    hop_beta: float = setting(1.0, "second hop: how far the query vector is moved towards the hit it starts from")
    hop_share: float = setting(0.5, "second hop: share of its own score a memory found by the second hop enters with")
    author_boost: float = setting(0.44, "a query that names a memory's speaker/author: the name is left out of the "
                                       "text the vector channel embeds, and that person's memories rank by 1 + this "
                                       "(0 = off; indexer/people.py)")
    graph_factor: float = setting(0.5, "share of a hit's relevance given to memories it links to")
    default_limit: int = setting(10, "results returned when no limit is given")
    max_limit: int = setting(100, "largest limit a caller may ask for")
    max_query_chars: int = setting(2000, "a longer query is asked by its first this many characters")
    int8_long_queries: bool = setting(True, "a query of 64 word pieces or more is embedded by an int8 copy of the model "
                                            "(vectors at cosine >= 0.999 to the float32 ones, 60 % of the CPU; memories: "
                                            "int8_documents; indexer/smooth_int8.py), on a CPU with VNNI: elsewhere "
                                            "it is no faster and less close, and texts stay float32. With the shared "
                                            "embedder, the first vault the server opens decides")
    int8_documents: bool = setting(False, "memories are embedded by that int8 copy too (cosine >= 0.997 to float32's "
                                          "on every text a reindex embeds, x1.6 less CPU a text; off by default: it "
                                          "moves some retrieval sets by more than 0.005, docs/search.md). Vectors "
                                          "already in the embedding cache are kept either way. With the shared "
                                          "embedder, the first vault the server opens decides")
    score_threshold: float = setting(0.05, "results whose relevance is below this are dropped, unless the vector "
                                           "channel finds them above cosine_floor or within vector_margin of its best (a "
                                           "question in other words puts its answer near cosine 0.15-0.19, under 0.05)")
    stale_factor: float = setting(0.85, "a memory whose cited code changed since it was anchored ranks at this share (1 = no penalty)")
    recency_weight: float = setting(0.5, "share of the per-type recency boost (below) that is added to a result's rank")
    recency: dict[str, dict[str, float]] = setting(
        DEFAULT_RECENCY, "per-type additive boost for young memories: window_days, max_boost, decay per day"
    )

    def __post_init__(self) -> None:
        unbounded = float("inf")
        above_zero(self, "candidates", "calibration_steepness", "default_limit", "max_limit", "max_query_chars")
        within(self, 0, unbounded, "keyword_postings_budget", "rrf_k", "vector_weight", "keyword_weight", "bm25_k1",
               "context_boost", "previous_weight", "next_weight", "quality_explore", "quality_bank_outcome_uses",
               "time_match_boost", "thread_lift", "thread_reach", "conversation_lift", "conversation_reach",
               "hop_seeds", "hop_beta", "author_boost")
        # Shares, relevances and cosines: the fusion and the calibration work on 0..1.
        within(self, 0.0, 1.0, "bm25_b", "cosine_floor", "calibration_midpoint", "evidence_weight", "hop_share",
               "graph_factor", "score_threshold", "stale_factor")
        if not self.cosine_floor < self.cosine_full <= 1.0:  # vector evidence divides by their difference
            raise InvalidSetting("cosine_full", f"{self.cosine_full} is not above cosine_floor ({self.cosine_floor}) "
                                                "and at most 1")
        if self.default_limit > self.max_limit:
            raise InvalidSetting("default_limit", f"{self.default_limit} is above max_limit ({self.max_limit})")
        for kind, rule in self.recency.items():
            _recency_rule(kind, rule)
        if not 0.0 < self.quality_decay <= 1.0:
            raise InvalidSetting("quality_decay", f"{self.quality_decay} is not in (0, 1]: 1 keeps every outcome at full weight")
        if self.quality_prior <= 0.0:
            raise InvalidSetting("quality_prior", f"{self.quality_prior} is not positive")
        for key in ("quality_gain", "quality_weight_new", "quality_weight_emerging", "quality_weight_established",
                    "quality_weight_proven", "quality_weight_memory_bank", "quality_bank_outcome_share",
                    "quality_demotion"):
            if not 0.0 <= getattr(self, key) <= 1.0:
                raise InvalidSetting(key, f"{getattr(self, key)} is not in [0, 1]")
        if not 0.0 <= self.quality_stale_hazard < 1.0:
            raise InvalidSetting("quality_stale_hazard", f"{self.quality_stale_hazard} is not in [0, 1): at 1 no record "
                                                         "could ever say helpful")
        for key in ("quality_worked_if_misleading", "quality_failed_if_helpful"):
            if not 0.0 < getattr(self, key) < 1.0:
                raise InvalidSetting(key, f"{getattr(self, key)} is not in (0, 1): a scorer is never certainly right or wrong")
        if self.quality_worked_if_misleading + self.quality_failed_if_helpful >= 1.0:
            raise InvalidSetting("quality_failed_if_helpful",
                                 f"with quality_worked_if_misleading = {self.quality_worked_if_misleading} a score would "
                                 "be no evidence or backwards: the two must add up to less than 1")
        if self.quality_curve <= 0.0:
            raise InvalidSetting("quality_curve", f"{self.quality_curve} is not positive")
        if not 0.0 <= self.keyword_confidence_low < self.keyword_confidence_high <= 1.0:
            raise InvalidSetting("keyword_confidence_high", f"keyword_confidence_low ({self.keyword_confidence_low}) and "
                                 f"keyword_confidence_high ({self.keyword_confidence_high}) must satisfy 0 <= low < high <= 1")
        if not 0 <= self.long_query_from < self.long_query_full:
            raise InvalidSetting("long_query_full", f"long_query_from ({self.long_query_from}) and long_query_full "
                                 f"({self.long_query_full}) must satisfy 0 <= from < full")
        if self.vector_margin < 0.0:
            raise InvalidSetting("vector_margin", f"{self.vector_margin} is negative")
        if not self.cosine_floor < self.long_query_cosine_full <= 1.0:
            raise InvalidSetting("long_query_cosine_full", f"{self.long_query_cosine_full} is not in (cosine_floor, 1]")
        if not 0.0 <= self.keyword_question_low < 1.0:
            raise InvalidSetting("keyword_question_low", f"{self.keyword_question_low} is not in [0, 1)")
        if not 0.0 <= self.keyword_confidence_lent <= 1.0:
            raise InvalidSetting("keyword_confidence_lent", f"{self.keyword_confidence_lent} is not in [0, 1]")
        for key in ("section_lead_share", "section_standout_share"):
            if not 0.0 <= getattr(self, key) <= 1.0:
                raise InvalidSetting(key, f"{getattr(self, key)} is not in [0, 1]")
        for key in ("quality_lift_cap", "fresh_unscored_days", "recency_weight", "pooling_sharpness",
                    "pooling_lift_sentences", "section_lead", "section_standout", "salient_weight"):
            if not math.isfinite(getattr(self, key)) or getattr(self, key) < 0.0:
                raise InvalidSetting(key, f"{getattr(self, key)} is not a finite number of 0 or more")


def _recency_rule(kind: str, rule: dict[str, float]) -> None:
    """Refuse a `[search.recency.<type>]` rule no boost can follow, by its dotted key."""
    for name, value in rule.items():
        key = f"recency.{kind}.{name}"
        value = finite(key, value)
        if name == "decay" and not 0.0 <= value <= 1.0:  # a factor per day: above 1 a boost would grow with age
            raise InvalidSetting(key, f"{value!r} is outside 0 to 1")
        if value < 0.0:
            raise InvalidSetting(key, f"{value!r} is below 0")


@dataclass(frozen=True)
class WatchSettings:
    """The watcher that keeps the indices in step with the files."""

    debounce_seconds: float = setting(0.25, "quiet time after the last change before indexing")
    max_wait_seconds: float = setting(2.0, "index a burst (git checkout) at the latest this long after it began")
    rescan_seconds: float = setting(300.0, "full reconcile this often, a safety net for dropped events (0 = never)")
    polling: bool = setting(False, "poll instead of inotify/FSEvents (network or FUSE-mounted vaults)")

    def __post_init__(self) -> None:
        within(self, 0.0, float("inf"), "debounce_seconds", "max_wait_seconds", "rescan_seconds")


INDEX_SECTIONS: dict[str, type] = {"search": SearchSettings, "watch": WatchSettings}
