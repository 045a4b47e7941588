"""The three-way rules of the git merge driver, on bytes, without a repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault.gitmerge import merge_bytes, merge_files, register
from vault.parse import parse

BASE = """---
id: m-a4c81f63
collection: patterns
type: learning
title: Make Celery tasks idempotent
tags: [celery, retries]   # reviewed
created_at: 2026-09-18T14:03:11Z
score: 0.7
uses: 2
success_count: 1.5
outcomes: [worked, partial]
last_used_at: 2026-11-01T09:00:00Z
last_outcome: partial
---
Retries multiply side effects.
"""


def side(**changes: str) -> bytes:
    """BASE with some keys set to new values ("" removes the key)."""
    text = BASE
    for key, new in changes.items():
        line = next(line for line in text.splitlines() if line.startswith(f"{key}:"))
        text = text.replace(line + "\n", f"{key}: {new}\n" if new else "")
    return text.encode()


def scored(outcome: str, score: str, when: str, success: str) -> dict[str, str]:
    return {"score": score, "uses": "3", "success_count": success, "outcomes": f"[worked, partial, {outcome}]",
            "last_used_at": when, "last_outcome": outcome}


def test_two_machines_scoring_the_same_memory_sum_their_evidence():
    ours = side(**scored("worked", "0.9", "2026-11-02T09:00:00Z", "2.5"))
    theirs = side(**scored("failed", "0.4", "2026-11-03T09:00:00Z", "1.5"))
    result = merge_bytes(BASE.encode(), ours, theirs)
    assert result.clean
    memory = parse(result.data, "patterns/x.md")
    assert (memory.uses, memory.success_count, memory.score) == (4, 2.5, pytest.approx(0.6))
    assert memory.outcomes == ("worked", "partial", "worked", "failed")  # the earlier scoring first
    assert memory.last_outcome == "failed" and memory.last_used_at.day == 3


def test_the_same_outcome_on_both_sides_counts_twice():
    both = side(**scored("worked", "0.9", "2026-11-02T09:00:00Z", "2.5"))
    memory = parse(merge_bytes(BASE.encode(), both, both).data, "patterns/x.md")
    assert (memory.uses, memory.success_count, memory.score) == (4, 3.5, pytest.approx(1.0))
    assert memory.outcomes == ("worked", "partial", "worked", "worked")


def test_the_score_is_clamped_and_success_never_exceeds_uses():
    ours = side(score="0.1", uses="3", success_count="1.5")
    theirs = side(score="0.0", uses="3", success_count="1.5")
    memory = parse(merge_bytes(BASE.encode(), ours, theirs).data, "patterns/x.md")
    assert memory.score == 0.0 and memory.uses == 4 and memory.success_count == 1.5


def test_a_capped_outcome_history_keeps_the_newest_and_never_repeats_the_shared_part():
    base = BASE.replace("outcomes: [worked, partial]", "outcomes: [worked, partial, failed]").replace("uses: 2", "uses: 9")
    ours = base.replace("[worked, partial, failed]", "[partial, failed, worked]").replace("uses: 9", "uses: 10")
    theirs = base.replace("[worked, partial, failed]", "[failed, partial, partial]").replace("uses: 9", "uses: 11")
    theirs = theirs.replace("last_used_at: 2026-11-01T09:00:00Z", "last_used_at: 2026-11-05T09:00:00Z")
    result = merge_bytes(base.encode(), ours.encode(), theirs.encode(), history=3)
    memory = parse(result.data, "patterns/x.md")
    assert memory.uses == 12 and memory.outcomes == ("worked", "partial", "partial")


def test_only_the_changed_lines_change_and_ours_formatting_stays():
    ours = side(uses="3", success_count="2.5")
    theirs = side(tags="[celery, retries, webhooks]   # reviewed")
    result = merge_bytes(BASE.encode(), ours, theirs)
    assert result.clean
    assert result.data.decode() == ours.decode().replace("tags: [celery, retries]   # reviewed",
                                                          "tags: [celery, retries, webhooks]   # reviewed")


def test_a_key_changed_on_one_side_is_taken_and_a_key_removed_on_one_side_goes():
    ours = side(title="Idempotent Celery tasks")
    theirs = side(last_outcome="")
    text = merge_bytes(BASE.encode(), ours, theirs).data.decode()
    assert "title: Idempotent Celery tasks\n" in text and "last_outcome" not in text


def test_the_same_key_changed_differently_on_both_sides_is_a_conflict_with_markers():
    ours = side(title="Idempotent Celery tasks", uses="3", success_count="2.5")
    theirs = side(title="Idempotency first for Celery", uses="3", success_count="1.5")
    result = merge_bytes(BASE.encode(), ours, theirs, label="patterns/x.md")
    assert result.conflicts == ("patterns/x.md: 'title' was changed on both sides",)
    text = result.data.decode()
    assert ("<<<<<<< ours\ntitle: Idempotent Celery tasks\n=======\ntitle: Idempotency first for Celery\n"
            ">>>>>>> theirs\n") in text
    assert "uses: 4\n" in text  # the counters still merged


def test_bodies_merge_as_text_and_a_body_conflict_leaves_git_markers():
    base = BASE.replace("Retries multiply side effects.\n", "one\ntwo\nthree\nfour\nfive\n")
    ours = base.replace("one\n", "ONE\n")
    theirs = base.replace("five\n", "FIVE\n")
    clean = merge_bytes(base.encode(), ours.encode(), theirs.encode())
    assert clean.clean and clean.data.decode().endswith("ONE\ntwo\nthree\nfour\nFIVE\n")
    clash = merge_bytes(base.encode(), ours.encode(), base.replace("one\n", "uno\n").encode(), label="x.md")
    assert clash.conflicts == ("x.md: the text was changed on both sides (1 conflicting part)",)
    assert "<<<<<<< ours\nONE\n=======\nuno\n>>>>>>> theirs\n" in clash.data.decode()


def test_a_file_that_is_not_a_memory_falls_back_to_gits_text_merge():
    base, ours, theirs = b"# Notes\na\nb\nc\n", b"# Notes\nA\nb\nc\n", b"# Notes\na\nb\nC\n"
    assert merge_bytes(base, ours, theirs).data == b"# Notes\nA\nb\nC\n"
    broken = merge_bytes(BASE.encode(), b"---\ntitle: [unclosed\n---\nx\n", side(uses="3"))
    assert not broken.clean and b"<<<<<<<" in broken.data


def test_with_no_common_ancestor_identical_additions_merge_and_different_ids_conflict():
    assert merge_bytes(b"", BASE.encode(), BASE.encode()).data == BASE.encode()
    other = BASE.replace("m-a4c81f63", "m-0b0b0b0b").encode()
    assert "'id' was changed on both sides" in merge_bytes(b"", BASE.encode(), other).conflicts[0]


def test_merge_files_writes_the_result_into_ours(tmp_path: Path):
    paths = [tmp_path / name for name in ("base", "ours", "theirs")]
    for path, data in zip(paths, (BASE.encode(), side(uses="3", success_count="2.5"), side(uses="3"))):
        path.write_bytes(data)
    paths[1].chmod(0o640)
    assert merge_files(*paths).clean
    assert b"uses: 4\n" in paths[1].read_bytes() and paths[1].stat().st_mode & 0o777 == 0o640


def test_registration_adds_the_attributes_line_once_and_keeps_existing_lines(tmp_path: Path):
    (tmp_path / ".gitattributes").write_text("*.png binary")
    assert register(tmp_path, "memdir merge-driver %O %A %B %P") == [".gitattributes"]
    assert register(tmp_path, "memdir merge-driver %O %A %B %P") == []
    assert (tmp_path / ".gitattributes").read_text() == "*.png binary\n*.md merge=memdir\n"


def test_a_left_over_conflict_marker_makes_the_file_a_reported_problem_but_an_example_in_code_does_not():
    from vault.errors import ParseError

    conflicted = BASE.replace("Retries multiply side effects.\n", "<<<<<<< ours\nA\n=======\nB\n>>>>>>> theirs\n")
    with pytest.raises(ParseError) as problem:
        parse(conflicted.encode(), "patterns/x.md")
    assert problem.value.line == 15 and "unresolved git conflict marker '<<<<<<<'" in problem.value.reason
    example = BASE.replace("Retries multiply side effects.\n", "```diff\n<<<<<<< HEAD\n=======\n>>>>>>> main\n```\n"
                           "Title\n=======\n")
    assert parse(example.encode(), "patterns/x.md").title == "Make Celery tasks idempotent"


@pytest.mark.parametrize("key, hostile", [("uses", "1" + "0" * 400), ("uses", ".inf"), ("success_count", ".inf"),
                                          ("score", ".nan"), ("score", "-.inf")])
def test_a_counter_no_number_can_hold_is_a_conflict_on_its_key_not_a_traceback(key: str, hostile: str):
    # A pushed file with uses 10^400 or .inf: the driver failed with OverflowError, a traceback in the user's merge.
    ours = side(**{key: {"uses": "3", "success_count": "2", "score": "0.8"}[key]})
    result = merge_bytes(BASE.encode(), ours, side(**{key: hostile}), label="patterns/x.md")
    assert result.conflicts == (f"patterns/x.md: '{key}' was changed on both sides",)
