"""The turn log the Turns page reads: appended lines are parsed once, a half-written or foreign line is
skipped, and a replaced log is read afresh."""

from __future__ import annotations

from pathlib import Path

from mcp_server.service import turns


def test_the_turn_log_reads_what_was_appended_since_and_skips_torn_or_foreign_lines(tmp_path: Path):
    turns.record(tmp_path, "prompt", "s-1", 1, prompt=turns.first_line("\n  First line of it  \nsecond"), shown=[])
    turns.record(tmp_path, "score", "s-1", 2, scores={"m-00000001": "worked"})
    first = turns.read(tmp_path)
    assert [(e["kind"], e["turn"]) for e in first] == [("prompt", 1), ("score", 2)]
    assert first[0]["prompt"] == "First line of it"
    log = tmp_path / turns.LOG_NAME
    with open(log, "ab") as handle:
        handle.write(b'not json\n["a list"]\n{"kind": "prompt", "session": "s-2", "turn": 1, "at": 1.0, "shown": []}\n{"kind": "pro')
    assert [(e["session"], e["turn"]) for e in turns.read(tmp_path)] == [("s-1", 1), ("s-1", 2), ("s-2", 1)]
    with open(log, "ab") as handle:
        handle.write(b'mpt", "session": "s-2", "turn": 2, "at": 2.0, "shown": []}\n')  # the half line, finished
    assert [(e["session"], e["turn"]) for e in turns.read(tmp_path)][-1] == ("s-2", 2)
    log.unlink()
    turns.record(tmp_path, "prompt", "s-3", 1, prompt="anew", shown=[])
    assert [e["session"] for e in turns.read(tmp_path)] == ["s-3"]


def test_the_log_is_bounded_on_disk_keeping_one_older_generation(tmp_path, monkeypatch):
    monkeypatch.setattr(turns, "KEEP_BYTES", 400)
    for turn in range(1, 40):
        turns.record(tmp_path, "score", "s-1", turn, scores={"m-00000001": "worked"})
    log = tmp_path / turns.LOG_NAME
    older = log.with_name(log.name + ".1")
    assert log.stat().st_size <= 400 + 200 and older.exists() and older.stat().st_size <= 400 + 200
    assert turns.read(tmp_path)[-1]["turn"] == 39  # the newest turns are still read
