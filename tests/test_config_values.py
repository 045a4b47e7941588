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
])
def test_a_value_memdir_cannot_use_is_refused_with_file_line_and_key(tmp_path: Path, section: str, line: str):
    (tmp_path / "memdir.toml").write_text(f"# settings\n{section}\n")
    with pytest.raises(ConfigError) as refused:
        load_config(tmp_path)
    assert line in str(refused.value)


def test_the_defaults_and_the_edges_of_each_range_are_accepted(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text("[vault]\noutcome_history = 1\n[lifecycle]\nremove_below = 0\n"
                                          "patterns_min_score = 1\n[dedup]\nnear_duplicate = 1.0\n")
    loaded = load_config(tmp_path)
    assert loaded.vault.outcome_history == 1 and loaded.dedup.near_duplicate == 1.0

