"""An index opened from its files holds what the index that wrote them held, in less memory and less time:
repeated strings held once, and no memory chunked again only to learn the owners of its chunks."""

from __future__ import annotations

from datetime import date, datetime, timezone
import sqlite3
from pathlib import Path
from types import MappingProxyType

import pytest

from indexer import index as index_module
from indexer.embed import HashingEmbedder
from indexer.generations import Layout
from indexer.index import Index
from indexer.manifest import Manifest, decode_memory, encode_memory
from vault import Memory, Vault

from .helpers import open_index, state

LONG = "\n\n".join(f"## Part {n}\n\n" + f"Section {n} says something about the parser. " * 40 for n in range(3))


def write_vault(root: Path) -> None:
    (root / "patterns").mkdir(parents=True)
    for n in range(6):
        (root / "patterns" / f"n{n}.md").write_text(
            f"---\nid: m-{n}\ntype: learning\ntitle: Note {n}\ntags: [db, ops]\ncreated_at: 2026-10-0{n + 1}T12:00:00Z\n"
            f"---\nThe cache was cold on Monday. It warmed by noon. Note {n} links [[n{(n + 1) % 6}]].\n")
    (root / "patterns" / "guide.md").write_text(f"---\nid: m-guide\ntitle: Guide\n---\n{LONG}\n")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A vault of six short notes that link in a ring, and one long sectioned guide."""
    folder = tmp_path / "vault"
    write_vault(folder)
    return folder


def calls_to(monkeypatch, name: str) -> list:
    """The first argument of every call the index module makes to one of the functions it imported."""
    seen: list = []
    real = getattr(index_module, name)
    monkeypatch.setattr(index_module, name, lambda first, *rest: seen.append(first) or real(first, *rest))
    return seen


def test_a_memory_read_back_from_the_manifest_equals_the_memory_written():
    memory = Memory(
        id="m-1", path="notes/a.md", collection="notes", type="pattern", title="A", body="Body text.\n",
        tags=("db",), created_at=datetime(2026, 10, 1, 12, tzinfo=timezone.utc), uses=3,
        frontmatter=MappingProxyType({"id": "m-1", "title": "A", "tags": ["db"], "due": date(2026, 11, 2),
                                      "nested": {"a": [1, {"b": datetime(2026, 1, 1)}], "$dt": "not a tag"},
                                      "created_at": datetime(2026, 10, 1, 12, tzinfo=timezone.utc)}),
        content_hash="ab" * 32, body_hash="cd" * 32,
    )
    decoded = decode_memory(encode_memory(memory))
    assert decoded == memory
    assert dict(decoded.frontmatter) == dict(memory.frontmatter)
    assert isinstance(decoded.frontmatter["due"], date) and isinstance(decoded.frontmatter["nested"]["a"][1]["b"], datetime)
    assert isinstance(decoded.tags, tuple) and isinstance(decoded.frontmatter["tags"], list)


def test_strings_many_memories_repeat_are_held_once_after_a_load(root):
    open_index(root).close()
    manifest = Manifest(Layout(root).current() / "manifest.sqlite")
    entries = [e for e in manifest.entries() if e.memory is not None and e.memory.id.startswith("m-") and e.memory.id != "m-guide"]
    manifest.close()
    first, second = entries[0], entries[1]
    assert first.memory.type is second.memory.type and first.memory.collection is second.memory.collection
    assert next(iter(first.memory.frontmatter)) is next(iter(second.memory.frontmatter))  # the key "id"
    assert first.memory.frontmatter["title"] is first.memory.title  # a field as written: one object for both
    assert first.content_hash is first.memory.content_hash and first.path is first.memory.path
    roles = [role for entry in entries for _, _, role in entry.units if role == "sentence"]
    assert len(roles) > 2 and all(role is roles[0] for role in roles)
    chunks = {id(chunk) for _, chunk, _ in first.units}
    assert len(chunks) == 1 and first.units[0][1] is first.chunk_ids[0]


def test_a_cold_open_owns_the_chunks_and_units_the_writer_owned_and_chunks_only_long_memories(root, monkeypatch):
    writer = open_index(root)
    written = state(writer)
    headings = {heading for _, (_, heading) in writer._chunk_owner.items()}
    assert {"Part 0", "Part 1", "Part 2"} <= headings  # the long memory's chunks have headings to get right
    chunked = calls_to(monkeypatch, "chunks_for")
    reader = Index(Vault(root), writer.embedder, writer.generation, writable=False)
    assert [memory.id for memory in chunked] == ["m-guide"]
    assert state(reader) == written
    reader.close()
    writer.close()


def test_the_tables_keyed_by_a_memory_hold_its_own_strings_and_a_short_digest(root):
    index = open_index(root)
    memory = index.memory("m-1")
    key = next(k for k in index.path_of if k == "m-1")
    assert key is memory.id  # a lower-case id is its own identity key: no second copy per table
    assert all(isinstance(k, bytes) and len(k) == 16 for k in index.by_dedup_key)
    assert index.find_duplicate(memory.body.upper(), memory.type) is memory
    records = list(index.links._records.values())
    assert records[0].folder is records[1].folder == "patterns"
    index.close()


def digests_made(monkeypatch) -> list[str]:
    """The text of every dedup digest made from now on (vault.dedup), each call still going through."""
    from vault import dedup

    seen: list[str] = []
    real = dedup.dedup_key
    monkeypatch.setattr(dedup, "dedup_key", lambda text, kind: seen.append(text) or real(text, kind))
    return seen


def test_a_cold_open_hashes_no_body_for_duplicates_but_reads_the_digests_written_with_the_rows(root, monkeypatch):
    writer = open_index(root)
    hashed = digests_made(monkeypatch)
    reader = Index(Vault(root), writer.embedder, writer.generation, writable=False)
    assert hashed == []
    twin = reader.memory("m-2")
    assert reader.find_duplicate(twin.body.lower(), twin.type) is twin
    assert hashed == [twin.body.lower()]  # the text asked about; on main every body too
    reader.close()
    writer.close()


def test_a_generation_written_before_the_digests_makes_them_from_the_bodies_once_and_keeps_them(root, monkeypatch):
    monkeypatch.setattr(index_module, "DEDUP_STORE_ABOVE", 0)
    writer = open_index(root)
    written = writer.manifest.dedup_digests()
    generation = writer.generation
    writer.close()
    with sqlite3.connect(generation / "manifest.sqlite") as db:
        db.execute("DROP TABLE dedup")  # as a memdir before the table left it
    hashed = digests_made(monkeypatch)
    owner = Index(Vault(root), HashingEmbedder(), generation, writable=True)
    twin = owner.memory("m-2")
    assert owner.find_duplicate(twin.body.lower(), twin.type) is twin
    assert len(hashed) == owner.memory_count() + 1  # every body once, then the text asked about
    assert owner.manifest.dedup_digests() == written  # kept: what a build writes
    hashed.clear()
    reader = Index(Vault(root), HashingEmbedder(), generation, writable=False)
    assert reader.find_duplicate(twin.body.upper(), twin.type) is not None and len(hashed) == 1
    reader.close()
    owner.close()


def test_a_digest_stored_for_another_content_of_its_file_is_not_trusted(root):
    writer = open_index(root)
    before = writer.manifest.dedup_digests()["patterns/n1.md"]
    (root / "patterns" / "n1.md").write_text("---\nid: m-1\ntype: learning\n---\nA brand new fact.\n")
    writer.sync()
    generation = writer.generation
    writer.close()
    with sqlite3.connect(generation / "manifest.sqlite") as db:  # as an older memdir's batch leaves it: the row
        db.execute("UPDATE dedup SET content_hash = ?, digest = ? WHERE path = ?", (*before, "patterns/n1.md"))
    reader = Index(Vault(root), HashingEmbedder(), generation, writable=False)
    assert reader.find_duplicate("A brand new fact!", "learning").id == "m-1"
    assert reader.find_duplicate("The cache was cold on Monday. It warmed by noon. Note 1 links [[n2]].",
                                 "learning") is None
    reader.close()


def assert_n1_gone_and_n9_new(index: Index) -> None:
    """The duplicates an index finds after n1.md was deleted and n9.md ("A brand new fact.") written."""
    assert index.find_duplicate("a BRAND new fact", "learning").id == "m-9"
    assert index.find_duplicate("The cache was cold on Monday. It warmed by noon. Note 1 links [[n2]].",
                                "learning") is None
    assert index.find_duplicate("The cache was cold on Monday. It warmed by noon. Note 2 links [[n3]].",
                                "learning").id == "m-2"


def test_duplicates_are_found_the_same_after_changes_whether_the_table_was_made_before_or_after(root):
    early = open_index(root)
    assert early.find_duplicate("nothing like it", "learning") is None  # the table made now, kept up to date
    (root / "patterns" / "n1.md").unlink()
    (root / "patterns" / "n9.md").write_text("---\nid: m-9\ntype: learning\n---\nA brand new fact.\n")
    early.sync()
    late = Index(Vault(root), early.embedder, early.generation, writable=False)
    for index in (early, late):
        assert_n1_gone_and_n9_new(index)
    late.close()
    early.close()


def test_memories_a_sync_reads_from_their_files_hold_repeated_strings_once_too(root):
    index = open_index(root)  # built by a sync: every memory parsed from its file, none decoded
    first, second = index.memory("m-0"), index.memory("m-1")
    assert first.type is second.type and next(iter(first.frontmatter)) is next(iter(second.frontmatter))
    assert first.frontmatter["title"] is first.title and index.entry(first.path).path is first.path
    assert first == index.vault.load(first.path)  # equal to the memory as parsed, field for field
    index.close()


def test_the_duplicates_table_is_made_without_keeping_the_rows_it_reads_decoded(root):
    writer = open_index(root)
    reader = Index(Vault(root), writer.embedder, writer.generation, writable=False)  # a cold open: rows not decoded
    undecoded = lambda: sum(type(held) is tuple for held in reader._memories._slots.values())  # noqa: E731
    before = undecoded()
    assert before >= reader.memory_count() - 1  # (one a reconcile read)
    twin = reader.memory("m-2")
    assert reader.find_duplicate(twin.body.lower(), twin.type) is twin
    assert undecoded() >= before - 1, "only the memory asked about is decoded"
    reader.close()
    writer.close()


def test_the_duplicates_table_catches_up_with_a_change_made_while_it_was_made(root, monkeypatch):
    from indexer import lazy_rows

    writer = open_index(root)
    reader = Index(Vault(root), writer.embedder, writer.generation, writable=True)
    writer.close()
    each = lazy_rows.Memories.dedup_digests

    def with_a_change_between(memories, stored, read_row):  # a sync while the table is made outside the lock
        made = each(memories, stored, read_row)
        (root / "patterns" / "n1.md").unlink()
        (root / "patterns" / "n9.md").write_text("---\nid: m-9\ntype: learning\n---\nA brand new fact.\n")
        reader.sync()
        return made

    monkeypatch.setattr(lazy_rows.Memories, "dedup_digests", with_a_change_between)
    assert_n1_gone_and_n9_new(reader)
    reader.close()


def test_the_duplicates_table_is_made_again_outside_the_lock_when_more_changed_meanwhile_than_is_kept(root, monkeypatch):
    # More changes during the pass than the change journal keeps (a pull): session 19 made the table again under the
    # index lock, every search waiting for a pass over every memory (seconds at 100k).
    import threading

    import indexer.index as index_module
    from indexer import lazy_rows

    monkeypatch.setattr(index_module, "CHANGES_KEPT", 1)
    writer = open_index(root)
    reader = Index(Vault(root), writer.embedder, writer.generation, writable=True)
    writer.close()
    each = lazy_rows.Memories.dedup_digests
    passes: list[bool] = []  # per pass: whether another thread could take the index lock meanwhile

    def free_elsewhere() -> bool:
        taken: list[bool] = []

        def take() -> None:
            if reader.lock.acquire(timeout=10):
                reader.lock.release()
                taken.append(True)

        thread = threading.Thread(target=take)
        thread.start()
        thread.join(20)
        return bool(taken)

    def with_a_pull_between(memories, stored, read_row):
        passes.append(free_elsewhere())
        made = each(memories, stored, read_row)
        if len(passes) == 1:
            (root / "patterns" / "n1.md").unlink()
            (root / "patterns" / "n9.md").write_text("---\nid: m-9\ntype: learning\n---\nA brand new fact.\n")
            for n in (2, 3):
                edited = root / "patterns" / f"n{n}.md"
                edited.write_text(edited.read_text() + "\nEdited.\n")
            reader.sync()
        return made

    monkeypatch.setattr(lazy_rows.Memories, "dedup_digests", with_a_pull_between)
    assert reader.find_duplicate("a BRAND new fact", "learning").id == "m-9"
    assert passes == [True, True]
    reader.close()


def test_a_reader_whose_generations_manifest_was_removed_reads_no_digests_and_makes_no_empty_manifest(root):
    # Its own connections opened the path read-write: an older generation let go (its folder removed) while a reader
    # still held it got an empty database made where its manifest had been (review of session 22).
    writer = open_index(root)
    manifest = Manifest(writer.generation / "manifest.sqlite", owner=False)
    for suffix in ("", "-wal", "-shm"):
        (writer.generation / f"manifest.sqlite{suffix}").unlink(missing_ok=True)
    assert manifest.dedup_digests() == {}
    assert manifest.open_columns_made() is None
    assert sorted(p.name for p in writer.generation.glob("manifest.sqlite*")) == []
    manifest.close()
    writer.close()
