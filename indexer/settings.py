"""The indexer's sections of memdir.toml: hybrid search, ranking and per-type recency."""

from __future__ import annotations

from dataclasses import dataclass

from vault.config import setting


@dataclass(frozen=True)
class SearchSettings:
    """Hybrid search and ranking."""

    candidates: int = setting(100, "top-N chunks taken from each channel (vector, keyword) before fusion")
    rrf_k: int = setting(60, "Reciprocal Rank Fusion constant")
    default_limit: int = setting(10, "results returned when no limit is given")
    max_limit: int = setting(100, "largest limit a caller may ask for")
    max_query_chars: int = setting(2000, "longer queries are refused")
    score_threshold: float = setting(0.0, "results whose final score is below this are dropped")


INDEX_SECTIONS: dict[str, type] = {"search": SearchSettings}
