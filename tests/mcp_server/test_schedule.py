"""The lifecycle runs itself: at server start and then on the schedule in memdir.toml."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from mcp_server.server.schedule import Every
from vault import Vault
from vault.config import load_sections
from vault.errors import ConfigError
from vault.settings import VAULT_SECTIONS, LifecycleSettings

from .processes import start_server, stop_all, wait_for


def test_a_schedule_runs_at_once_then_again_and_a_failing_run_does_not_end_it():
    calls: list[int] = []
    twice = threading.Event()

    def job() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the first run fails")
        twice.set()

    every = Every(0.01, job, "test")
    every.start()
    assert twice.wait(10), "the schedule stopped after a failing run"
    every.stop()
    assert every.runs >= 2


def test_off_never_runs():
    every = Every(LifecycleSettings(every="off").every_seconds, lambda: 1 / 0, "test")
    every.start()
    every.stop()
    assert every.runs == 0 and not every.ran.is_set()


@pytest.mark.parametrize("text, seconds", [("30m", 1800), ("1h", 3600), ("1.5d", 129600), ("off", None), ("2s", 2)])
def test_schedule_values_parse(text: str, seconds: float | None):
    assert LifecycleSettings(every=text).every_seconds == seconds


def test_a_schedule_that_does_not_parse_names_the_file_line_and_key(tmp_path: Path):
    (tmp_path / "memdir.toml").write_text('[vault]\n\n[lifecycle]\nhistory_min_uses = 2\nevery = "hourly"\n')
    with pytest.raises(ConfigError, match=r"memdir.toml:5 \[lifecycle\] every: 'hourly' is not an interval"):
        load_sections(tmp_path, VAULT_SECTIONS)


@pytest.mark.slow
def test_the_server_applies_the_lifecycle_at_start_and_logs_it(hashing_example: Path):
    working = {m.id for m in Vault(hashing_example).scan().memories if m.collection == "working"}
    assert working, "the example vault has working memories days old"
    process = start_server(hashing_example)
    log = hashing_example / ".memdir" / "lifecycle.jsonl"
    try:
        wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= len(working))
    finally:
        stop_all(hashing_example, process)
    logged = {json.loads(line)["id"] for line in log.read_text().splitlines()}
    assert working <= logged
    left = {m.id for m in Vault(hashing_example).scan().memories if m.collection == "working"}
    assert not left & working and list((hashing_example / ".trash").rglob("*.md"))
