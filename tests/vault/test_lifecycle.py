from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import write
from vault import Vault, parse
from vault import lifecycle as lc
from vault.settings import LifecycleSettings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
S = LifecycleSettings()


def memory(collection, *, score=0.5, uses=0, success=0.0, age=timedelta(0), type="learning", last_used=None,
           extra=""):
    created = (NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ")
    used = f"last_used_at: {(NOW - last_used).strftime('%Y-%m-%dT%H:%M:%SZ')}\n" if last_used is not None else ""
    text = (f"---\nid: m-0000abcd\ncollection: {collection}\ntype: {type}\ntitle: t\ncreated_at: {created}\n"
            f"score: {score}\nuses: {uses}\nsuccess_count: {success}\n{used}{extra}---\nbody\n")
    return parse(text.encode(), f"{collection}/t.md")


def decide(m):
    decisions = lc.plan([m], NOW, S)
    return (decisions[0].action, decisions[0].to_collection) if decisions else None


DAY, HOUR = timedelta(days=1), timedelta(hours=1)


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        (dict(score=0.7, uses=2, age=25 * HOUR), ("promote", "history")),
        (dict(score=0.69, uses=2, age=25 * HOUR), ("remove", None)),
        (dict(score=0.7, uses=1, age=25 * HOUR), ("remove", None)),
        (dict(score=0.7, uses=2, age=23 * HOUR), None),
        (dict(score=0.19, uses=3, age=HOUR), ("remove", None)),  # counters only, not one success
        (dict(score=0.19, uses=1, age=HOUR), None),
        (dict(score=0.2, uses=1, age=HOUR), None),
        (dict(score=0.1, uses=0, age=HOUR), None),
    ],
)
def test_working_thresholds(kwargs, expected):
    assert decide(memory("working", **kwargs)) == expected


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        # success_count never exceeds uses, so "success ≥ 5" already implies at least 5 uses
        (dict(score=0.9, uses=5, success=5.0), ("promote", "patterns")),
        (dict(score=0.89, uses=5, success=5.0), None),
        (dict(score=0.9, uses=6, success=4.5), None),
        (dict(score=0.5, uses=1, age=31 * DAY), ("remove", None)),
        (dict(score=0.5, uses=1, age=29 * DAY), None),
        (dict(score=0.5, uses=1, age=40 * DAY, last_used=2 * DAY), None),
    ],
)
def test_history_thresholds(kwargs, expected):
    assert decide(memory("history", **kwargs)) == expected


@pytest.mark.parametrize(
    "score, uses, expected",
    [(0.39, 5, ("demote", "history")), (0.4, 5, None), (0.19, 5, ("remove", None))],
)
def test_patterns_thresholds(score, uses, expected):
    assert decide(memory("patterns", score=score, uses=uses)) == expected


def test_a_helpful_memory_that_drew_two_wrong_failed_in_a_row_is_not_trashed():
    unlucky = memory("working", score=0.1, uses=3, success=1.0, age=HOUR, extra="outcomes: [worked, failed, failed]\n")
    assert decide(unlucky) is None


def test_a_memory_below_the_threshold_whose_last_three_outcomes_failed_is_trashed_and_says_why():
    misleading = memory("working", score=0.0, uses=4, success=1.0, age=HOUR,
                        extra="outcomes: [worked, failed, failed, failed]\n")
    [decision] = lc.plan([misleading], NOW, S)
    assert (decision.action, decision.why) == ("remove", "score 0.00 < 0.2 after 4 uses, the last 3 failed")


def test_a_memory_most_of_whose_uses_worked_is_not_trashed_by_a_streak_of_failures():
    record = "outcomes: [worked, worked, worked, worked, worked, worked, worked, failed, failed, failed]\n"
    assert decide(memory("history", score=0.1, uses=10, success=7.0, age=DAY, extra=record)) is None


def test_a_takeaways_first_entry_is_not_a_use_and_does_not_lengthen_the_streak():
    recorded_as_failed = memory("working", score=0.0, uses=2, success=0.0, age=HOUR,
                                extra="outcomes: [failed, failed, failed]\n")
    assert decide(recorded_as_failed) is None


def test_remove_after_failures_below_one_is_refused_with_the_file_line_and_key(tmp_path):
    (tmp_path / "memdir.toml").write_text("[lifecycle]\nremove_after_failures = 0\n")
    from vault.config import load_sections
    from vault.errors import ConfigError
    with pytest.raises(ConfigError, match=r"memdir.toml:2 \[lifecycle\] remove_after_failures: 0 is below 1"):
        load_sections(tmp_path, {"lifecycle": LifecycleSettings})


def test_a_streak_broken_by_a_partial_does_not_count():
    assert decide(memory("working", score=0.1, uses=4, success=0.5, age=HOUR,
                         extra="outcomes: [failed, failed, partial, failed]\n")) is None


def test_type_ttls_remove_scored_memories_and_archive_memory_bank_ones():
    assert decide(memory("patterns", type="context", age=8 * DAY)) == ("remove", None)
    assert decide(memory("patterns", type="context", age=6 * DAY)) is None
    assert decide(memory("memory_bank", type="objective", age=31 * DAY)) == ("archive", None)
    assert decide(memory("memory_bank", type="preference", age=900 * DAY)) is None


def test_an_objective_with_a_deadline_lives_until_its_ttl_after_the_deadline():
    due_in_february = "deadline: 2027-02-01\n"
    assert decide(memory("memory_bank", type="objective", age=90 * DAY, extra=due_in_february)) is None
    long_past = "deadline: 2026-09-01\n"
    assert decide(memory("memory_bank", type="objective", age=90 * DAY, extra=long_past)) == ("archive", None)
    assert decide(memory("memory_bank", type="objective", age=90 * DAY, extra='deadline: "2026-11-10"\n')) is None
    unreadable = "deadline: next spring\n"  # no date to go by: the age rule applies
    assert decide(memory("memory_bank", type="objective", age=31 * DAY, extra=unreadable)) == ("archive", None)


def test_books_and_superseded_memories_are_left_alone():
    assert decide(memory("books", age=900 * DAY)) is None


def test_applying_moves_promoted_files_trashes_removed_ones_and_logs_every_decision(vault: Vault):
    promoted = write(vault.root, "working/keep.md", "---\nid: m-00000001\ncollection: working\ntitle: keep\n"
                     "created_at: 2026-11-20T00:00:00Z\nscore: 0.8\nuses: 3\n---\nx\n")
    write(vault.root, "working/drop.md", "---\nid: m-00000002\ncollection: working\ntitle: drop\n"
          "created_at: 2026-11-20T00:00:00Z\nscore: 0.5\nuses: 0\n---\ny\n")
    write(vault.root, "notes/keep2.md", "---\nid: m-00000003\ncollection: working\ntitle: keep2\n"
          "created_at: 2026-11-20T00:00:00Z\nscore: 0.9\nuses: 2\n---\nz\n")
    memories = {m.id: m for m in vault.scan().memories}
    applied = lc.apply(vault, lc.plan(memories.values(), NOW, S), memories, NOW)
    assert {a.decision.id: a.decision.action for a in applied} == {"m-00000001": "promote", "m-00000002": "remove",
                                                                   "m-00000003": "promote"}
    assert not promoted.exists() and "collection: history" in (vault.root / "history/keep.md").read_text()
    assert "collection: history" in (vault.root / "notes/keep2.md").read_text()  # a human's folder is kept
    assert any(p.name.startswith("drop.") for p in (vault.root / ".trash" / "working").iterdir())
    log = [json.loads(line) for line in (vault.root / lc.LOG_NAME).read_text().splitlines()]
    assert {entry["id"] for entry in log} == {"m-00000001", "m-00000002", "m-00000003"}
    assert all({"when", "id", "from_collection", "to_collection", "why"} <= set(entry) for entry in log)


def test_a_history_type_memory_expires_60_days_after_its_last_use():
    assert S.type_ttl_days["history"] == 60.0
    assert decide(memory("patterns", type="history", score=0.95, uses=6, success=6.0, age=61 * DAY)) == ("remove", None)
    proven_and_used = memory("patterns", type="history", score=0.95, uses=6, success=6.0, age=200 * DAY,
                             last_used=10 * DAY)
    assert decide(proven_and_used) is None
    assert decide(memory("memory_bank", type="history", age=61 * DAY)) == ("archive", None)
    assert decide(memory("memory_bank", type="history", age=59 * DAY)) is None


def test_the_history_ttl_is_set_in_memdir_toml(tmp_path):
    from vault.config import load_sections

    (tmp_path / "memdir.toml").write_text('[lifecycle]\ntype_ttl_days = { history = 14.0 }\n')
    settings = load_sections(tmp_path, {"lifecycle": LifecycleSettings})["lifecycle"]
    assert settings.type_ttl_days["history"] == 14.0 and settings.type_ttl_days["context"] == 7.0
