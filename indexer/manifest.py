"""What the index knows about each file: stat, hashes, chunk and unit ids, errors, and a snapshot of the memory.

The snapshot lets the index start without re-reading every file; the stat and hashes let
a reconcile find exactly what changed on disk since. It is a derived cache like the rest:
delete it and `memdir reindex` rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass, fields
from datetime import date, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np

from vault.dedup import dedup_digest
from vault.model import Memory

from .chunking import NEXT, PREVIOUS, SENTENCE, WHOLE
from .interned import shared
from .lifecycle_facts import FACT_COLUMNS, columns_of
from .link_table import LinkRow
from . import open_columns

SCHEMA_VERSION = 11  # 11: a short memory's vectors read its links as written (chunking.linked_as_written)

# The files table's columns in the order `rows()` reads them (and `_entry` unpacks them). An open reads a few of them
# straight from the rows, before any row is decoded (index.py, lazy_rows.py): by these positions, not by numbers.
FILE_COLUMNS = ("path", "size", "mtime_ns", "content_hash", "memory_id", "chunk_ids", "embed_hash", "line", "reason",
                "memory", "units", "keyword_hash")
ROW_PATH, ROW_MEMORY_ID, ROW_CHUNK_IDS, ROW_REASON, ROW_MEMORY, ROW_UNITS = (
    FILE_COLUMNS.index(name) for name in ("path", "memory_id", "chunk_ids", "reason", "memory", "units"))
ROW_SIZE, ROW_MTIME, ROW_CONTENT_HASH = (FILE_COLUMNS.index(name) for name in ("size", "mtime_ns", "content_hash"))
# A row read with its lifecycle facts (`rows(facts=True)`) has them after the files table's columns, all None when the
# facts table has no row for its path.
ROW_FACTS = len(FILE_COLUMNS)


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    memory_id: str | None  # None when the file is not indexed (error)
    chunk_ids: tuple[int, ...] = ()
    embed_hash: str = ""  # hash of the texts embedded for this memory; equal → no re-embedding
    line: int | None = None
    reason: str | None = None  # why the file is not indexed
    memory: Memory | None = None
    units: tuple[tuple[int, int, str], ...] = ()  # (unit id, chunk id, role) of every vector in FAISS
    keyword_hash: str = ""  # hash of the memory's keyword documents; equal → no rewrite

    @property
    def unit_ids(self) -> tuple[int, ...]:
        return tuple(unit for unit, _, _ in self.units)


@dataclass(frozen=True)
class LinkChanges:
    """The link table's rows to write with a batch, and the sources whose rows go (`whole`: all rows are given)."""

    rows: list[LinkRow]
    removed: list[str]
    whole: bool = False


LINKS_KEY = "links_complete"
FACTS_KEY = "facts_complete"


class Manifest:
    def __init__(self, path: Path, owner: bool = True, shared_memory: bool = True) -> None:
        """`owner`: opened by the process that writes it (the index's owner, a new generation's builder), which makes
        what a manifest an older memdir wrote lacks (a table, the write counter). A reader writes nothing: making them
        waited for the write lock behind an older owner's long batch, and failed with "database is locked".

        `shared_memory=False`: a reader on a full disk, where SQLite cannot grow the -shm file every WAL connection
        maps ("disk I/O error"): the manifest is copied into memory (_read_into_memory) and read there."""
        self.path = path
        self._shared_memory = shared_memory
        if not shared_memory:
            self._db = _read_into_memory(path)
            return
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            if owner:
                self._make_tables()
        except BaseException:  # a connection that failed to open keeps its file locks until closed
            self._db.close()
            raise

    def _reader(self) -> sqlite3.Connection:
        """A read-only connection of its own to the manifest's file. Read-write, it made an empty database where a
        generation's manifest had been removed meanwhile (an older generation let go while a reader still held it)."""
        return sqlite3.connect(f"{Path(self.path).resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False,
                               isolation_level=None)

    def _make_tables(self) -> None:
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INT, mtime_ns INT, content_hash TEXT,"
            " memory_id TEXT, chunk_ids TEXT, embed_hash TEXT, line INT, reason TEXT, memory TEXT, units TEXT,"
            " keyword_hash TEXT)"
        )
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        # The link table a search reads (link_table.py): a row per memory that links to another memory.
        self._db.execute("CREATE TABLE IF NOT EXISTS links (source TEXT PRIMARY KEY, created TEXT, targets TEXT)")
        # What the lifecycle rules read of each row's memory (lifecycle_facts.py), so a search or the lifecycle's run
        # decides every memory without decoding its row. A generation written before it gets it from its owner.
        self._db.execute("CREATE TABLE IF NOT EXISTS facts (path TEXT PRIMARY KEY, collection TEXT, type TEXT,"
                         " status TEXT, uses INT, score REAL, success_count REAL, created_at TEXT, last_used_at TEXT,"
                         " deadline TEXT, outcomes TEXT)")
        # Each row's numbers an open reads (open_columns.py), written with the row. A generation written before it
        # gets it from its owner (write_open_columns).
        self._db.execute("CREATE TABLE IF NOT EXISTS open_columns (path TEXT PRIMARY KEY, numbers TEXT)")
        # Each row's memory's dedup digest, for the row's content hash (dedup_digests): the duplicates table's first
        # making reads it instead of every body. Older rows lack it, or name another content: read from the body.
        self._db.execute("CREATE TABLE IF NOT EXISTS dedup (path TEXT PRIMARY KEY, content_hash TEXT, digest BLOB)")
        self._count_writes()

    def _count_writes(self) -> None:
        """Make every change to the files table count in `files_writes`, whichever memdir makes it: the counter is
        the stamp the link and facts tables are trusted by (links_complete, facts_complete). The triggers live in the
        database file, so an older memdir's batches, which know neither table, bump it too. The stamp it replaces,
        the files table's largest rowid and row count, came back after the newest row was deleted and a row was
        inserted (SQLite gives the insert the freed rowid): a file an older memdir saw go and come back changed
        left its old facts trusted. A manifest written before the counter gets it here, and no mark carries over:
        one written under the old stamp cannot tell that delete and insert from no change (review of session 10),
        so the owner writes both tables whole once (Index._write_facts, LinkChanges.whole)."""
        if self._counted():
            return
        with self.transaction():
            self._db.execute("CREATE TABLE IF NOT EXISTS files_writes (count INT NOT NULL)")
            if self._counted():
                return  # another process counted them meanwhile
            self._db.execute("DELETE FROM files_writes")
            self._db.execute("INSERT INTO files_writes VALUES (0)")
            for name, event in (("files_written", "INSERT"), ("files_updated", "UPDATE"), ("files_deleted", "DELETE")):
                self._db.execute(f"CREATE TRIGGER {name} AFTER {event} ON files"
                                 " BEGIN UPDATE files_writes SET count = count + 1; END")

    def close(self) -> None:
        self._db.close()

    def data_version(self) -> int:
        """Changes when another connection (another process's index) commits to this manifest."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def mark_changed(self) -> None:
        """A commit that changes no entry: readers in other processes see a new data_version and reload
        (the vectors a backfill added live in the vector files, which readers do not watch)."""
        self.set_meta({"vectors_changed": str(time.time_ns())})

    def meta(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, values: dict[str, str]) -> None:
        with self.transaction():
            self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))

    def entries(self) -> Iterator[Entry]:
        decode = self.decoder()
        for row in self.rows():
            yield decode(row)

    def rows(self, facts: bool = False) -> list[tuple[Any, ...]]:
        """Every files-table row as stored, by path: what `decoder()` turns into entries (lazy_rows.py). With `facts`,
        each with its lifecycle facts after the files table's columns (ROW_FACTS), read in the same statement."""
        if not facts:
            return self._db.execute(f"SELECT {', '.join(FILE_COLUMNS)} FROM files ORDER BY path").fetchall()
        columns = ", ".join([*(f"files.{c}" for c in FILE_COLUMNS), *(f"facts.{c}" for c in FACT_COLUMNS)])
        return self._db.execute(f"SELECT {columns} FROM files LEFT JOIN facts ON facts.path = files.path"
                                " ORDER BY files.path").fetchall()

    def open_rows(self) -> tuple[list[tuple[Any, ...]], bool, np.ndarray | None]:
        """What an open reads, in one read transaction (an owner's commit falls before or after all of it): every
        row (`rows`), with its facts when the facts table is complete, whether it was, and the open columns of the
        rows in the same order (open_columns.py) when that table is complete too, else None."""
        self._db.execute("BEGIN")
        try:
            facts = self.facts_complete()
            rows = self.rows(facts=facts)
            found = None
            if rows and self._stamped(open_columns.KEY, "open_columns"):
                # One text joined by SQLite in path order, as the rows are: a Python tuple a row cost twice as much.
                text = self._db.execute("SELECT group_concat(numbers, ' ') FROM"
                                        " (SELECT numbers FROM open_columns ORDER BY path)").fetchone()[0]
                found = _aligned(open_columns.parsed(text, len(rows)), rows)
        finally:
            self._db.execute("COMMIT")
        return rows, facts, found

    def open_columns_complete(self) -> bool:
        """Whether the open columns hold every row's numbers (open_columns.py): the facts table's stamp, its own key."""
        return self._stamped(open_columns.KEY, "open_columns")

    def open_column_rows(self) -> list[tuple[str, str]]:
        """The open columns' rows, by path."""
        return self._db.execute("SELECT path, numbers FROM open_columns ORDER BY path").fetchall()

    def open_columns_made(self) -> Made | None:
        """Every row's open columns made from the files table as committed, and the stamp they hold for: the owner's
        migration made without the index lock (Index._write_open_columns). Read on a connection of its own, in one
        read transaction (the stamp and the rows of one snapshot): making them was ~2.9 of the migration's ~3.4 CPU s
        at 100k memories, which every search waited for. None if they cannot be read so (a reader in exclusive mode
        on a full disk, a locked or damaged file): write_open_columns makes them itself."""
        return self._made(lambda db: list(_open_columns(db)))

    def _made(self, make: Callable[[sqlite3.Connection], list[tuple[Any, ...]]]) -> Made | None:
        """`make`'s rows, read on a connection of its own in one read transaction, with the stamp of that snapshot."""
        if not self._shared_memory:
            return None
        try:
            db = self._reader()
        except sqlite3.Error:
            return None
        try:
            db.execute("BEGIN")
            return Made(_files_stamp(db), make(db))
        except sqlite3.Error:  # no write counter (its owner makes it), locked, damaged
            return None
        finally:
            db.close()  # its read transaction with it

    def write_open_columns(self, made: Made | None = None) -> None:
        """The whole open columns table from the files table, in one transaction (the owner's migration of a generation
        written before it, or after an older memdir wrote a batch); trusted from then on. `made` (open_columns_made)
        is written as it is if no row was written since it was made, else the table is made here."""
        with self.transaction():
            stamp = self._files_stamp()
            rows = made.rows if made is not None and made.stamp == stamp else _open_columns(self._db)
            self._db.execute("DELETE FROM open_columns")
            self._db.executemany("INSERT INTO open_columns VALUES (?, ?)", rows)
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (open_columns.KEY, stamp))

    def decoder(self) -> Callable[[tuple[Any, ...]], Entry]:
        """A row's Entry, for rows read now (the layouts their memories were written in are read once here)."""
        layouts = self._layouts()
        return lambda row: _entry(row, layouts)

    def body_reader(self) -> Callable[[tuple[Any, ...]], tuple[str, str]]:
        """A row's memory's (body, type), read off its text without decoding the rest (the dedup table's one pass)."""
        layouts = self._layouts()
        return lambda row: body_and_type(row[ROW_MEMORY], layouts)

    def _layouts(self) -> dict[str, tuple[str, ...]]:
        return _layouts(self._db)

    def links_complete(self) -> bool:
        """Whether the link table holds every memory's links: written so from a generation's first batch on, or
        once in full by the owner of a generation written before the table existed (LinkChanges.whole). The mark
        is the files table's stamp after the last batch that wrote the table: a batch written by a memdir that does
        not know the table (an older version on the same vault) changes the stamp, and the table is not trusted."""
        return self._stamped(LINKS_KEY, "links")

    def fact_rows(self) -> list[tuple[Any, ...]]:
        """The facts table's rows, by path."""
        return self._db.execute("SELECT * FROM facts ORDER BY path").fetchall()

    def facts_complete(self) -> bool:
        """Whether the facts table holds every memory's facts as its row says them: the same stamp as the link table's
        (links_complete), kept under its own key. A batch written by a memdir that does not know the table (an
        older version on the same vault) changes the files table's stamp, and the facts are not read."""
        return self._stamped(FACTS_KEY, "facts")

    def _stamped(self, key: str, table: str) -> bool:
        """Whether the mark under `key` is the files table's stamp now (without a mark: whether the table is empty,
        a generation's first batch). Never for a `table` the manifest lacks: a reader does not make it, and a
        generation an older memdir wrote without it would otherwise pass as complete while empty (review of
        session 10). Never before the files table's writes are counted: a reader does not count them, and the mark
        an older memdir wrote, the largest rowid and row count, holds again after a delete and insert (_count_writes)."""
        if not self._has("table", table) or not self._counted():
            return False
        found = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if found is None:
            return self._db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None
        return found[0] == self._files_stamp()

    def facts_made(self) -> Made | None:
        """Every row's facts made from the files table as committed (each row's memory decoded), and the stamp they
        hold for: the owner's migration made without the index lock (Index._write_facts), as open_columns_made.
        Decoding 100k rows under the lock held every search for it once after an upgrade (s22-graph22.md, seen and
        left). None if they cannot be read so: write_facts is then given the memories under the lock."""
        return self._made(_facts)

    def write_facts(self, memories: Callable[[], Iterable[tuple[str, Memory]]], made: Made | None = None) -> None:
        """The whole facts table, trusted from then on: the migration of a generation written before the table (the
        owner's reconcile, Index.reconcile). `made` (facts_made) is written as it is if no row was written since it
        was made, else the table is made here from (path, memory) of every row, as `memories()` gives them."""
        with self.transaction():
            stamp = self._files_stamp()
            rows = (made.rows if made is not None and made.stamp == stamp
                    else [(path, *columns_of(memory)) for path, memory in memories()])
            self._db.execute("DELETE FROM facts")
            self._db.executemany(f"INSERT INTO facts VALUES ({', '.join('?' * (len(FACT_COLUMNS) + 1))})", rows)
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (FACTS_KEY, stamp))

    def _files_stamp(self) -> str:
        """How many rows of the files table were ever written or deleted (_count_writes), whoever wrote them."""
        return _files_stamp(self._db)

    def _counted(self) -> bool:
        """Whether the files table's writes are counted (_count_writes)."""
        return self._has("trigger", "files_written")

    def _has(self, kind: str, name: str) -> bool:
        """Whether the schema holds a `kind` (table, trigger) of this name."""
        return self._db.execute("SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?", (kind, name)).fetchone() is not None

    def dedup_digests(self) -> dict[str, tuple[str, bytes]]:
        """path -> (content hash, dedup digest) as committed with the rows (nothing from a manifest without the table).
        A digest holds for the row whose content hash is the same: an older memdir's batch writes rows without one.

        Read on a connection of its own, so that the caller holds no index lock (100k rows: 0.35 CPU s that every
        search waited for). A reader in exclusive mode (a full disk) has none to give: nothing, the bodies are read."""
        if not self._shared_memory:
            return {}
        try:
            db = self._reader()
        except sqlite3.Error:
            return {}
        try:
            if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'dedup'").fetchone() is None:
                return {}
            return {path: (content_hash, digest) for path, content_hash, digest in db.execute("SELECT * FROM dedup")}
        except sqlite3.Error:  # locked, damaged: the digests are made from the bodies, as before the table
            return {}
        finally:
            db.close()

    def write_dedup_digests(self, digests: list[tuple[str, str, bytes]]) -> None:
        """(path, content hash, digest) of rows written without one (a generation written before the table)."""
        with self.transaction():
            self._db.executemany("INSERT OR REPLACE INTO dedup VALUES (?, ?, ?)", digests)

    def link_rows(self) -> list[LinkRow]:
        """The link table's rows, by source id."""
        return [(source, created, tuple((t, r) for t, r in json.loads(targets)))
                for source, created, targets in self._db.execute("SELECT * FROM links ORDER BY source")]

    def write(self, upserts: list[Entry], deleted_paths: list[str], links: LinkChanges | None = None,
              restated: Mapping[str, tuple[int, int]] | None = None) -> None:
        """Apply one batch atomically, with the link table's rows that changed in it and the facts of its memories.
        `restated`: path -> (size, mtime_ns) of rows whose content is as stored (Entries.restat): those two columns
        alone are written (a row written whole encodes its memory again)."""
        with self.transaction():
            facts_complete = self.facts_complete()  # before this batch changes the stamp
            numbers_complete = self.open_columns_complete()
            if links is not None:
                if links.whole:
                    self._db.execute("DELETE FROM links")
                self._db.executemany("DELETE FROM links WHERE source = ?", [(s,) for s in links.removed])
                self._db.executemany("INSERT OR REPLACE INTO links VALUES (?, ?, ?)",
                                     [(s, c, json.dumps(t, ensure_ascii=False)) for s, c, t in links.rows])
            self._db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in deleted_paths])
            self._db.executemany("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
                                 ((size, mtime, path) for path, (size, mtime) in (restated or {}).items()))
            if upserts:  # the rows about to be written name their layout; the manifest says what it holds
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (LAYOUT_KEY + _LAYOUT, json.dumps(_FIELDS)))
            numbers: list[tuple[str, str]] = []  # each row's open columns, made from the row as it is written
            self._db.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                # Rows encoded one at a time: a list of them was a second copy of a build's every memory as JSON.
                (_row(e, numbers) for e in upserts),
            )
            self._db.executemany("DELETE FROM open_columns WHERE path = ?", [(p,) for p in deleted_paths])
            self._db.executemany("INSERT OR REPLACE INTO open_columns VALUES (?, ?)", numbers)
            self._db.executemany("DELETE FROM facts WHERE path = ?",
                                 [(p,) for p in deleted_paths] + [(e.path,) for e in upserts if e.memory is None])
            self._db.executemany(f"INSERT OR REPLACE INTO facts VALUES ({', '.join('?' * (len(FACT_COLUMNS) + 1))})",
                                 ((e.path, *columns_of(e.memory)) for e in upserts if e.memory is not None))
            self._db.executemany("DELETE FROM dedup WHERE path = ?",
                                 [(p,) for p in deleted_paths] + [(e.path,) for e in upserts if e.memory is None])
            self._db.executemany("INSERT OR REPLACE INTO dedup VALUES (?, ?, ?)",
                                 ((e.path, e.content_hash, dedup_digest(e.memory.body, e.memory.type))
                                  for e in upserts if e.memory is not None))
            if links is not None:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (LINKS_KEY, self._files_stamp()))
            if facts_complete:  # else the table stays untrusted until the owner writes it whole (write_facts)
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (FACTS_KEY, self._files_stamp()))
            if numbers_complete:  # the same, until write_open_columns
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (open_columns.KEY, self._files_stamp()))

    def transaction(self) -> "_Transaction":
        return _Transaction(self._db)


def _read_into_memory(path: Path) -> sqlite3.Connection:
    """The manifest at `path`, WAL included, copied into a database in memory. In exclusive locking mode SQLite
    keeps the WAL's index in its own memory instead of the -shm file, and reads the WAL as a shared-memory reader
    would; but it holds the manifest's file lock until closed, and another process's reader (a second server on
    the vault) met "database is locked" for as long as the command ran (bench/results/s21-attack21.md). Copied, the
    lock is held for the copy only, which that reader's busy wait outlasts. The copy costs memory of the manifest's
    size, on a full disk only."""
    source = sqlite3.connect(path, isolation_level=None)
    try:
        source.execute("PRAGMA locking_mode=EXCLUSIVE")
        source.execute("PRAGMA journal_mode=WAL")
        copy = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        try:
            source.backup(copy)
        except BaseException:
            copy.close()
            raise
    finally:  # a connection that failed to open keeps its file locks until closed
        source.close()
    return copy


@dataclass(frozen=True)
class Made:
    """A whole table's rows (the open columns, the facts), made from the files table when its stamp was `stamp`."""

    stamp: str
    rows: list[tuple[Any, ...]]


def _files_stamp(db: sqlite3.Connection) -> str:
    return f"w{db.execute('SELECT count FROM files_writes').fetchone()[0]}"


def _layouts(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    """The field names of each memory layout the rows were written in (see encode_memory)."""
    found = db.execute("SELECT key, value FROM meta WHERE key LIKE ?", (LAYOUT_KEY + "%",)).fetchall()
    return {key[len(LAYOUT_KEY):]: tuple(json.loads(value)) for key, value in found}


def _facts(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """(path, facts) of every row of the files table that holds a memory, each row's memory decoded."""
    layouts, rows = _layouts(db), []
    for path, memory_id, memory in db.cursor().execute("SELECT path, memory_id, memory FROM files"):
        decoded = decode_memory(memory, layouts, (path, memory_id)) if memory else None
        if decoded is not None:
            rows.append((path, *columns_of(decoded)))
    return rows


def _open_columns(db: sqlite3.Connection) -> Iterator[tuple[str, str]]:
    """(path, open columns) of every row of the files table, made from its columns."""
    for path, memory_id, chunks, units, memory in db.cursor().execute(
            "SELECT path, memory_id, chunk_ids, units, memory FROM files"):
        yield path, open_columns.numbers_of_columns(memory_id, chunks, units, memory)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _row(entry: Entry, numbers: list[tuple[str, str]] | None = None) -> tuple[Any, ...]:
    """The files-table row of an entry; its open columns (open_columns.py) appended to `numbers`, if given."""
    memory = encode_memory(entry.memory) if entry.memory else None
    if numbers is not None:
        numbers.append((entry.path, open_columns.numbers(entry.memory_id, entry.chunk_ids, entry.units, memory)))
    return (
        entry.path, entry.size, entry.mtime_ns, entry.content_hash, entry.memory_id,
        json.dumps(list(entry.chunk_ids)), entry.embed_hash, entry.line, entry.reason,
        memory, json.dumps([list(u) for u in entry.units]), entry.keyword_hash,
    )


_SAMPLED = 64  # rows of an open whose open columns are checked against their own columns (_aligned)


def _aligned(found: np.ndarray | None, rows: list[tuple[Any, ...]]) -> np.ndarray | None:
    """The open columns if they line up with the rows: SQLite joins the texts in the order its subquery gives them,
    which its documents leave open, so a sample of rows (the first and last among them) is checked against its own
    chunk ids; None (read the rows' columns) when one does not match."""
    if found is None:
        return None
    for place in np.linspace(0, len(rows) - 1, min(len(rows), _SAMPLED)).astype(int).tolist():
        chunk = int(found[place, open_columns.CHUNK])
        if chunk != open_columns.NONE and rows[place][ROW_CHUNK_IDS] != f"[{chunk}]":
            return None
    return found


def _entry(row: tuple[Any, ...], layouts: dict[str, tuple[str, ...]] | None = None) -> Entry:
    path, size, mtime_ns, content_hash, memory_id, chunk_ids, embed_hash, line, reason, memory, units, keyword_hash = (
        row if len(row) == ROW_FACTS else row[:ROW_FACTS])  # a row read with its facts has them after these
    # One object for what the entry and its memory both hold: the row's path and id, which a lazy open already keys
    # its tables by (lazy_rows.py), and the memory's content hash.
    decoded = decode_memory(memory, layouts, (path, memory_id)) if memory else None
    if decoded is not None:
        content_hash = decoded.content_hash if decoded.content_hash == content_hash else content_hash
    chunks = tuple(json.loads(chunk_ids or "[]"))
    one_chunk = {c: c for c in chunks}  # each unit names its chunk: the chunk's int, not one int per unit
    roles = _ROLES
    return Entry(
        path, size, mtime_ns, content_hash, memory_id, chunks, embed_hash or "", line, reason, decoded,
        tuple((int(u), one_chunk.get(c, c), roles.get(r) or shared(str(r))) for u, c, r in json.loads(units or "[]")),
        keyword_hash or "",
    )


# --- a lossless JSON form of Memory (datetimes and dates tagged so they come back as such) ---

def _tag(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$dt": value.isoformat()}
    if isinstance(value, date):
        return {"$d": value.isoformat()}
    if isinstance(value, dict):
        return {"$map": [[str(k), _tag(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [_tag(v) for v in value]
    return value


def _untag(value: dict[str, Any]) -> Any:
    """json's object hook: called on each JSON object, inner ones first (every dict _tag writes is a tag)."""
    if "$dt" in value:
        return datetime.fromisoformat(value["$dt"])
    if "$d" in value:
        return date.fromisoformat(value["$d"])
    if "$map" in value:
        known = _KNOWN_KEYS
        return {known.get(k) or shared(k): v for k, v in value["$map"]}
    return value


_TUPLE_FIELDS = {f.name for f in fields(Memory) if str(f.type).startswith("tuple")}
# The strings a decoded row repeats most, each already held once: a map's keys (Memory's field names, which most
# frontmatter keys are too) and the unit roles. A dict lookup hands back the held object; calling `shared` for each
# was ~40 calls a memory, a sixth of decoding a row (bench/results/first-answer.md, issue 32 item 5, session 5). Others
# are `shared`.
_KNOWN_KEYS = {shared(f.name): shared(f.name) for f in fields(Memory)}
_ROLES = {role: shared(role) for role in (WHOLE, SENTENCE, PREVIOUS, NEXT)}
_DECODER = json.JSONDecoder(object_hook=_untag)


def unit_roles() -> dict[str, str]:
    """Each unit role, held once (what a decoded row's units name)."""
    return _ROLES

_SHARED_FIELDS = ("collection", "type", "status", "privacy", "source", "last_outcome")


# A memory is written as a JSON array: its layout's digest, then its fields' values in the layout's order. The
# {"$map": [[name, value], ...]} form it replaced (still read: rows written before stay until their file changes)
# repeated the 33 names in every row: a third of the row's text and of the strings a cold open made from it, and
# half its JSON decoding (bench/results/first-answer.md, issue 32 item 5, session 5). A Memory gaining or losing a field
# changes the digest; the manifest's meta keeps each digest's names, so older rows still decode by name.
_FIELDS = tuple(f.name for f in fields(Memory))
_LAYOUT = hashlib.sha256(",".join(_FIELDS).encode()).hexdigest()[:12]
LAYOUT_KEY = "memory_layout:"


def encode_memory(memory: Memory) -> str:
    values: list[Any] = [_LAYOUT]
    for name in _FIELDS:
        value = getattr(memory, name)
        values.append(_tag(dict(value) if name == "frontmatter" else value))
    return json.dumps(values, ensure_ascii=False)


def decode_memory(text: str, layouts: dict[str, tuple[str, ...]] | None = None,
                  held: tuple[str, str | None] = ("", None)) -> Memory:
    """The memory of a manifest row; `layouts` names the fields of rows written in an older layout. `held`: the
    row's (path, memory id) strings, which the memory takes where its own are equal (one object for both)."""
    decoded = _DECODER.decode(text)
    if isinstance(decoded, dict):  # the $map form
        data = decoded
    else:
        layout = decoded[0]
        names = _FIELDS if layout == _LAYOUT else (layouts or {}).get(layout)
        if names is None:
            raise ValueError(f"a manifest row's memory is in layout {layout!r}, which its manifest does not name")
        data = dict(zip(names, decoded[1:]))
    for name in _TUPLE_FIELDS:
        data[name] = tuple(data[name])
    path, memory_id = held
    if data["path"] == path:
        data["path"] = path
    if data["id"] == memory_id:
        data["id"] = memory_id
    return _held_once(data, data["frontmatter"])


def body_and_type(text: str, layouts: dict[str, tuple[str, ...]] | None = None) -> tuple[str, str]:
    """A manifest row's memory's (body, type): its JSON read plainly (no tags undone, no Memory made), a third of
    decoding it whole; a row of an older form is decoded whole."""
    values = json.loads(text)
    if isinstance(values, list):
        names = _FIELDS if values[0] == _LAYOUT else (layouts or {}).get(values[0])
        if names is not None:
            return values[1 + names.index("body")], values[1 + names.index("type")]
    memory = decode_memory(text, layouts)
    return memory.body, memory.type


def compacted(memory: Memory) -> Memory:
    """An equal memory holding its repeated strings once, as a decoded one does (a parsed file's keys and
    values are fresh objects: ~0.6 KB a memory more, for every memory a build or a sync reads)."""
    data = {f.name: getattr(memory, f.name) for f in fields(Memory)}
    return _held_once(data, {shared(k) if isinstance(k, str) else k: v for k, v in memory.frontmatter.items()})


def _held_once(data: dict[str, Any], front: dict[str, Any]) -> Memory:
    for name in _SHARED_FIELDS:
        value = data[name]
        if isinstance(value, str):
            data[name] = shared(value)
    for name, value in front.items():  # a field as written in the frontmatter: one object for both
        if name not in data:
            continue
        mine = data[name]
        if type(mine) is type(value) and mine == value:
            front[name] = mine
        elif isinstance(value, list) and isinstance(mine, tuple) and mine == tuple(value):
            data[name] = tuple(value)  # tags: the frontmatter's list and the field's tuple hold the same strings
    data["frontmatter"] = MappingProxyType(front)
    return Memory(**data)

