"""The outside attack of 2026-11-26 (issue 28, items 5-8), replayed on every run: nothing of it gets through."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reliability.attacks import run_all


@pytest.mark.slow
def test_every_attack_of_items_5_to_8_is_held(tmp_path: Path):
    rows = run_all(tmp_path, half_open_count=400)  # over the 256 waiting connections, so the flood evicts itself
    assert rows and {name: got_through for name, got_through in rows.items() if got_through} == {}
