"""The vault layer's sections of memdir.toml: files, outcome scoring and the lifecycle."""

from __future__ import annotations

from dataclasses import dataclass

from .config import InvalidSetting, above_zero, finite, setting, within

LONGEST_DAYS = 36_500.0  # the longest span a lifecycle setting may give, a hundred years: a date can be taken from it


@dataclass(frozen=True)
class VaultSettings:
    """Memory files."""

    max_file_bytes: int = setting(2 * 1024 * 1024, "larger files are reported and not read")
    max_content_chars: int = setting(20_000, "longest body a tool or the CLI may write in one memory")
    outcome_history: int = setting(20, "outcomes kept in a memory's `outcomes` list, most recent last")
    user_vault: str = setting("~/.local/share/memdir", "personal vault for private memories; \"\" disables it")
    scan_secrets: bool = setting(True, "refuse content that looks like an API key, token or private key")
    max_document_mb: float = setting(20.0, "largest document `memdir ingest` reads (PDF, HTML, text, Markdown)")

    def __post_init__(self) -> None:
        above_zero(self, "max_file_bytes", "max_content_chars", "outcome_history", "max_document_mb")


@dataclass(frozen=True)
class ScoringSettings:
    """How outcomes move a memory's score."""

    worked: float = setting(0.20, "score change when a memory helped")
    partial: float = setting(0.05, "score change when it helped somewhat")
    failed: float = setting(-0.30, "score change when it misled")
    unknown: float = setting(0.0, "score change when it was not used")
    recency_days: float = setting(30.0, "a change counts 1 / (1 + age_days / recency_days): old memories move less")
    initial_worked: float = setting(0.7, "starting score of a recorded takeaway that worked")
    initial_partial: float = setting(0.55, "... that partly worked")
    initial_failed: float = setting(0.2, "... that failed (kept as what not to do)")
    initial_none: float = setting(0.5, "... with no outcome yet")

    def __post_init__(self) -> None:
        within(self, 0.0, 1.0, "initial_worked", "initial_partial", "initial_failed", "initial_none")  # scores


@dataclass(frozen=True)
class LifecycleSettings:
    """Promotion, demotion and expiry: applied by the vault server at start and then every `every`, or by `memdir gc`."""

    every: str = setting("1h", "how often the vault server applies the lifecycle (at start, then every 30m, 6h, 1d ...; off = only `memdir gc`)")

    working_max_age_hours: float = setting(24.0, "working memories older than this are promoted or removed")
    history_min_score: float = setting(0.7, "working -> history needs at least this score")
    history_min_uses: int = setting(2, "... and at least this many uses")
    history_max_age_days: float = setting(30.0, "history memories older than this are removed unless promoted")
    patterns_min_score: float = setting(0.9, "history -> patterns needs at least this score")
    patterns_min_uses: int = setting(3, "... at least this many uses")
    patterns_min_successes: float = setting(5.0, "... and at least this success_count")
    demote_below: float = setting(0.4, "patterns below this score go back to history")
    remove_below: float = setting(0.2, "scored memories below this score are moved to .trash/ ...")
    remove_after_failures: int = setting(3, "... once their last this many outcomes all failed and most of their uses "
                                            "failed: one streak of wrong scores must not delete a helpful memory")
    type_ttl_days: dict[str, float] = setting(
        {"context": 7.0, "objective": 30.0, "plan": 60.0, "journal": 90.0, "observation": 90.0, "history": 60.0},
        "per-type expiry in days (types not listed never expire; history counts from its last use)",
    )

    def __post_init__(self) -> None:
        interval_seconds(self.every)  # refuse a schedule that does not parse when the file is read
        # A span no date can be taken from ("never": history_max_age_days = 99999999) failed every search and lifecycle
        # run with an OverflowError (bench/results/s20-attack20.md): a hundred years is the longest, never in practice.
        within(self, 0.0, LONGEST_DAYS, "history_max_age_days")
        within(self, 0.0, LONGEST_DAYS * 24, "working_max_age_hours")
        for kind, days in self.type_ttl_days.items():
            if not 0 <= finite(f"type_ttl_days.{kind}", days) <= LONGEST_DAYS:
                raise InvalidSetting("type_ttl_days", f"{kind} = {days!r} is outside 0 to {LONGEST_DAYS:g} days (0, or "
                                     "leaving the type out: its memories never expire)")
        within(self, 0.0, 1.0, "history_min_score", "patterns_min_score", "demote_below", "remove_below")  # scores
        if self.remove_after_failures < 1:
            raise InvalidSetting("remove_after_failures", f"{self.remove_after_failures} is below 1: a memory is "
                                 "removed after at least one failed outcome (keep it at most [vault] outcome_history)")

    @property
    def every_seconds(self) -> float | None:
        """The schedule in seconds; None when it is off."""
        return interval_seconds(self.every)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def interval_seconds(text: str) -> float | None:
    """`30m`, `1h`, `1.5d` as seconds; `off` as None. Anything else is an InvalidSetting naming `every`."""
    value = text.strip().lower()
    if value in ("off", "never", "0"):
        return None
    number, unit = value[:-1], value[-1:]
    try:
        seconds = float(number) * _UNITS[unit]
    except (KeyError, ValueError):
        raise InvalidSetting("every", f"{text!r} is not an interval: write e.g. 30m, 1h, 1d or off") from None
    if seconds <= 0:
        raise InvalidSetting("every", f"{text!r} is not a positive interval: write e.g. 30m, 1h, 1d or off")
    return seconds


@dataclass(frozen=True)
class DedupSettings:
    """Duplicates and contradictions when storing."""

    near_duplicate: float = setting(0.92, "cosine at or above which a new memory is reported as a near-duplicate")
    possible_conflict: float = setting(0.70, "cosine at or above which a same-type fact/decision/... may conflict")
    merge_suggestion: float = setting(0.85, "default cosine for suggest-merges clusters")

    def __post_init__(self) -> None:
        within(self, 0.0, 1.0, "near_duplicate", "possible_conflict", "merge_suggestion")  # cosines of unit vectors


VAULT_SECTIONS: dict[str, type] = {
    "vault": VaultSettings,
    "scoring": ScoringSettings,
    "lifecycle": LifecycleSettings,
    "dedup": DedupSettings,
}
