"""A memdir.toml value memdir cannot use is refused when the file is read, naming the file, line and key: not taken
silently and met later as a puzzle ("memory files are limited to -5 bytes" on the next add, or no memory ever
promoted because a score threshold is 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server.config import load_config
from vault import ConfigError


@pytest.mark.parametrize("section, line", [
    ("[vault]\nmax_file_bytes = -5", "memdir.toml:3 [vault] max_file_bytes: -5 is not above 0"),
    ("[vault]\nmax_content_chars = 0", "memdir.toml:3 [vault] max_content_chars: 0 is not above 0"),
    ("[vault]\noutcome_history = 0", "memdir.toml:3 [vault] outcome_history: 0 is not above 0"),
    ("[vault]\nmax_document_mb = 0.0", "memdir.toml:3 [vault] max_document_mb: 0.0 is not above 0"),
    ("[lifecycle]\nhistory_min_score = 7", "memdir.toml:3 [lifecycle] history_min_score: 7.0 is outside 0 to 1"),
    ("[scoring]\ninitial_worked = 1.5", "memdir.toml:3 [scoring] initial_worked: 1.5 is outside 0 to 1"),
    ("[dedup]\nnear_duplicate = 92", "memdir.toml:3 [dedup] near_duplicate: 92.0 is outside 0 to 1"),
    ("[scoring]\nworked = \"lots\"", "memdir.toml:3 [scoring] worked: expected float, got 'lots'"),
    ("[context]\nslots_overall = -1", "memdir.toml:3 [context] slots_overall: -1 is outside 0 to 100"),
    ("[context]\nmax_chars = 0", "memdir.toml:3 [context] max_chars: 0 is not above 0"),
    ("[server]\nidle_exit_seconds = -1", "memdir.toml:3 [server] idle_exit_seconds: -1.0 is below 0"),
    # review of session 16: `memdir ingest` met inf as an OverflowError traceback, and every search met max_limit = 0
    # (default_limit = 0: every search without a limit) as "limit must be between 1 and 0"
    ("[vault]\nmax_document_mb = inf", "memdir.toml:3 [vault] max_document_mb: inf is not a finite number"),
    ("[search]\nmax_limit = 0", "memdir.toml:3 [search] max_limit: 0 is not above 0"),
    ("[search]\ndefault_limit = 0", "memdir.toml:3 [search] default_limit: 0 is not above 0"),
    ("[search]\nmax_query_chars = -1", "memdir.toml:3 [search] max_query_chars: -1 is not above 0"),
    # session 20: "never", written as a span no date can be taken from, failed every search with an OverflowError
    ("[lifecycle]\nhistory_max_age_days = 99999999",
     "memdir.toml:3 [lifecycle] history_max_age_days: 99999999.0 is outside 0 to 36500"),
    ("[lifecycle]\nworking_max_age_hours = 1e12", "memdir.toml:3 [lifecycle] working_max_age_hours: 1000000000000.0 is "
                                                 "outside 0 to 876000"),
    ("[lifecycle]\ntype_ttl_days = { plan = 1e9 }", "memdir.toml:3 [lifecycle] type_ttl_days: plan = 1000000000.0 is "
                                                   "outside 0 to 36500 days"),
])
def test_a_value_memdir_cannot_use_is_refused_with_file_line_and_key(tmp_path: Path, section: str, line: str):
    assert line in refusal(tmp_path, f"# settings\n{section}\n")


def refusal(root: Path, text: str) -> str:
    """The error a memdir.toml of `text` is refused with."""
    (root / "memdir.toml").write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_config(root)
    return str(refused.value)


def test_the_defaults_and_the_edges_of_each_range_are_accepted(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text("[vault]\noutcome_history = 1\n[lifecycle]\nremove_below = 0\n"
                                          "patterns_min_score = 1\n[dedup]\nnear_duplicate = 1.0\n")
    loaded = load_config(tmp_path)
    assert loaded.vault.outcome_history == 1 and loaded.dedup.near_duplicate == 1.0



# Every numeric [search] key the range checks before this one left open, with a value no search can use.
SEARCH_IMPOSSIBLE = [
    ("candidates = 0", "candidates: 0 is not above 0"),
    ("keyword_postings_budget = -1", "keyword_postings_budget: -1 is below 0"),
    ("rrf_k = -60", "rrf_k: -60 is below 0"),
    ("vector_weight = -0.5", "vector_weight: -0.5 is below 0"),
    ("keyword_weight = -1", "keyword_weight: -1.0 is below 0"),
    ("bm25_b = 1.5", "bm25_b: 1.5 is outside 0 to 1"),
    ("bm25_k1 = -0.5", "bm25_k1: -0.5 is below 0"),
    ("context_boost = -1", "context_boost: -1.0 is below 0"),
    ("previous_weight = -0.5", "previous_weight: -0.5 is below 0"),
    ("next_weight = -0.3", "next_weight: -0.3 is below 0"),
    ("cosine_floor = 15", "cosine_floor: 15.0 is outside 0 to 1"),
    ("cosine_full = 0.1", "cosine_full: 0.1 is not above cosine_floor (0.15) and at most 1"),
    ("calibration_midpoint = 35", "calibration_midpoint: 35.0 is outside 0 to 1"),
    ("calibration_steepness = 0", "calibration_steepness: 0.0 is not above 0"),
    ("evidence_weight = 1.5", "evidence_weight: 1.5 is outside 0 to 1"),
    ("quality_explore = -0.1", "quality_explore: -0.1 is below 0"),
    ("quality_bank_outcome_uses = -3", "quality_bank_outcome_uses: -3 is below 0"),
    ("time_match_boost = -0.3", "time_match_boost: -0.3 is below 0"),
    ("thread_lift = -0.15", "thread_lift: -0.15 is below 0"),
    ("thread_reach = -2", "thread_reach: -2 is below 0"),
    ("conversation_lift = -0.1", "conversation_lift: -0.1 is below 0"),
    ("conversation_reach = -10", "conversation_reach: -10 is below 0"),
    ("hop_seeds = -1", "hop_seeds: -1 is below 0"),
    ("hop_beta = -1", "hop_beta: -1.0 is below 0"),
    ("hop_share = 50", "hop_share: 50.0 is outside 0 to 1"),
    ("author_boost = -0.44", "author_boost: -0.44 is below 0"),
    ("graph_factor = 2", "graph_factor: 2.0 is outside 0 to 1"),
    ("default_limit = 0", "default_limit: 0 is not above 0"),
    ("max_limit = 0", "max_limit: 0 is not above 0"),
    ("default_limit = 500", "default_limit: 500 is above max_limit (100)"),
    ("max_query_chars = 0", "max_query_chars: 0 is not above 0"),
    ("score_threshold = 5", "score_threshold: 5.0 is outside 0 to 1"),
    ("stale_factor = 85", "stale_factor: 85.0 is outside 0 to 1"),
    ("vector_weight = inf", "vector_weight: inf is not a finite number"),
    ("rrf_k = 60\nbm25_k1 = nan", "bm25_k1: nan is not a finite number"),
]


@pytest.mark.parametrize("setting, reason", SEARCH_IMPOSSIBLE, ids=[s.split(" =")[0] for s, _ in SEARCH_IMPOSSIBLE])
def test_an_impossible_search_value_is_refused_with_its_line(tmp_path: Path, setting: str, reason: str):
    line = 3 + setting.count("\n")
    assert f"memdir.toml:{line} [search] {reason}" in refusal(tmp_path, f"# settings\n[search]\n{setting}\n")


@pytest.mark.parametrize("table, reason", [
    ("window_days = -14.0", "recency.journal.window_days: -14.0 is below 0"),
    ("max_boost = -0.1", "recency.journal.max_boost: -0.1 is below 0"),
    ("window_days = inf", "recency.journal.window_days: inf is not a finite number"),
    ("decay = 95", "recency.journal.decay: 95.0 is outside 0 to 1"),
])
def test_an_impossible_recency_rule_is_refused_with_its_line(tmp_path: Path, table: str, reason: str):
    assert f"memdir.toml:3 [search] {reason}" in refusal(tmp_path, f"# settings\n[search.recency.journal]\n{table}\n")


def test_the_search_defaults_and_the_edges_of_their_ranges_are_accepted(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text(
        "[search]\nkeyword_postings_budget = 0\nrrf_k = 0\nbm25_b = 1\nhop_share = 0\ncosine_full = 1\n"
        "thread_reach = 0\ndefault_limit = 100\nevidence_weight = 0\n[search.recency.journal]\ndecay = 1.0\nwindow_days = 0\n")
    loaded = load_config(tmp_path)
    assert loaded.search.cosine_full == 1.0 and loaded.search.recency["journal"]["decay"] == 1.0
    assert loaded.search.recency["plan"]["decay"] == 0.93  # a table overrides its keys, the other types keep theirs


def test_a_negative_watcher_time_is_refused_with_its_line(tmp_path: Path):
    refused = refusal(tmp_path, "[watch]\ndebounce_seconds = -0.25\n")
    assert "memdir.toml:2 [watch] debounce_seconds: -0.25 is below 0" in refused
