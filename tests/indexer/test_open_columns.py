"""A cold open reads each manifest row's owner tables and marks from the open columns written with it
(open_columns.py): the same chunk and whole-unit owners, neighbour keys and facets as made from the rows' own
columns, without hashing a row's id or scanning its text; a generation written before the table is read from its
rows and migrated by its owner, and a batch an older memdir wrote leaves the table unread until then."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from indexer import index as index_module
from indexer import manifest as manifest_module
from indexer import open_columns
from indexer.embed import HashingEmbedder
from indexer.generations import Layout
from indexer.index import Index
from indexer.manifest import Manifest
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from vault import Change, Vault

from .helpers import note, open_index, reader, rebuilt_state, state
from .test_lazy_rows import decoded_rows
from .test_lifecycle_facts import older_memdir_write


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Plain notes, and a row for each way an open reads one beyond its columns: a speaker, an author, a standing
    fact, a private one, a `previous:`, a status, a note in sections, a long note under one heading (one chunk with a
    heading), a book, a body that only quotes the words, and a file that does not parse."""
    folder = tmp_path / "vault"
    for n in range(30):
        note(folder, f"history/t{n:02}.md", f"m-t{n:02}", f"Note {n} about deploys, step {n}.")
    note(folder, "history/alice.md", "m-alice", "Billing runs at night, said Alice.", "speaker: Alice\n")
    note(folder, "history/carol.md", "m-carol", "Fonts are chosen by design.", "author: Carol\n")
    note(folder, "memory_bank/always.md", "m-always", "We deploy from main.", "type: fact\nalways_inject: true\n")
    note(folder, "memory_bank/private.md", "m-private", "The staging password rotates.", "privacy: private\n")
    note(folder, "history/turn2.md", "m-turn2", "And tokens rotate every week.", "previous: m-t06\n")
    note(folder, "patterns/archived.md", "m-archived", "The cache rule we dropped.", "status: archived\n")
    note(folder, "history/quotes.md", "m-quotes", 'The "speaker" and the "previous" notes: nobody.')
    ranking, recall = " ".join(["Search ranking weighs words."] * 45), " ".join(["Search recall counts hits."] * 45)
    note(folder, "patterns/sections.md", "m-sections", f"Intro.\n\n## Ranking\n\n{ranking}\n\n## Recall\n\n{recall}")
    note(folder, "patterns/headed.md", "m-headed", one_headed_chunk("Only heading"))
    note(folder, "books/guide.md", "m-book", f"# Guide\n\n## Part one\n\n{recall}\n\n## Part two\n\n{ranking}")
    (folder / "history" / "broken.md").write_text("---\nid: [unclosed\n---\nbody\n")
    return folder


def one_headed_chunk(heading: str) -> str:
    """A body read as a document (past LONG_MEMORY_CHARS) whose one section fits one chunk: one chunk, with a heading
    (the headings above it have no text of their own, so no section)."""
    empty = "".join(f"## Empty heading {n}\n" for n in range(60))
    return f"{empty}## {heading}\n\n{' '.join(['Ranking weighs words.'] * 40)}"


def from_rows(monkeypatch) -> None:
    """Opens from now on read no open columns, as on a generation without them: the tables made from the rows."""
    real = Manifest.open_rows
    monkeypatch.setattr(Manifest, "open_rows", lambda self: (*real(self)[:2], None))


def read_at_open(index: Index) -> dict:
    """What an open makes of the rows, and a first search's facets."""
    return {"chunks": index._chunk_owner.items(), "whole": index._whole_owner.items(),  # type: ignore[union-attr]
            "previous": dict(index.previous_key), "pointed_by": dict(index.pointed_by),
            "names": index.author_names(), "standing": index.standing_ids(), "private": index.private_ids(),
            "archived": index.ids_with_status(frozenset({"archived"}))}


def hashes_and_scans(monkeypatch) -> list[str]:
    """Each id hashed for its whole chunk (chunking.chunk_id) from now on."""
    hashed: list[str] = []
    real = index_module.chunk_id
    monkeypatch.setattr(index_module, "chunk_id", lambda memory_id, key: hashed.append(memory_id) or real(memory_id, key))
    return hashed


def test_an_open_reads_the_owner_tables_and_marks_from_the_open_columns_as_from_the_rows_own_columns(
        root: Path, monkeypatch):
    open_index(root).close()
    hashed = hashes_and_scans(monkeypatch)
    decoded = decoded_rows(monkeypatch)
    index = reader(root)
    assert index.manifest.open_columns_complete()
    assert hashed == ["m-headed"]  # no id hashed to tell a whole memory's chunk but the one chunked again
    assert set(decoded) == {"m-turn2", "m-sections", "m-headed", "m-book"}  # a `previous:`, and the chunks with headings
    found = read_at_open(index)
    # the rows whose text holds a key: not the body that quotes the words (a stored body's quotes are escaped)
    assert set(decoded) - {"m-turn2", "m-sections", "m-headed", "m-book"} == {"m-alice", "m-carol", "m-always",
                                                                             "m-private"}
    assert found["names"] == {"Alice", "Carol"} and found["standing"] == {"m-always"}
    assert found["private"] == {"m-private"} and found["archived"] == {"m-archived"}
    assert found["previous"] == {"m-turn2": "m-t06"}
    assert ("m-headed", "Only heading") in {owner for _, owner in found["chunks"]}
    index.close()
    from_rows(monkeypatch)
    old = reader(root)
    assert len(hashed) > 30  # the rows' way: every one-chunk row's id hashed
    assert read_at_open(old) == found
    old.close()


def test_the_open_columns_written_with_each_batch_read_as_the_rows_say_after_changes(root: Path, tmp_path: Path,
                                                                                   monkeypatch):
    open_index(root).close()
    owner = Index.open(Vault(root), HashingEmbedder(), reconcile=False)
    note(root, "history/t01.md", "m-t01", "Note 1, now said by Dan.", "speaker: Dan\n")  # a speaker named
    note(root, "history/alice.md", "m-alice", "Billing runs at night.")  # Alice's key gone
    note(root, "history/t03.md", "m-t03", one_headed_chunk("Now headed"))  # one chunk, with a heading
    note(root, "history/turn3.md", "m-turn3", "Then the queue drains.", "previous: m-t04\n")
    (root / "history" / "t02.md").unlink()
    (root / "history" / "broken.md").write_text("---\nid: m-fixed\ntitle: fixed\n---\nFixed now.\n")
    Vault(root).edit(owner.get("m-t05"), Change(derive=lambda m: {"uses": m.uses + 1}))
    owner.sync(["history/t01.md", "history/alice.md", "history/t03.md", "history/turn3.md", "history/t02.md",
                "history/broken.md", "history/t05.md"])
    assert owner.manifest.open_columns_complete()
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    owner.close()
    index = reader(root)
    found = read_at_open(index)
    assert found["names"] == {"Carol", "Dan"} and found["previous"] == {"m-turn2": "m-t06", "m-turn3": "m-t04"}
    index.close()
    from_rows(monkeypatch)
    old = reader(root)
    assert read_at_open(old) == found
    old.close()


def without_open_columns(root: Path) -> None:
    """The vault's generation as a memdir before the open columns wrote it."""
    with sqlite3.connect(Layout(root).current() / "manifest.sqlite") as db:  # type: ignore[operator]
        db.execute("DROP TABLE open_columns")
        db.execute("DELETE FROM meta WHERE key = ?", (open_columns.KEY,))


def test_a_generation_without_open_columns_is_read_from_its_rows_and_its_owner_migrates_it_to_a_fresh_build(
        root: Path, tmp_path: Path, monkeypatch):
    open_index(root).close()
    fresh = reader(root)
    expected = read_at_open(fresh)
    fresh.close()
    without_open_columns(root)
    hashed = hashes_and_scans(monkeypatch)
    old = reader(root)
    assert not old.manifest.open_columns_complete() and len(hashed) > 30  # read from the rows' columns
    assert read_at_open(old) == expected
    hits = Searcher(old, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="what did Alice say about billing at night"))
    assert hits and hits[0].memory.id == "m-alice"
    old.close()
    owner = open_index(root)  # reconciles, and writes the table whole
    assert owner.manifest.open_columns_complete()
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    owner.close()
    hashed.clear()
    cold = reader(root)
    assert hashed == ["m-headed"] and read_at_open(cold) == expected
    cold.close()


def test_a_batch_an_older_memdir_wrote_leaves_the_open_columns_unread_until_the_owner_writes_them_again(
        root: Path, monkeypatch):
    open_index(root).close()
    older = open_index(root)
    monkeypatch.setattr(older.manifest, "write", older_memdir_write(older))
    note(root, "history/t01.md", "m-t01", "Note 1, now said by Dan.", "speaker: Dan\n")  # its open columns not written
    older.sync(["history/t01.md"])
    older.close()
    stale = reader(root)
    assert not stale.manifest.open_columns_complete()
    assert stale.author_names() == {"Alice", "Carol", "Dan"}  # from the rows' text, not the older numbers
    stale.close()
    open_index(root).close()
    index = reader(root)
    assert index.manifest.open_columns_complete() and index.author_names() == {"Alice", "Carol", "Dan"}
    index.close()


def test_open_columns_out_of_line_with_the_rows_are_not_read(root: Path):
    """SQLite's documents leave the order of a joined text open: numbers that do not line up with the rows' own chunk
    ids are dropped (the rows' columns read instead)."""
    open_index(root).close()
    manifest = Manifest(Layout(root).current() / "manifest.sqlite", owner=False)  # type: ignore[operator]
    rows, _, numbers = manifest.open_rows()
    assert numbers is not None and len(numbers) == len(rows)
    assert manifest_module._aligned(numbers.copy(), rows) is not None
    assert manifest_module._aligned(np.roll(numbers, 1, axis=0), rows) is None
    manifest.close()


def lock_held_while_made(index: Index, monkeypatch) -> list[bool]:
    """Whether the index lock was held, for each row's open columns made from now on."""
    held: list[bool] = []
    real = open_columns.numbers_of_columns
    monkeypatch.setattr(open_columns, "numbers_of_columns",
                        lambda *row: held.append(index.lock._is_owned()) or real(*row))  # type: ignore[attr-defined]
    return held


def test_the_owners_migration_makes_the_open_columns_without_the_index_lock_and_equals_a_fresh_build(
        root: Path, tmp_path: Path, monkeypatch):
    # At 100k memories the migration held the lock ~4 s once after an upgrade: every search waited (s22-graph22.md).
    open_index(root).close()
    without_open_columns(root)
    owner = Index.open(Vault(root), HashingEmbedder(), reconcile=False)  # a server's owner: reconciles after its open
    held = lock_held_while_made(owner, monkeypatch)
    owner.reconcile()
    assert len(held) > 30 and not any(held)  # on main: every row's made under the lock
    assert owner.manifest.open_columns_complete()
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    owner.close()


def test_a_batch_written_while_the_open_columns_were_made_has_them_made_again_under_the_lock(
        root: Path, tmp_path: Path, monkeypatch):
    open_index(root).close()
    without_open_columns(root)
    owner = Index.open(Vault(root), HashingEmbedder(), reconcile=False)
    real = Manifest.open_columns_made

    def made_then_a_batch(self):  # type: ignore[no-untyped-def]
        made = real(self)
        note(root, "history/t01.md", "m-t01", "Note 1, now said by Dan.", "speaker: Dan\n")
        owner.sync(["history/t01.md"])  # a row the numbers made were not made from
        return made

    monkeypatch.setattr(Manifest, "open_columns_made", made_then_a_batch)
    held = lock_held_while_made(owner, monkeypatch)
    owner.reconcile()
    assert held and all(held[-10:])  # made again, under the lock
    assert owner.manifest.open_columns_complete()
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    owner.close()
    index = reader(root)
    assert index.manifest.open_columns_complete() and index.author_names() == {"Alice", "Carol", "Dan"}
    index.close()
