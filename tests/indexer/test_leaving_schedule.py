"""A served searcher's lifecycle schedule (indexer/leaving.py) leaves out exactly the memories that deciding every memory
leaves out, at every moment of a clock that moves by seconds or by weeks, while memories change, come and go: after its
full decision it decides only those the clock or a change reached, until its horizon a day ahead. A memory's decision
holds until its next change (`lifecycle.next_change`), and once leaving for good. A clock set back is decided again in
full."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from indexer.leaving import LeavingSchedule
from indexer.search import Searcher
from indexer.settings import SearchSettings
from vault import Change, Vault, lifecycle
from vault.model import Memory
from vault.settings import LifecycleSettings

from .helpers import open_index, reader
from .test_lazy_rows import decoded_rows

START = datetime(2026, 10, 1, tzinfo=timezone.utc)
RULE_SETS = [
    LifecycleSettings(),
    LifecycleSettings(working_max_age_hours=3, history_max_age_days=2,
                      type_ttl_days={"context": 0.5, "objective": 1, "journal": 4, "history": 3}),
]
TYPES = ["context", "objective", "plan", "journal", "observation", "history", "fact", "decision"]


def _moment(rng: random.Random) -> datetime:
    return START + timedelta(days=rng.uniform(-20, 40), seconds=rng.choice([0, 0.25, 0.5]))


def _iso(moment: datetime, rng: random.Random) -> str:
    """In UTC or another offset, with or without a fraction of a second (the rules read them all)."""
    return moment.astimezone(timezone(timedelta(hours=rng.choice([0, 0, 2, -5])))).isoformat()


def _fields(rng: random.Random) -> dict[str, object]:
    uses = rng.choice([0, 0, 1, 3, 5])
    fields: dict[str, object] = {
        "collection": rng.choice(["working", "history", "history", "patterns", "memory_bank", "books"]),
        "type": rng.choice(TYPES), "uses": uses, "score": rng.choice([0.1, 0.3, 0.5, 0.8, 0.95]),
        "success_count": rng.choice([0, uses // 2, uses]), "status": rng.choice(["active"] * 8 + ["archived", "superseded"]),
    }
    if uses:
        fields["outcomes"] = [rng.choice(["failed", "worked", "unknown"]) for _ in range(uses)]
    if rng.random() < 0.4:
        fields["last_used_at"] = _moment(rng)
    if rng.random() < 0.2:
        fields["deadline"] = rng.choice([_moment(rng).date().isoformat(), "soon", _moment(rng).isoformat()])
    return fields


def _write(root: Path, n: int, rng: random.Random) -> None:
    fields = _fields(rng)
    lines = [f"id: m-{n:04d}", f"title: note {n}", f"created_at: {_iso(_moment(rng), rng)}"]
    for key, value in fields.items():
        if isinstance(value, datetime):
            value = _iso(value, rng)
        elif isinstance(value, list):
            value = "[" + ", ".join(value) + "]"
        lines.append(f"{key}: {value}")
    folder = root / str(fields["collection"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"n{n}.md").write_text("---\n" + "\n".join(lines) + f"\n---\nNote {n} about the deploy.\n")


def _every_decided(index, now: datetime, rules: LifecycleSettings) -> frozenset[str]:
    return frozenset(r.id for r in index.lifecycle_records() if lifecycle.leaving(r, now, rules))


def test_between_now_and_its_next_change_a_memorys_decision_does_not_move():
    rng = random.Random(5)
    moved = 0
    for _ in range(3000):
        rules = rng.choice(RULE_SETS)
        f = _fields(rng)
        deadline = f.get("deadline")
        memory = Memory(id="m", path="x.md", collection=str(f["collection"]), type=str(f["type"]), title="t", body="b",
                        created_at=_moment(rng), last_used_at=f.get("last_used_at"),  # type: ignore[arg-type]
                        uses=int(f["uses"]), score=float(f["score"]),  # type: ignore[arg-type]
                        success_count=float(f["success_count"]), status=str(f["status"]),  # type: ignore[arg-type]
                        outcomes=tuple(f.get("outcomes", ())),  # type: ignore[arg-type]
                        frontmatter={"deadline": deadline} if deadline else {})
        now = _moment(rng)
        decided = bool(lifecycle.leaving(memory, now, rules))  # whether it leaves (the reason counts the days)
        until = lifecycle.next_change(memory, now, rules)
        for later in [now + timedelta(seconds=rng.expovariate(1 / 86400)) for _ in range(5)]:
            if until is None or later <= until:
                assert bool(lifecycle.leaving(memory, later, rules)) == decided, (memory, now, later, until)
            if decided:  # once leaving, for good while unchanged
                assert lifecycle.leaving(memory, later, rules), (memory, now, later)
        if until is not None:
            moved += bool(lifecycle.leaving(memory, until + timedelta(microseconds=1), rules)) != decided
    assert moved > 100  # the moments are where decisions move, not a bound that never comes


def test_a_served_searcher_leaves_out_what_deciding_every_memory_does_at_every_moment_after_one_full_decision(tmp_path):
    for seed, rules in enumerate(RULE_SETS):
        rng = random.Random(seed)
        root = tmp_path / f"vault{seed}"
        for n in range(150):
            _write(root, n, rng)
        index = open_index(root)
        assert index.memory_count() == 150  # every file a valid memory
        vault = Vault(root)
        searcher = Searcher(index, SearchSettings(embedder="hashing-256"), lifecycle=rules)
        schedule = searcher._leaving
        assert isinstance(schedule, LeavingSchedule)
        now, added, seen, within = START - timedelta(days=25), 150, set(), 0
        for step in range(120):
            now += timedelta(seconds=rng.choice([0, 1, 59, 3600, 3600, 5 * 3600, 5 * 3600, 86400, 3 * 86400]) * rng.random())
            if step % 7 == 3:  # memories change, are forgotten, are written
                for memory in rng.sample(list(index.all_memories()), 3):
                    vault.edit(memory, Change(fields={k: v for k, v in _fields(rng).items() if k != "collection"}))
                (root / rng.choice([m.path for m in index.all_memories()])).unlink()
                _write(root, added, rng)
                added += 1
                index.sync()
            expected = _every_decided(index, now, rules)
            passes, horizon = schedule.full_passes, schedule._horizon
            assert searcher.out_of_sight(now) == expected, (seed, step, now)
            seen.add(expected)
            if horizon is not None and now <= horizon:  # within its day, nothing decided in full
                assert schedule.full_passes == passes
                within += 1
        assert len(seen) > 10 and within > 60  # the set moved many times; mostly by the schedule alone
        passes = schedule.full_passes
        back = now - timedelta(days=10)  # a clock set back: what left may stay again
        assert searcher.out_of_sight(back) == _every_decided(index, back, rules) and schedule.full_passes == passes + 1
        index.close()


def test_a_search_that_read_the_clock_just_before_another_decided_is_answered_as_of_that_one(tmp_path):
    """Concurrent searches read the clock before the index lock: a second one's earlier time does not decide every
    memory again."""
    root = tmp_path / "vault"
    rng = random.Random(9)
    for n in range(40):
        _write(root, n, rng)
    index = open_index(root)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"), lifecycle=RULE_SETS[1])
    now = START + timedelta(days=3)
    first = searcher.out_of_sight(now)
    assert searcher.out_of_sight(now - timedelta(seconds=2)) is first
    assert searcher._leaving.full_passes == 1  # type: ignore[union-attr]
    index.close()


def test_after_a_cold_open_neither_the_first_decision_nor_the_clock_passing_moments_decodes_a_row(tmp_path, monkeypatch):
    root = tmp_path / "vault"
    rng = random.Random(3)
    for n in range(60):
        _write(root, n, rng)
    open_index(root).close()
    decoded = decoded_rows(monkeypatch)
    index = reader(root)
    at_open = list(decoded)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"), lifecycle=RULE_SETS[1])
    now, sets = START, set()
    for _ in range(40):
        now += timedelta(hours=7)
        sets.add(searcher.out_of_sight(now))
        assert searcher.out_of_sight(now) == _every_decided(index, now, RULE_SETS[1])
    assert decoded == at_open and len(sets) > 5  # the set moved with the clock, from the rows' facts alone
    index.close()


def test_past_its_horizon_the_schedule_decides_again_only_the_memories_not_leaving_or_changed_since(tmp_path, monkeypatch):
    """A memory leaving stays leaving while it is unchanged (the rules count only the time since its dates): the day's
    full pass leaves those out, and decides the ones changed or forgotten since as any other."""
    root = tmp_path / "vault"
    rng = random.Random(11)
    for n in range(150):
        _write(root, n, rng)
    index = open_index(root)
    vault = Vault(root)
    rules = RULE_SETS[1]
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"), lifecycle=rules)
    now = START
    before = searcher.out_of_sight(now)
    assert len(before) > 20
    edited = rng.sample(sorted(before), 6)
    for memory_id in edited[:4]:
        memory = index.memory(memory_id)
        vault.edit(memory, Change(fields={k: v for k, v in _fields(rng).items() if k != "collection"}))
    for memory_id in edited[4:]:
        (root / index.memory(memory_id).path).unlink()
    index.sync()
    decided: list[str] = []
    real = lifecycle.leaving
    monkeypatch.setattr(lifecycle, "leaving", lambda record, *a, **k: decided.append(record.id) or real(record, *a, **k))
    passes = searcher._leaving.full_passes  # type: ignore[union-attr]
    now += timedelta(days=2)  # past the horizon
    after = searcher.out_of_sight(now)
    assert searcher._leaving.full_passes == passes + 1  # type: ignore[union-attr]
    assert not set(decided) & (before - set(edited))  # those still leaving were not decided again
    assert set(edited[:4]) <= set(decided)  # the changed ones were
    monkeypatch.setattr(lifecycle, "leaving", real)
    assert after == _every_decided(index, now, rules)
    index.close()
