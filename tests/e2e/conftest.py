"""The end-to-end tests run the real Claude Code (and may install it with npm) or Chromium: they run
when asked for (`-m e2e`, or MEMDIR_E2E=1) and skip, saying how to run them, in the ordinary suite."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "e2e" in (config.getoption("markexpr") or "") or os.environ.get("MEMDIR_E2E") == "1":
        return
    skip = pytest.mark.skip(reason="end-to-end test (real Claude Code or Chromium): run with `pytest -m e2e` or MEMDIR_E2E=1")
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(skip)
