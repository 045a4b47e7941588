"""SIGKILL at random points of the write path never leaves a torn, empty or half-made file."""

from __future__ import annotations

import random
import subprocess
import sys

from tests.conftest import REPO, write
from vault import Vault, atomic, parse

TEMPLATE = """---
id: m-0badc0de
collection: history
type: learning
title: Counter under fire
created_at: 2026-11-01T08:00:00Z
uses: {uses}
---
The body must survive every crash byte for byte.
"""
CHILD_WRITES = 4
SYSCALLS_PER_ROUND = 9  # update: write, fsync, replace, fsync dir; create: write, fsync, link, unlink, fsync dir


def test_sigkill_at_random_points_of_110_writers_never_tears_a_file(vault: Vault):
    path = write(vault.root, "history/counter.md", TEMPLATE.format(uses=0))
    rng = random.Random(20261122)
    acknowledged = 0
    kill_points = 0
    attempts = 0
    while kill_points < 110 and attempts < 200:
        attempts += 1
        kill_at = rng.randint(1, CHILD_WRITES * SYSCALLS_PER_ROUND)
        child = subprocess.run(
            [sys.executable, "-m", "tests.crash_writer", str(vault.root), "history/counter.md", str(CHILD_WRITES),
             str(kill_at)],
            cwd=REPO, capture_output=True, text=True, timeout=60,
        )
        if child.returncode == -9:
            kill_points += 1
        acks = [int(line.split()[1]) for line in child.stdout.splitlines() if line.startswith("ack ")]
        acknowledged = acks[-1] if acks else acknowledged
        data = path.read_bytes()
        uses = parse(data, "history/counter.md").uses
        assert uses in (acknowledged, acknowledged + 1), "an acknowledged write was lost"
        assert data == TEMPLATE.format(uses=uses).encode(), "torn file"
        acknowledged = uses
        for created in vault.root.joinpath("working").iterdir():
            if not created.name.startswith(atomic.TEMP_PREFIX):
                assert parse(created.read_bytes(), "working/" + created.name).collection == "working"
        atomic.sweep_temp_files(vault.root)
    assert kill_points >= 110
    assert not [p for p in vault.root.rglob(atomic.TEMP_PREFIX + "*")]
