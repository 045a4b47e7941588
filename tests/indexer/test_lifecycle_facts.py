"""The lifecycle rules decide every memory from the manifest's facts table (lifecycle_facts.py), not from decoded rows:
a served searcher's first search after a cold open decodes only its candidates and still hides what the next lifecycle
run removes and what is superseded; the facts decide what the memories decide; a generation written before the table is
migrated by its owner's open and then equals a fresh build, without re-embedding anything."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from indexer.embed import HashingEmbedder
from indexer.generations import Layout
from indexer.index import Index
from indexer.lifecycle_facts import Facts
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from vault import Change, Vault, lifecycle
from vault.settings import LifecycleSettings

from .helpers import counting, note, open_index, reader, rebuilt_state, state
from .test_lazy_rows import decoded_rows

RULES = LifecycleSettings()
NOWS = [datetime(2026, 10, 1, 13, tzinfo=timezone.utc), datetime(2026, 10, 3, tzinfo=timezone.utc),
        datetime(2026, 11, 15, tzinfo=timezone.utc), datetime(2027, 3, 1, tzinfo=timezone.utc)]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Thirty plain patterns, and one memory for each way the lifecycle rules decide: aged out of working, idle in
    history, past a type's time to live, past a deadline (a date, a datetime, a word), failing in a row, promoted,
    demoted, a book, archived, superseded."""
    folder = tmp_path / "vault"
    for n in range(30):
        note(folder, f"patterns/p{n:02}.md", f"m-p{n:02}", f"Pattern {n}: retry the flaky deploy step {n} times.",
             "type: decision\n", "2026-11-01")
    note(folder, "working/old.md", "m-old-working", "Scratch note about the flaky deploy cache.", "type: context\n")
    note(folder, "working/fresh.md", "m-fresh", "Fresh scratch note about the deploy.", "", "2026-12-01")
    note(folder, "history/idle.md", "m-idle", "What we did about the deploy queue.",
         "type: fact\nlast_used_at: 2026-10-02T08:00:00Z\n")
    note(folder, "history/journal.md", "m-journal", "Journal of the deploy week.", "type: journal\n")
    note(folder, "memory_bank/goal.md", "m-goal", "Objective: the deploy takes under a minute.",
         "type: objective\ndeadline: 2026-10-20\n")
    note(folder, "memory_bank/goal2.md", "m-goal2", "Objective: the deploy has a dry run.",
         "type: objective\ndeadline: 2026-12-01T10:00:00+02:00\n")
    note(folder, "memory_bank/goal3.md", "m-goal3", "Objective: the deploy is boring.", "type: objective\ndeadline: soon\n")
    note(folder, "history/failing.md", "m-failing", "Deploy by hand from the laptop.",
         "type: learning\nuses: 4\nscore: 0.1\nsuccess_count: 0\noutcomes: [failed, failed, failed, failed]\n")
    note(folder, "working/proven.md", "m-proven", "Deploy behind a feature flag.", "type: learning\nuses: 3\nscore: 0.8\n")
    note(folder, "patterns/weak.md", "m-weak", "Deploy on Fridays.", "type: decision\nscore: 0.3\n")
    note(folder, "books/guide.md", "m-book", "A book chapter on deploys.", "type: context\n")
    note(folder, "patterns/archived.md", "m-archived", "The deploy rule we dropped.", "status: archived\n")
    note(folder, "patterns/before.md", "m-before", "The flaky deploy step, retried by hand.", "type: decision\n")
    note(folder, "patterns/after.md", "m-after", "The flaky deploy step, retried by the runner.",
         "type: decision\nsupersedes: [m-before]\n", "2026-11-02")
    return folder


def test_every_memory_is_decided_from_its_facts_as_from_its_memory_without_decoding_a_row(root: Path, monkeypatch):
    open_index(root).close()
    decoded = decoded_rows(monkeypatch)
    index = reader(root)
    at_open = set(decoded)
    records = list(index.lifecycle_records())
    assert set(decoded) == at_open and all(type(r) is Facts for r in records if r.id not in at_open)  # none decoded
    memories = {m.id: m for m in reader(root).all_memories()}
    assert [r.id for r in records] == list(memories)
    for now in NOWS:
        assert [lifecycle.leaving(r, now, RULES) for r in records] == [lifecycle.leaving(m, now, RULES) for m in memories.values()]
        assert lifecycle.plan(records, now, RULES) == lifecycle.plan(memories.values(), now, RULES)  # type: ignore[arg-type]
    leaving = {r.id for r in records if lifecycle.leaving(r, NOWS[2], RULES)}
    assert leaving == {"m-old-working", "m-idle", "m-journal", "m-goal3", "m-failing"}  # aged, idle, expired, failing
    assert {"m-goal", "m-goal2"} <= {r.id for r in records if lifecycle.leaving(r, NOWS[3], RULES)}  # past their deadlines
    assert {d.action for now in NOWS for d in lifecycle.plan(records, now, RULES)} == {"remove", "archive", "promote", "demote"}  # type: ignore[arg-type]
    index.close()


def test_a_served_first_search_decodes_its_candidates_and_hides_leaving_and_superseded_memories(root: Path, monkeypatch):
    open_index(root).close()
    decoded = decoded_rows(monkeypatch)
    index = reader(root)
    at_open = set(decoded)
    settings = SearchSettings(embedder="hashing-256", score_threshold=0.0, candidates=5)
    searcher = Searcher(index, settings, lifecycle=RULES)  # as a served vault's searcher, the schedule on
    hits = searcher.search(SearchRequest(query="the flaky deploy step cache", limit=10, now=NOWS[2]))
    ids = [h.memory.id for h in hits]
    assert ids and not {"m-old-working", "m-before"} & set(ids)  # aged out of working; superseded
    assert len(set(decoded) - at_open) <= 2 * settings.candidates + 1  # the two channels' candidates, the archived row
    shown = Searcher(reader(root), settings).search(SearchRequest(query="the flaky deploy step cache", limit=10,
                                                                  include_superseded=True, now=NOWS[2]))
    assert "m-old-working" in [h.memory.id for h in shown]  # without the lifecycle on, it competes (and matches)
    index.close()


def test_after_a_change_a_served_search_decides_again_only_the_memories_that_changed(root: Path, monkeypatch):
    index = open_index(root)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256", score_threshold=0.0), lifecycle=RULES)
    now = NOWS[2]
    ask = SearchRequest(query="deploy", limit=50, now=now)
    leaving = {"m-old-working", "m-idle", "m-journal", "m-goal3", "m-failing"}
    assert not leaving & {h.memory.id for h in searcher.search(ask)}
    decided: list[str] = []
    deciding = lifecycle.leaving
    monkeypatch.setattr(lifecycle, "leaving", lambda m, *rest: decided.append(m.id) or deciding(m, *rest))
    vault = Vault(root)
    vault.edit(index.memory("m-p03"), Change(fields={"uses": 5, "score": 0.1}))  # failing now: it leaves
    vault.edit(index.memory("m-goal3"), Change(fields={"deadline": "2027-06-01"}))  # a date ahead: it stays
    index.sync()
    shown = {h.memory.id for h in searcher.search(ask)}
    assert sorted(decided) == ["m-goal3", "m-p03"], "the two changed, not all 44"
    assert "m-p03" not in shown and "m-goal3" in shown and not (leaving - {"m-goal3"}) & shown
    (root / "patterns" / "p04.md").unlink()
    index.sync()
    assert "m-p04" not in {h.memory.id for h in searcher.search(ask)}
    decided.clear()
    index.swap(index.generation)  # every memory read again (a served reindex's swap): decided again, same minute
    searcher.search(ask)
    assert decided, "nothing changed through the index, yet every memory was read again"
    decided.clear()
    searcher.search(SearchRequest(query="deploy", limit=50, now=now + timedelta(hours=20)))  # within the schedule's
    assert decided == []  # day, no date crosses a threshold: nothing is decided again (leaving.py)
    later = SearchRequest(query="deploy", limit=50, now=NOWS[3])  # months later: past the day, decided again
    assert not {"m-fresh", "m-goal", "m-goal2"} & {h.memory.id for h in searcher.search(later)}
    assert "m-fresh" in decided and len(decided) > 10
    index.close()


def test_a_first_search_tells_the_hidden_statuses_from_the_facts_without_decoding_a_row_that_names_one(root: Path,
                                                                                                         monkeypatch):
    note(root, "patterns/talk.md", "m-talk", "We archived the old deploy notes and superseded the runbook.",
         "type: decision\n")
    open_index(root).close()
    decoded = decoded_rows(monkeypatch)
    index = reader(root)
    at_open = set(decoded)
    assert set(index.ids_with_status(frozenset({"archived", "superseded"}))) == {"m-archived"}
    assert set(decoded) == at_open  # neither the archived row nor the one whose body says the words was decoded
    hits = Searcher(index, SearchSettings(embedder="hashing-256", score_threshold=0.0)).search(
        SearchRequest(query="the deploy rule we dropped", limit=50, now=NOWS[0]))
    assert "m-archived" not in [h.memory.id for h in hits]
    index.close()


def without_facts(root: Path) -> None:
    """The generation as a memdir before the facts table left it: no table rows, no mark."""
    with sqlite3.connect(Layout(root).current() / "manifest.sqlite") as db:  # type: ignore[operator]
        db.execute("DROP TABLE facts")
        db.execute("DELETE FROM meta WHERE key = 'facts_complete'")


def test_a_reader_opens_an_empty_vaults_generation_written_before_the_facts_and_link_tables(tmp_path: Path):
    """A reader makes no table: without one, an empty files table must not pass for a complete facts or link
    table, or its open read a table that is not there (review of session 10)."""
    empty = tmp_path / "empty"
    (empty / "history").mkdir(parents=True)
    open_index(empty).close()
    without_facts(empty)
    with sqlite3.connect(Layout(empty).current() / "manifest.sqlite") as db:  # type: ignore[operator]
        db.execute("DROP TABLE links")
        db.execute("DELETE FROM meta WHERE key = 'links_complete'")
    old = reader(empty)
    assert old.memory_count() == 0 and not old.facts_read and not old.manifest.links_complete()
    old.close()


def test_a_generation_without_facts_is_read_as_before_and_its_owner_migrates_it_to_a_fresh_build(root: Path, tmp_path: Path,
                                                                                                  monkeypatch):
    open_index(root).close()
    without_facts(root)
    old = reader(root)
    assert not old.facts_read
    assert {r.id for r in old.lifecycle_records() if lifecycle.leaving(r, NOWS[2], RULES)} == {
        "m-old-working", "m-idle", "m-journal", "m-goal3", "m-failing"}  # decoded, as before the table
    old.close()
    owner = open_index(root)  # reconciles, and writes the table whole
    assert owner.manifest.facts_complete()
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    before = counting(owner).misses
    Vault(root).edit(owner.get("m-p03"), Change(derive=lambda m: {"uses": m.uses + 1, "score": 0.1}))
    report = owner.sync(["patterns/p03.md"])
    assert report.embedded == 0 and counting(owner).misses == before  # a counter change embeds nothing
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "again")
    owner.close()
    decoded = decoded_rows(monkeypatch)
    cold = reader(root)
    at_open = set(decoded)
    facts = {r.id: r for r in cold.lifecycle_records()}
    assert set(decoded) == at_open and cold.facts_read and facts["m-p03"].score == 0.1 and facts["m-p03"].uses == 1
    cold.close()


def test_a_batch_an_older_memdir_wrote_makes_the_facts_unread_until_the_owner_writes_them_again(root: Path):
    open_index(root).close()
    with sqlite3.connect(Layout(root).current() / "manifest.sqlite") as db:  # type: ignore[operator]
        row = db.execute("SELECT * FROM files WHERE path = 'patterns/p01.md'").fetchone()
        db.execute(f"INSERT OR REPLACE INTO files VALUES ({', '.join('?' * len(row))})", row)  # its 12 columns only
    stale = reader(root)
    assert not stale.facts_read and all(type(r) is not Facts for r in stale.lifecycle_records())
    stale.close()
    owner = Index.open(Vault(root), HashingEmbedder())
    assert owner.manifest.facts_complete()
    owner.close()
    assert reader(root).facts_read


def older_memdir_write(index: Index):
    """The index's batches written as a memdir before the facts and link tables wrote them: the rows of the files
    table only, its deletes first, then its upserts (a row's 12 columns)."""
    from indexer.manifest import FILE_COLUMNS, _row

    db = index.manifest._db

    def write(upserts, deleted, links=None, restated=None):
        with index.manifest.transaction():
            db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in deleted])
            db.executemany("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
                           [(size, mtime, path) for path, (size, mtime) in (restated or {}).items()])
            db.executemany(f"INSERT OR REPLACE INTO files VALUES ({', '.join('?' * len(FILE_COLUMNS))})",
                           [_row(e) for e in upserts])
    return write


def newest_row(root: Path) -> tuple[int, str]:
    with sqlite3.connect(Layout(root).current() / "manifest.sqlite") as db:  # type: ignore[operator]
        return db.execute("SELECT rowid, path FROM files ORDER BY rowid DESC LIMIT 1").fetchone()


def older_memdir_takes_back_the_rowid(root: Path, monkeypatch) -> str:
    """The newest memory's file goes, and comes back changed (a branch switched), both seen by an older memdir: one
    batch deletes its row, the next inserts it, and SQLite gives the insert the freed rowid: the files table's largest
    rowid and row count are as before, and the facts row of the path is the one from before. Returns its memory id."""
    open_index(root).close()
    rowid, path = newest_row(root)
    older = open_index(root)
    memory_id = older.entry(path).memory_id
    Vault(root).edit(older.get(memory_id), Change(derive=lambda m: {"uses": 9, "score": 0.05}))
    monkeypatch.setattr(older.manifest, "write", older_memdir_write(older))
    text = (root / path).read_bytes()
    (root / path).unlink()
    older.sync([path])
    (root / path).write_bytes(text)
    older.sync([path])
    older.close()
    assert newest_row(root) == (rowid, path)
    return memory_id


def assert_facts_derived_from_the_rows_until_the_owner_writes_them(root: Path, memory_id: str) -> None:
    stale = reader(root)
    assert not stale.facts_read and not stale.manifest.links_complete()
    record = next(r for r in stale.lifecycle_records() if r.id == memory_id)
    assert (record.uses, record.score) == (9, 0.05)  # from its row, not the facts the older batch left behind
    stale.close()
    owner = open_index(root)  # derives them again
    assert owner.manifest.facts_complete()
    owner.close()
    cold = reader(root)
    facts = {r.id: r for r in cold.lifecycle_records()}
    assert cold.facts_read and (facts[memory_id].uses, facts[memory_id].score) == (9, 0.05)
    cold.close()


def test_an_older_memdirs_delete_and_insert_that_takes_back_the_rowid_makes_the_facts_derived_again(root: Path,
                                                                                                   monkeypatch):
    assert_facts_derived_from_the_rows_until_the_owner_writes_them(root, older_memdir_takes_back_the_rowid(root,
                                                                                                         monkeypatch))


def stamped_before_the_write_counter(root: Path) -> Path:
    """The vault's manifest as a memdir before the write counter left it (its marks the old stamp); returns its path."""
    path = Layout(root).current() / "manifest.sqlite"  # type: ignore[operator]
    with sqlite3.connect(path) as db:
        for trigger in ("files_written", "files_updated", "files_deleted"):
            db.execute(f"DROP TRIGGER {trigger}")
        db.execute("DROP TABLE files_writes")
        old_stamp = db.execute("SELECT max(rowid) || ':' || count(*) FROM files").fetchone()[0]
        db.execute("UPDATE meta SET value = ? WHERE key IN ('facts_complete', 'links_complete')", (old_stamp,))
    return path


def test_a_mark_stamped_before_the_write_counter_is_not_trusted_when_an_older_memdir_brought_its_stamp_back(
        root: Path, monkeypatch):
    """Review of session 10: a reader (which does not count the writes) and the owner's migration trusted the old
    stamp, which the older memdir's delete and insert had brought back."""
    memory_id = older_memdir_takes_back_the_rowid(root, monkeypatch)
    stamped_before_the_write_counter(root)  # the marks as written before that delete and insert: the same old stamp
    assert_facts_derived_from_the_rows_until_the_owner_writes_them(root, memory_id)


def test_a_manifest_stamped_before_the_write_counter_is_trusted_from_its_owners_open_and_counts_from_there(root: Path):
    open_index(root).close()
    stamped_before_the_write_counter(root)
    upgraded = reader(root)
    assert not upgraded.facts_read and not upgraded.manifest.links_complete()  # the old stamp cannot tell
    upgraded.close()
    owner = open_index(root)  # the owner counts from here on, and writes the facts whole
    assert owner.manifest.facts_complete()
    owner.close()
    assert reader(root).facts_read
    rowid, path = newest_row(root)
    with sqlite3.connect(Layout(root).current() / "manifest.sqlite") as db:  # type: ignore[operator]
        row = db.execute("SELECT * FROM files WHERE path = ?", (path,)).fetchone()
        db.execute("DELETE FROM files WHERE path = ?", (path,))
        db.execute(f"INSERT INTO files VALUES ({', '.join('?' * len(row))})", row)
    assert newest_row(root) == (rowid, path)
    counted = reader(root)
    assert not counted.facts_read and not counted.manifest.links_complete()
    counted.close()


def test_a_reader_of_a_manifest_stamped_before_the_counter_opens_beside_an_older_owners_write(root: Path):
    """The counter's migration is a write: run by a reader's open, it waited for the write lock behind an older
    memdir's long batch and failed with "database is locked" (review of session 9). A reader writes nothing; it
    trusts no mark until the owner's next open migrates."""
    open_index(root).close()
    path = stamped_before_the_write_counter(root)
    older_owner = sqlite3.connect(path, isolation_level=None)
    older_owner.execute("BEGIN IMMEDIATE")  # its batch, writing
    try:
        upgraded = reader(root)
        assert not upgraded.facts_read and not upgraded.manifest.links_complete()
        upgraded.close()
    finally:
        older_owner.execute("ROLLBACK")
        older_owner.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall() == []
    open_index(root).close()
    with sqlite3.connect(path) as db:
        assert len(db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()) == 3


def test_a_lifecycle_run_with_nothing_due_decodes_no_row_and_builds_no_graph(root: Path, monkeypatch):
    from indexer import index as index_module
    from indexer.curator import Curator
    from mcp_server.config import load_config

    for due in ("working/old.md", "history/failing.md", "patterns/weak.md", "history/idle.md", "history/journal.md",
                "memory_bank/goal3.md", "working/proven.md"):
        (root / due).unlink()  # what the rules act on at once
    open_index(root).close()
    config = load_config(root)
    owner = Index.open(Vault(root), HashingEmbedder(), reconcile=False)  # as a server opens it
    decoded = decoded_rows(monkeypatch)
    builds: list = []
    real_build = index_module.LinkGraph.build
    monkeypatch.setattr(index_module.LinkGraph, "build", staticmethod(lambda m: builds.append(1) or real_build(m)))
    curator = Curator(owner, config.scoring, config.lifecycle, config.dedup)
    owner.reconciled.set()  # its reconcile has run (it reads every file, which this test does not count)
    assert curator.gc(now=NOWS[0]) == [] and decoded == [] and builds == []  # nothing due an hour after the notes
    assert {a.decision.id for a in curator.gc(now=NOWS[3])} >= {"m-goal", "m-fresh"}  # and when due, applied
    owner.close()


def test_a_served_searcher_decides_only_the_rows_that_may_leave_and_leaves_out_the_same_memories(root: Path):
    """`lifecycle.may_leave` lets a served searcher skip the rows no rule can remove or archive (a cold open's first
    search decided all 100k): every row it skips stays for every rule set and moment, the plain patterns are skipped,
    and the memories left out are those deciding every memory leaves out. Times in another offset than UTC, with a
    fraction of a second, or idle but used lately are decided, not guessed."""
    note(root, "working/offset.md", "m-offset", "A scratch note written in Paris.", "", "2026-09-01")
    text = (root / "working/offset.md").read_text().replace("T12:00:00Z", "T12:00:00+02:00")
    (root / "working/offset.md").write_text(text)
    note(root, "working/fraction.md", "m-fraction", "A scratch note with a precise time.", "", "2026-09-02")
    text = (root / "working/fraction.md").read_text().replace("T12:00:00Z", "T12:00:00.250000Z")
    (root / "working/fraction.md").write_text(text)
    note(root, "history/used.md", "m-used", "Old history, used last week.", "type: fact\nlast_used_at: 2027-02-20T08:00:00Z\n",
         "2026-01-01")
    note(root, "history/old-journal.md", "m-old-journal", "An idle journal used lately.",
         "type: history\nlast_used_at: 2027-02-25T08:00:00Z\n", "2026-01-01")
    open_index(root).close()
    index = reader(root)
    every_rule_set = [RULES, LifecycleSettings(working_max_age_hours=8760, history_max_age_days=365),
                      LifecycleSettings(working_max_age_hours=1, history_max_age_days=1, type_ttl_days={})]
    for rules in every_rule_set:
        for now in NOWS:
            records = list(index.lifecycle_records())
            leaving = {r.id for r in records if lifecycle.leaving(r, now, rules)}
            decided = {r.id for r in index.lifecycle_records(lifecycle.may_leave(now, rules))}
            assert leaving <= decided  # nothing that leaves is skipped
            assert Searcher(index, SearchSettings(embedder="hashing-256"), lifecycle=rules)._leaving.at(now) == leaving  # type: ignore[union-attr]
    decided = {r.id for r in index.lifecycle_records(lifecycle.may_leave(NOWS[2], RULES))}
    assert not {f"m-p{n:02}" for n in range(30)} & decided  # plain patterns: no record made
    assert {"m-offset", "m-fraction", "m-old-working", "m-idle"} <= decided  # working: another offset, a fraction
    assert not {"m-fresh", "m-used"} & decided  # too young for working; idle history used lately
    assert "m-old-journal" not in {r.id for r in index.lifecycle_records(lifecycle.may_leave(NOWS[3], RULES))}
    index.close()


def facts_made_under_the_lock(index: Index, monkeypatch) -> list[bool]:
    """Whether the index lock was held, for each row's facts made from now on."""
    from indexer import manifest as manifest_module

    held: list[bool] = []
    real = manifest_module.columns_of
    monkeypatch.setattr(manifest_module, "columns_of",
                        lambda memory: held.append(index.lock._is_owned()) or real(memory))  # type: ignore[attr-defined]
    return held


def test_the_owners_facts_migration_decodes_the_rows_without_the_index_lock_and_equals_a_fresh_build(
        root: Path, tmp_path: Path, monkeypatch):
    # Every row decoded under the lock held every search once after an upgrade at 100k (s22-graph22.md, seen and left).
    open_index(root).close()
    without_facts(root)
    owner = Index.open(Vault(root), HashingEmbedder(), reconcile=False)  # a server's owner: reconciles after its open
    held = facts_made_under_the_lock(owner, monkeypatch)
    owner.reconcile()
    assert len(held) > 10 and not any(held)  # on main: every row's made under the lock
    assert owner.manifest.facts_complete()
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    owner.close()


def test_a_batch_written_while_the_facts_were_made_has_them_made_again_under_the_lock(
        root: Path, tmp_path: Path, monkeypatch):
    from indexer.manifest import Manifest

    open_index(root).close()
    without_facts(root)
    owner = Index.open(Vault(root), HashingEmbedder(), reconcile=False)
    real = Manifest.facts_made

    def made_then_a_batch(self):  # type: ignore[no-untyped-def]
        made = real(self)
        note(root, "patterns/p01.md", "m-p01", "Pattern one, now archived.", "status: archived\n")
        owner.sync(["patterns/p01.md"])  # a row the facts made were not made from
        return made

    monkeypatch.setattr(Manifest, "facts_made", made_then_a_batch)
    held = facts_made_under_the_lock(owner, monkeypatch)
    owner.reconcile()
    assert held and all(held[-5:])  # made again, under the lock
    assert owner.manifest.facts_complete()
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    owner.close()
