"""The derived state of one vault, kept equal to what a rebuild from the files would give.

The in-memory index over one generation of files (`generations.py` says where they live and who
may change them); texts' vectors are cached by text hash in `.memdir/cache/embeddings.sqlite`,
which survives rebuilds. Whole-vault rebuilds are in `rebuild.py`.

Every change, whether from the watcher, a startup reconcile or a full rebuild, goes through
`sync()`, which looks at the disk (not at what an event said happened), so incremental
updates and rebuilds run the same code and end in the same state. One exception, bounded: a
memory's file found empty while an editor saves it in place is held as it was for up to
SAVE_IN_PROGRESS_SECONDS (`SyncReport.held`); the index equals a rebuild once nothing is held.

A memory's indexed texts depend on its neighbours (the memory it names as `previous:` and the
one that names it), so `sync()` works in two steps: it first reads every changed file and
places the memories, then chunks every placed memory and every memory whose neighbours may
have changed, against the final state. Embeddings are cached by text, so a neighbour whose
texts come out the same costs nothing.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import threading
import time
from array import array
from dataclasses import dataclass, field, replace
from itertools import chain, islice
from pathlib import Path
from typing import Callable, Iterable, Iterator, KeysView, Mapping, Sequence, TypeVar, ValuesView

import numpy as np

from vault import Memory, Problem, Vault, atomic
from vault.errors import DiskFullError, NotFoundError, ParseError, VaultError
from vault.dedup import dedup_digest
from vault.ids import identity_key
from vault.model import STATUSES
from vault.parse import sha256
from vault.store import duplicate_id_reason, id_precedence, is_duplicate_id_reason
from vault.paths import Skipped, inspect, is_memory_path, relative, walk, walk_below
from vault import room
from vault.carried_state import check_not_carried

from . import collector, open_columns, unit_hashes
from .arrays import sorted_contains
from .chunking import NEXT, PREVIOUS, SENTENCE, WHOLE, Chunk, Neighbours, Unit, chunk_id, chunks_for, neighbour_text, pair_text, previous_key
from .embed import CachedEmbedder, Embedder
from .facets import ACTIVE, Facets
from .graph import LinkGraph, asked_names, names_if_unlinked
from .heap import release_free_memory
from .holders import hold, let_go
from .in_flight import BUSY, InFlight, for_someone
from .generations import BUILD_WAIT_SECONDS, Layout, Ownership, disk_full
from .keyword import KeywordFilter, KeywordHit, KeywordIndex, Staged
from .keyword import signature as keyword_signature
from .link_table import LinkRow, LinkTable
from .lifecycle_facts import Facts
from .interned import shared
from .lazy_rows import ROW_SLICE, AllBut, Entries, Memories, Worth
from .manifest import ROW_CHUNK_IDS, ROW_MEMORY, ROW_MEMORY_ID, ROW_PATH, ROW_REASON, ROW_UNITS, Entry, LinkChanges, Manifest, compacted, unit_roles
from .owners import Owners
from .vectors import SETTLE_SHARE, VectorIndex

log = logging.getLogger("memdir.index")
_T = TypeVar("_T")
Progress = Callable[[str, int, int], None]  # (stage, done, total): "reading" files, then "embedding" texts


# Passes the duplicates table makes outside the index lock when more changed during one than the change journal keeps,
# before the last is made under it (Index.by_dedup_key).
DEDUP_PASSES = 3
# Digests made from bodies at a duplicates table's first making past which they are written to the manifest (rows
# written before it kept them): the next open reads them. A few (rows an older memdir wrote) are not worth a write.
DEDUP_STORE_ABOVE = 64
CHANGES_KEPT = 4096  # changed memory ids an index keeps for readers deciding again only those (memories_changed_since)


class IndexUnusable(VaultError):
    """The index files are missing, foreign or damaged; `memdir reindex` rebuilds them."""


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    errors: int = 0
    embedded: int = 0  # units whose text had to be embedded (cache misses included)
    deferred: int = 0  # units left for the background backfill (see Index.backfill)
    seconds: float = 0.0
    held: list[str] = field(default_factory=list)  # memories kept as they were: their file was mid-save (look again)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


@dataclass(eq=False)  # a batch is itself: writers wait in line by identity (Index._keyword_line)
class _Batch:
    """Mutations collected during one sync and applied to the indices together."""

    entries: dict[str, Entry] = field(default_factory=dict)
    deleted_paths: list[str] = field(default_factory=list)
    placed: set[str] = field(default_factory=set)  # ids of memories read in this sync; chunked at its end
    touched: set[str] = field(default_factory=set)  # identity keys whose neighbours must be chunked again
    removed_ids: set[str] = field(default_factory=set)
    removed_units: set[int] = field(default_factory=set)
    embed: list[Unit] = field(default_factory=list)
    keyword_docs: dict[str, tuple[Memory, list[Chunk]]] = field(default_factory=dict)
    read_ahead: dict[str, _Read] = field(default_factory=dict)  # path -> read before the lock (Index._read_ahead)
    restated: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (size, mtime_ns) of a row (_restat)
    keyword_commit_began: Callable[[], None] | None = None  # see Index.sync
    staged: Staged | None = None  # keyword documents made searchable while an earlier write committed
    placed_memories: dict[str, Memory] = field(default_factory=dict)  # placed, as read here (see _after_keyword_writer)
    pause: collector.Pause = field(default_factory=lambda: collector.Pause(False))  # a pull's (see Index.sync)


@dataclass
class _Unwritten:
    """What syncs that failed before their manifest write left to the next sync (Index._left_unwritten)."""

    paths: set[str] = field(default_factory=set)  # read again, whatever paths the next sync is given
    deleted_paths: list[str] = field(default_factory=list)
    removed_ids: set[str] = field(default_factory=set)
    removed_units: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class _Read:
    """A changed file read and parsed before a big sync took the index lock: used under the lock only while the
    file's size and mtime are still the ones seen when it was read. `parsed` is None for a file whose content was
    the manifest's (touched, copied, checked out again): under the lock only its stat is recorded, so it is not
    parsed. Parsing 100k touched files ahead held every one as a Memory until the lock: +600 MB and ~10 CPU s for
    a reconcile of a 100k vault whose mtimes had all changed (bench/results/s16-lead.md)."""

    size: int
    mtime_ns: int
    checked_at: int  # time_ns just before the read
    digest: str  # of the bytes read: the bytes themselves are not kept (a touched 100k vault's size again, review17)
    parsed: Memory | ParseError | None

    def usable(self, size: int, mtime_ns: int, recorded: tuple[int, int, str] | None) -> bool:
        """Whether this read stands for the file under the lock: its stat unchanged since, and, if it was not parsed
        (its content was the manifest's), the manifest's content still the same."""
        return (self.size, self.mtime_ns) == (size, mtime_ns) and (
            self.parsed is not None or (recorded is not None and recorded[2] == self.digest))

    def memory(self) -> Memory:
        if isinstance(self.parsed, ParseError):
            raise self.parsed
        assert self.parsed is not None  # a read not parsed is used only while its content is the manifest's
        return self.parsed


@dataclass
class _Walk:
    """A walk of the whole vault made before a reconcile takes the lock (Index._read_ahead)."""

    items: dict[str, Path | Skipped] = field(default_factory=dict)  # every file found
    unchanged: set[str] = field(default_factory=set)  # ... of which these were as the manifest has them


class Index:
    def __init__(self, vault: Vault, embedder: Embedder, generation: Path, *, writable: bool,
                 defer_embedding: bool = False, shared_memory: bool = True) -> None:
        self.vault = vault
        self.root = vault.root
        self._own_cache = not isinstance(embedder, CachedEmbedder)  # a cache opened here is closed here
        self.embedder = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(
            embedder, vault.root / ".memdir" / "cache" / "embeddings.sqlite",
            adopt=Layout(vault.root).ours(),  # this user's index: a cache from before stamps is its own
        )
        self.writable = writable
        self._shared_memory = shared_memory  # False: read on a full disk (Manifest), by a command that cannot write
        self.lock = threading.RLock()
        # A big sync writes its keyword documents with the lock let go (searches go on): other keyword writers
        # wait on this for it to finish, the lock let go meanwhile too (Index._keyword_turn).
        self._keyword_idle = threading.Condition(self.lock)
        self._keyword_writing = False
        # The keyword writers waiting for an earlier one, first come first served: syncs that have read, chunked and
        # staged their batch (_after_keyword_writer), and the other writers' turns (_keyword_turn).
        self._keyword_line: list[object] = []
        self._turn_holder: int | None = None  # the thread in its keyword turn (heal's own sync does not queue)
        # Small keyword writes commit without merging Whoosh segments; a merger thread (segment_merger.py, started
        # by LiveIndex) merges them when the index is idle or they pass SEGMENTS_BOUND. Without one, a write merges
        # them itself once they pass the bound.
        self.merge_later = False
        self.merge_wanted = threading.Event()  # set after a keyword write left a new segment
        self.keyword_written_at = 0.0  # time.monotonic() of the last keyword write
        self.version = 0  # bumped on every change; readers use it to invalidate caches
        self.searches = InFlight()  # the searches running: a capture's sync lets them finish first (group_sync.py)
        self._owner: Ownership | None = None
        self._lost_ownership = False  # let go when another process took the index after its lock file was deleted
        # A server must answer before a fresh vault is embedded (a vault of a few dozen notes is ~20k
        # tokens: seconds of model time on two cores). With `defer_embedding`, a sync with more than
        # DEFER_ABOVE units to embed indexes their keywords at once and leaves their vectors to
        # `backfill`; until then those memories are found by keyword only.
        self.defer_embedding = defer_embedding
        self._unembedded: dict[int, None] = {}  # unit ids waiting for a vector, oldest first
        self._unwritten = _Unwritten()
        self.embedding_wanted = threading.Event()  # set when units are left for the backfill
        self.units_deferred = threading.Condition()  # notified at each deferral: the backfill gathers a batch (backfill.py)
        self._readers_told = time.monotonic()
        self._backfill_texts: dict[tuple[str, str], dict[int, tuple[str, str]]] = {}  # see _texts_of
        self.reconcile_pending = False  # opened by its owner with reconcile=False: reconcile() is the caller's
        self.reconciled = threading.Event()  # set once reconcile() has run
        self.answered = threading.Event()  # set once a search was answered from it (a server builds its MCP endpoint after)
        self._memory_changes = 0  # memories remembered or forgotten since the open (_memories_seen)
        self._changed: list[str] = []  # their ids, in order, the latest CHANGES_KEPT or more (memories_changed_since)
        self._changed_before = 0  # how many changes were let go from the front of that list
        self.loads = 0  # generations read, bumped once a swap's is wholly in place (the decoding ahead starts on it again)
        try:
            self._load(generation)
        except BaseException:  # a generation that does not load (damaged, a full disk): its cache let go too
            if self._own_cache:
                self.embedder.close()
            raise

    def _load(self, generation: Path) -> None:
        """Read one generation's files into memory (constructor, and the swap after a rebuild)."""
        with collector.loading():
            self._read_generation(generation)

    def _read_generation(self, generation: Path) -> None:
        if hasattr(self, "_vectors"):
            self._vectors.retire()  # a fold of the generation being replaced must not go on writing into it
        manifest = Manifest(generation / "manifest.sqlite", owner=self.writable, shared_memory=self._shared_memory)
        try:
            data_version = manifest.data_version()  # a reader reloads when the owner commits past it
            vectors = VectorIndex.load(generation, self.embedder.dim, owner=self.writable)
            keyword = KeywordIndex.open(generation / "keyword")
        except BaseException:  # damaged files (see open): hold no handle on a generation about to be moved aside
            manifest.close()
            raise
        # Set together once all loaded: a generation's folder beside another's vectors was a fold's wrong target.
        self.generation, self.manifest, self._data_version = generation, manifest, data_version
        self._vectors, self._keyword = vectors, keyword
        self._filled = False  # set by fill(): this index read every file of its generation itself (see reconcile)
        # Rows decoded when first read (lazy_rows.py): a search reads a few dozen of 100k.
        # With each row its lifecycle facts, when the manifest holds them for every row (lifecycle_facts.py), and the
        # numbers an open reads of each row (open_columns.py), when it holds those.
        rows, self.facts_read, numbers = self.manifest.open_rows()
        self._entries: Entries = Entries(rows, self.manifest.decoder())
        self._recheck: set[str] = set()  # paths whose recorded size and mtime cannot tell a newer save apart
        self._held_since: dict[str, float] = {}  # path -> when it was first found empty mid-save (held_clock)
        self._memories: Memories = Memories(self._entries)
        self._facets = Facets()  # the memories' statuses and authors, kept in step from the first ask (facets.py)
        # Every memory read again, none of them through _remember: a reader's decisions from before are all stale
        self._changed_before, self._changed = self._changed_before + len(self._changed) + 1, []
        self.path_of: dict[str, str] = {}  # identity_key(id) -> path
        # Memory ids as tuples, not sets (holders.py).
        # Digest of normalized text + type -> memory ids; made on the first duplicate asked for, not at the open
        # (normalizing and hashing every body was an eighth of a cold open's CPU).
        self._by_dedup_key: dict[bytes, tuple[str, ...]] | None = None
        self.previous_key: dict[str, str] = {}  # memory id -> identity key of the memory it names as previous
        self._duplicates: set[str] | None = None  # paths whose entry names a duplicated id; None = not yet known
        self.pointed_by: dict[str, tuple[str, ...]] = {}  # identity key -> ids of the memories naming it as previous
        indexed = [row for row in rows if row[ROW_MEMORY_ID] and row[ROW_MEMORY] and row[ROW_REASON] is None]  # memory id, memory, no reason
        if numbers is not None and len(indexed) != len(rows):  # the numbers of the indexed rows
            numbers = numbers[[bool(row[ROW_MEMORY_ID] and row[ROW_MEMORY]) and row[ROW_REASON] is None for row in rows]]
        del rows
        self._remember_rows(indexed, numbers)
        # Made straight into their columns from the rows' columns (Owners.of_columns), or their open columns.
        self._chunk_owner = self._row_chunk_owners(indexed, numbers)  # chunk -> (memory, heading)
        # unit -> (memory, role): a search looks up only the whole-chunk units it scans, whose rows are read here from
        # their open columns or the first unit of each row's units column; the table of every unit (600k at 100k
        # memories, most of a cold open's remaining second) is made from the same rows when first needed, before any
        # change to it.
        self._whole_owner: Owners | None = _row_whole_owners(indexed, numbers)
        self._unit_rows = [(row[ROW_MEMORY_ID], row[ROW_UNITS]) for row in indexed]  # (memory id, units column): not the rows' memories
        self._all_units: Owners | None = None
        del indexed
        # A search reads the generation's link table; the full graph is built when something needs more of it
        # (link_table.py). A generation written before the table existed is read as before, and its owner writes
        # the whole table with its next batch.
        self._graph: LinkGraph | None = None
        # While the graph is not built: every name the memories' links ask for, a superset (_places_without_graph).
        self._asked: set[str] | None = None
        self._link_table: LinkTable | None = None
        self._links_whole = False  # the next batch writes every row of the link table
        if self.manifest.links_complete():
            self._link_table = LinkTable(self.manifest.link_rows())
        else:
            self._graph = LinkGraph.build(self._memories.link_inputs())
            self._links_whole = True
        if len(self._entries) > RELEASE_AFTER:  # the manifest's decoded JSON and the chunks made to own them
            release_free_memory()
        self.loads += 1

    # -- opening and building ------------------------------------------------------------

    @classmethod
    def open(cls, vault: Vault, embedder: Embedder, *, writable: bool = True, progress: Progress | None = None,
             defer_embedding: bool = False, reconcile: bool = True, stop: threading.Event | None = None,
             read_when_full: bool = False) -> "Index":
        """Open the live generation (building one if there is none or it is foreign) and reconcile the files.

        `reconcile=False` (the server): the owner answers from the generation as it was committed, like a reader,
        and `reconcile()` is left to the caller, which runs it once its watcher is up (LiveIndex.start). At 100k
        memories the reconcile was most of a served vault's cold open (bench/results/first-answer.md, issue 32,
        item 5). `stop`, set, calls off a wait for another process's first build (a server letting go of the vault).

        `read_when_full` (a command): a sound index that does not open for a full disk opens read-only, as another
        process's reader would, so that a search still answers; a write then writes its file only (which on a full
        disk names the full disk), for the next owner to take in. A server does not: it would stay a reader."""
        check_not_carried(vault.root)  # before anything under .memdir/ is read
        layout = Layout(vault.root)
        owner = layout.try_own() if writable else None
        waited = False
        try:
            generation = layout.current()
            if writable and owner is None and (generation is None or not layout.compatible(generation, embedder)):
                # Another process holds the index and is building its first generation (two commands at once on a
                # fresh vault): wait for it, or for it to let go. (A reader cannot tell a builder from nobody.)
                log.warning("another memdir process is building the index of %s; waiting for it (up to %.0f s)",
                            vault.root, BUILD_WAIT_SECONDS)
                owner, waited = layout.await_build(embedder, stop=stop), True
                generation = layout.current()
                if owner is None and stop is not None and stop.is_set() and (
                        generation is None or not layout.compatible(generation, embedder)):
                    raise IndexUnusable(f"the open of {vault.root} was called off while another memdir process builds "
                                        "its index")
            if owner is not None and generation is not None:
                layout.adopt(generation, embedder)  # an index from before stamps, checked instead of rebuilt
            # A generation built here is served by the index that filled it: opening it again from disk in the same
            # process rose 264 MB above the build's own peak at 100k memories (bench/results/s9-buildpeak9.md).
            if generation is None or not layout.compatible(generation, embedder):
                if owner is None and waited:
                    raise IndexUnusable(f"no usable index in {layout.base}: another memdir process has been building "
                                        f"it for {BUILD_WAIT_SECONDS:.0f} s; try again when it is done (memdir status "
                                        "names a server)")
                if owner is None:
                    raise IndexUnusable(f"no usable index in {layout.base}; run memdir reindex (or start memdir serve)")
                index = build_index(vault, embedder, layout, progress, defer_embedding=defer_embedding, kind=cls)
            else:
                try:
                    index = cls(vault, embedder, generation, writable=owner is not None, defer_embedding=defer_embedding)
                except DiskFullError:
                    raise
                except Exception as exc:  # a truncated FAISS file or Whoosh segment: FAISS and Whoosh raise many kinds
                    why = room.out_of_room(generation, exc)
                    if why:  # not damage: a full disk, and the index is sound once there is room
                        full = DiskFullError(room.message(f"open the index in {generation}", _short(exc), why))
                        if not read_when_full:
                            raise full from exc
                        index = cls._read_on_full_disk(vault, embedder, generation, full)
                        # Its ownership, if it has it, is kept till close, as any command's is: no other process
                        # takes the index (and meets the same full disk) while this one reads it.
                        index._owner = owner
                        return index
                    if owner is None:
                        raise IndexUnusable(f"the index in {generation} does not load ({_short(exc)}); the process "
                                            "that owns it rebuilds it when it opens the vault, or run memdir reindex") from exc
                    moved = layout.quarantine(generation)
                    log.warning("index files in %s did not load (%s): moved to %s; rebuilding from the files "
                                "(keywords first, vectors in the background)", generation.name, _short(exc), moved)
                    index = build_index(vault, embedder, layout, progress, defer_embedding=defer_embedding, kind=cls)
            generation = index.generation
            index._owner = owner
            if owner is not None:
                layout.sweep(generation)
                if reconcile:
                    index.reconcile()
                else:
                    index.reconcile_pending = True
        except BaseException:
            if owner is not None:  # a failed open must never keep the index locked (reindex would refuse)
                owner.release()
            raise
        return index

    @classmethod
    def _read_on_full_disk(cls, vault: Vault, embedder: Embedder, generation: Path, full: DiskFullError) -> "Index":
        """The generation opened as a reader without SQLite's shared memory (Manifest), or `full` when even that
        fails. On main a search on a full disk failed with `full` (bench/results/s20-attack20.md)."""
        cached = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(embedder, None)  # no file: said once
        try:
            index = cls(vault, embedder=cached, generation=generation, writable=False, shared_memory=False)
        except Exception:  # noqa: BLE001 - the full disk is what the command is told
            raise full from None
        log.warning("%s; meanwhile the index is searched read-only (a write saves its file, and the index takes it "
                    "in once there is room)", full)
        return index

    def close(self) -> None:
        with self.lock, self._keyword_turn():
            self._keyword.close()
            self._vectors.close()
            self.manifest.close()
            if self._own_cache:
                self.embedder.close()
            if self._owner is not None:
                self._owner.release()
                self._owner = None

    @for_someone
    def reconcile(self) -> SyncReport:
        """The owner's catch-up with what happened while no process owned the index: heal what a crash left, sweep
        temporary files, and read every file again (deep: a file saved with its old size and mtime is found too),
        or, right after this index filled a fresh generation, every file whose stat changed since it read them."""
        if not self._filled:  # a fill in this process ends with nothing a crash left: its syncs queued what waits for
            self.heal()  # the backfill, and heal's sets of every unit, vector and keyword id were +217 MB at 100k
        atomic.sweep_temp_files(self.root)
        # After a fill in this process every file was read (and hashed) moments ago, under this index's own entries:
        # a file changed since has another size or mtime, or its mtime was too recent to tell (_recheck), so a walk
        # comparing stats finds it. Reading all of them again took 65 s at 100k memories.
        report = self.sync(deep=not self._filled)
        self._filled = False
        self._write_facts()
        self._write_open_columns()
        self.reconcile_pending = False
        self.reconciled.set()
        return report

    def _write_facts(self) -> None:
        """Migrate a generation written before the manifest kept lifecycle facts (or after an older memdir wrote a
        batch): write them whole, from the rows' memories, so the next open decides the lifecycle without decoding a
        row. No rebuild: the table then equals what a fresh build writes (tests/indexer/test_lifecycle_facts.py).
        Made without the lock and written under it, as the open columns are (a batch written meanwhile has them made
        again under it)."""
        with self.lock:
            if self.manifest.facts_complete():
                return
        made = self.manifest.facts_made()  # every row decoded without the lock, as _write_open_columns's
        with self.lock:
            if not self.manifest.facts_complete():
                self.manifest.write_facts(lambda: [(e.path, e.memory) for e in self._entries.values()
                                                   if e.memory is not None], made)

    def _write_open_columns(self) -> None:
        """Migrate a generation written before the manifest kept each row's open columns (or after an older memdir
        wrote a batch): made whole from the files table, so the next open reads them (open_columns.py). Made without
        the lock and written under it: made under it, a 100k vault's migration held every search ~3.8 CPU s once
        after an upgrade (bench/results/s22-graph22.md). A batch written meanwhile has them made again under it."""
        with self.lock:
            if self.manifest.open_columns_complete():
                return
        made = self.manifest.open_columns_made()
        with self.lock:
            if not self.manifest.open_columns_complete():
                self.manifest.write_open_columns(made)

    def heal(self) -> int:
        """Make FAISS and Whoosh agree with the manifest after a crash; returns the files re-indexed."""
        # The open's rows do not change: their columns are parsed before the lock, behind the running searches (at
        # 100k memories this was most of a heal, and the first search waited for it behind the lock).
        entries = self._entries
        read = entries.row_ids(self._behind_searches)
        self._behind_searches()
        with self.lock, self._keyword_turn():
            valid = self._entries.indexed_ids(read if self._entries is entries else None)  # no row decoded (lazy_rows.py)
            # Sorted id arrays, not sets of Python ints: the sets of every unit, vector and keyword id were +217 MB of
            # peak at 100k memories, for a heal that finds nothing (bench/results/s10-firstlog10.md).
            expected_units, expected_chunks = np.unique(valid.units), np.unique(valid.chunks)
            vector_ids = self._vectors.sorted_ids()
            stray_vectors = _outside(vector_ids, expected_units)
            self._vectors.remove(stray_vectors)
            keyword_ids = self._keyword.sorted_chunk_ids()
            stray_keywords = _outside(keyword_ids, expected_chunks)
            if len(stray_keywords):
                self._keyword.delete_chunks(set(stray_keywords.tolist()))
            unembedded = _outside(expected_units, vector_ids)  # the strays removed were not expected
            if self.defer_embedding:  # left for the backfill, which embeds them from the files' texts
                self._defer(unembedded.tolist())
                unembedded = unembedded[:0]
            missing = np.union1d(unembedded, _outside(expected_chunks, keyword_ids))
            stale = valid.paths_holding(missing) if len(missing) else set()
            if len(stray_vectors) or len(stray_keywords) or stale:
                log.warning("index healed: %d stray vectors, %d stray keyword documents, %d files re-indexed",
                            len(stray_vectors), len(stray_keywords), len(stale))
            self._read_again(stale)
            if stale:
                self.sync(stale, deep=True, force_paths=stale)
            elif len(stray_vectors):
                self._vectors.save(self.generation)
            return len(stale)

    def refresh(self) -> bool:
        """A reader's catch-up, cheap enough to call before every read: become the owner if the owner has
        gone (returns True), else reload when the owner has committed changes since this index was loaded. An index
        read on a full disk (`read_when_full`) stays as it is: its command ends soon."""
        if self.writable or not self._shared_memory:
            return False
        layout = Layout(self.root)
        owner = layout.try_own()
        with self.lock:
            generation = layout.current()
            if owner is not None:
                if generation is None or not layout.compatible(generation, self.embedder):
                    generation = build_generation(self.vault, self.embedder, layout,
                                                  defer_embedding=self.defer_embedding)
                self._owner, self.writable, self._lost_ownership = owner, True, False  # before the swap: the owner's open migrates the manifest
                self.swap(generation)
                self.reconcile()
                return True
            if generation is None or not layout.compatible(generation, self.embedder):
                return False  # the owner is rebuilding, or indexes with another embedder: keep what we have
            if generation != self.generation or self.manifest.data_version() != self._data_version:
                self.swap(generation)
            return False

    def keep_ownership(self) -> bool:
        """Whether this index may write: called before every sync, and by a server every few seconds (served.py), so
        that an owner whose lock file was deleted makes it again before another process can take it; an owner that
        came second lets go (two stat calls when nothing happened). An index that let go this way takes the index
        back once it is free again (`refresh`)."""
        if self._owner is None:
            return self.writable or (self._lost_ownership and self.refresh())
        if self._owner.kept():
            return True
        with self.lock:
            self._owner, self.writable, self._lost_ownership = None, False, True
        log.warning("%s: the index lock file was deleted, and another process took the index before this one "
                    "could make it again; this process writes no more to it until that one lets go", self.root)
        return False

    def _regenerate(self) -> None:
        """This index's generation folder was deleted under it (`rm -rf .memdir/index`, `git clean -fdX` while a
        server runs): searches still read the open files, but every write failed on a missing file while the memory
        file itself was written, until a restart. Build a fresh generation from the files and swap it in."""
        with self.lock:
            if self.generation.is_dir():
                return
            if not self.root.is_dir():  # the whole vault was deleted: rebuilding made its folder again, holding an index
                raise IndexUnusable(f"the vault folder {self.root} was deleted under the running index")
            log.warning("the index folder %s was deleted under the running index; rebuilding it from the files",
                        self.generation)
            # Its lock file went with the folder: every sync first makes it again and takes it (keep_ownership).
            self.swap(build_generation(self.vault, self.embedder, Layout(self.root)))

    def swap(self, generation: Path) -> None:
        """Load another generation (or the same one, changed by its owner) in place of this one."""
        old_keyword, old_manifest = self._keyword, self.manifest
        self._load(generation)
        self._unembedded.clear()  # another generation's units; the owner's heal() finds what this one lacks
        # What a failed sync left belongs to the old generation: its removed unit and chunk ids are derived from the
        # memories' ids, and applied to the new one they removed its valid vectors (review of session 9).
        self._unwritten = _Unwritten()
        weighting = old_keyword._weighting  # BM25 parameters belong to the searcher, not to the files
        self._keyword.set_weighting(weighting.B, weighting.K1)
        self.version += 1
        old_keyword.close()
        old_manifest.close()

    def settle_vectors(self, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Fold the vectors' log into a new snapshot if it is past SETTLE_SHARE of it (returns whether it did): off
        the write path, so that the next open has little to replay before its first answer. Written beside the
        searches and syncs (`VectorIndex.fold`: a search waits only for the searched part's copy, ~0.1 s at 100k
        memories; the fold is abandoned, the log kept, if a sync changes the vectors meanwhile or `cancelled` says so:
        an idle fold when a request comes, a closing owner past its time budget). Crash-safe at each step."""
        with self.lock:  # the pair as one: a swap sets the new generation before it has loaded its vectors
            vectors, generation = self._vectors, self.generation
        if not self.writable or vectors.log_share(generation) <= SETTLE_SHARE:
            return False
        started = time.perf_counter()
        if not vectors.fold(generation, cancelled):
            return False
        with self.lock:
            # A reader that opened during the rewrite may hold the old snapshot without the log it needed; it
            # reloads at a manifest change, and the fold changes no entry (review of session 10).
            self.manifest.mark_changed()
        log.info("vectors' log folded into their snapshot in %.1f s", time.perf_counter() - started)
        return True

    def log_share(self) -> float:
        """The vectors' log as a share of their snapshot (see VectorIndex.log_share)."""
        return self._vectors.log_share(self.generation)

    def quiet_seconds(self) -> float:
        """How long the index was idle: no search of it ran, nothing ran for someone in this process (a request, a
        sync: in_flight.BUSY) and its vectors did not change. An idle fold and the decoding ahead wait for this."""
        if self.searches.count() or BUSY.count():
            return 0.0
        return time.monotonic() - max(self.searches.ended_at, BUSY.ended_at, self._vectors.changed_at)

    def compact(self) -> None:
        """Purge deleted keyword documents; afterwards search results equal a fresh rebuild's exactly.
        Searches go on meanwhile (the index lock is let go for Whoosh's rewrite, see `_keyword_aside`)."""
        self._keyword_aside(self._keyword.compact)

    def keyword_segments(self) -> int:
        return self._keyword.segment_count()

    def merge_keywords(self) -> int:
        """Merge the small keyword segments that small writes left (see KeywordIndex.merge_segments); returns how
        many were merged. Searches go on meanwhile; a sync that comes waits for it without holding the lock."""
        merged = self._keyword_aside(self._keyword.merge_segments)
        return merged or 0

    def _keyword_aside(self, rewrite: Callable[[], _T]) -> _T | None:
        """Run a keyword rewrite that changes no document (a merge of segments) as the one keyword writer, with the
        index lock let go: searches read the open keyword searcher meanwhile, whose segments stay readable."""
        with self.lock:
            with self._keyword_turn():
                if not self.writable:
                    return None
                self._keyword_writing = True  # the turn goes on as this write, which lets go of the lock
            held = _let_go(self.lock)
            try:
                return rewrite()
            finally:
                for _ in range(held):
                    self.lock.acquire()
                self._keyword_writing = False
                self._keyword_idle.notify_all()

    # -- reading ---------------------------------------------------------------------
    # The read API: what other modules ask of the index. The dicts behind it are the index's own, so
    # their layout can change (compact arrays, memory-mapped files) without touching the callers.

    def memory(self, memory_id: str) -> Memory | None:
        """The indexed memory with exactly this id, if any (`get` also finds it by another case)."""
        return self._memories.get(memory_id)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._memories

    def all_memories(self) -> ValuesView[Memory]:
        """Every indexed memory (a live view: copy it before the index may change)."""
        return self._memories.values()

    def memories_but(self, left_out: Iterable[str]) -> Mapping[str, Memory]:
        """Every indexed memory but these ids, as a live read-only mapping in `all_memories()`'s order, decoding only
        what is read from it (a copy before the index may change)."""
        return AllBut(self._memories, left_out)

    def lifecycle_records(self, worth: Worth | None = None, skip: frozenset[str] = frozenset()) -> Iterator[Memory | Facts]:
        """Every indexed memory as the lifecycle rules read it (`vault.lifecycle`): a memory, or for a manifest row not
        decoded yet the facts it was read with (lifecycle_facts.py), so deciding them all decodes no row. With
        `worth`, a row not decoded whose first facts it refuses is left out (Memories.lifecycle_records); the `skip`
        ids are left out too."""
        return self._memories.lifecycle_records(worth, skip)

    def lifecycle_record(self, memory_id: str) -> Memory | Facts | None:
        """One indexed memory as `lifecycle_records` reads it, None when there is none: deciding it again when the clock
        passes one of its moments decodes no row (indexer/leaving.py)."""
        return self._memories.lifecycle_record(memory_id)

    def ids_with_status(self, statuses: frozenset[str]) -> frozenset[str]:
        """The ids of the indexed memories whose status is one of `statuses`: found once, from the lifecycle facts each
        row was read with where it is not decoded yet (lazy_rows.py), then kept in step (facets.py)."""
        with self.lock:
            return self._built_facets().ids_with_status(statuses)

    def standing_ids(self) -> frozenset[str]:
        """The ids of the indexed memories marked always_inject (the standing facts every prompt's context carries):
        found once, then kept in step (facets.py), and then read without the lock, as `author_names` is: every prompt
        asks, and waited for the lock behind the other sessions' captures (bench/results/s12-warm12.md)."""
        facets = self._facets
        if facets.built:
            return facets.standing()
        with self.lock:
            return self._built_facets().standing()

    def private_ids(self) -> frozenset[str]:
        """The ids of the indexed memories marked `privacy: private` (a user vault's memories are private by where they
        live, which this does not read): found once, then kept in step (facets.py), read as `standing_ids` is."""
        facets = self._facets
        if facets.built:
            return facets.private()
        with self.lock:
            return self._built_facets().private()

    def author_names(self) -> frozenset[str]:
        """Every speaker or author the indexed memories name (indexer/people.py), the same object until one changes."""
        known = self._facets.known_names()
        if known is not None:
            return known
        with self.lock:
            return self._built_facets().author_names()

    def memories_changed_since(self, mark: int | None) -> tuple[int, frozenset[str] | None]:
        """(a mark for now, the ids of the memories remembered or forgotten since `mark`): what a reader's cache of a
        per-memory decision made at `mark` must decide again. None for the ids when `mark` is None or too old to tell
        (decide everything again)."""
        with self.lock:
            now = self._changed_before + len(self._changed)
            if mark is None or mark < self._changed_before:
                return now, None
            return now, frozenset(self._changed[mark - self._changed_before:])

    def _changed_memory(self, memory_id: str) -> None:
        self._changed.append(memory_id)
        if len(self._changed) > 2 * CHANGES_KEPT:  # a reader further behind decides everything again
            self._changed_before += len(self._changed) - CHANGES_KEPT
            del self._changed[:-CHANGES_KEPT]

    def _built_facets(self) -> Facets:
        """The facets, scanned from the memories at the first ask (the lock held)."""
        if not self._facets.built:
            # Only memories with a "speaker", "author", "always_inject" or "privacy" key can name one or be marked: in
            # a row's JSON text the key is the word in quotes, which a body saying the word cannot hold (its quotes
            # are escaped), so those rows stay undecoded.
            self._facets.build(*self._memories.facet_rows(frozenset(STATUSES) - {ACTIVE}, (
                '"speaker"', '"author"', '"always_inject"', '"privacy"')))
        return self._facets

    def memory_ids(self) -> KeysView[str]:
        return self._memories.keys()

    def memory_count(self) -> int:
        return len(self._memories)

    def entry(self, path: str) -> Entry | None:
        """What the index knows of one vault-relative file (indexed or not)."""
        return self._entries.get(path)

    def all_entries(self) -> ValuesView[Entry]:
        return self._entries.values()

    def units_of(self, memory_id: str) -> tuple[tuple[int, int, str], ...]:
        """(unit id, chunk id, role) of every vector of an indexed memory; () for an unknown id."""
        memory = self._memories.get(memory_id)
        entry = self._entries.get(memory.path) if memory else None
        return entry.units if entry else ()

    def unit_owner(self, unit_id: int) -> tuple[str, str] | None:
        """(memory id, role) of a unit (a vector), if it is indexed."""
        whole = self._whole_owner
        found = whole.get(unit_id) if whole is not None else None
        return found if found is not None else self._unit_owner.get(unit_id)

    @property
    def _unit_owner(self) -> Owners:
        """Every unit's (memory id, role), made from the open's rows on first need (see _read_generation)."""
        with self.lock:
            if self._all_units is None:
                self._all_units = _row_unit_owners(self._unit_rows)
                self._whole_owner, self._unit_rows = None, []
            return self._all_units

    def unit_owners(self) -> list[tuple[int, tuple[str, str]]]:
        """Every unit with its (memory id, role), units ascending."""
        return self._unit_owner.items()

    def whole_units_of(self, memory_ids: Iterable[str]) -> np.ndarray:
        """The whole-chunk units (the ones a vector search scans) of these memories, sorted."""
        whole = self._whole_owner
        return (whole if whole is not None else self._unit_owner).ids_of(memory_ids, WHOLE)

    def chunk_owner(self, chunk_id: int) -> tuple[str, str] | None:
        """(memory id, heading) of a chunk (a keyword document), if it is indexed."""
        return self._chunk_owner.get(chunk_id)

    def owners_of_chunks(self, chunk_ids: Sequence[int]) -> list[tuple[str, str] | None]:
        """`chunk_owner` of each chunk, looked up together."""
        return self._chunk_owner.get_many(chunk_ids)

    def owners_of_units(self, unit_ids: Sequence[int]) -> list[tuple[str, str] | None]:
        """`unit_owner` of each unit, looked up together (a vector search's hits)."""
        whole = self._whole_owner
        found = whole.get_many(unit_ids) if whole is not None else [None] * len(unit_ids)
        missing = [row for row, owner in enumerate(found) if owner is None]
        if missing:
            for row, owner in zip(missing, self._unit_owner.get_many([unit_ids[row] for row in missing])):
                found[row] = owner
        return found

    def vector_share(self) -> float:
        """The share of units that have their vector (1.0 in an index with no unit; read without the lock: counts a
        moment old are as good)."""
        embedded, waiting = len(self._vectors), len(self._unembedded)
        return embedded / (embedded + waiting) if embedded + waiting else 1.0

    def waiting_units(self) -> int:
        """How many units wait for the background backfill to embed them."""
        return len(self._unembedded)

    def is_waiting(self, unit_id: int) -> bool:
        return unit_id in self._unembedded

    @property
    def links(self) -> LinkGraph:
        """The link graph, to read (the index changes it as files change); built on the first call after an open
        that read the generation's link table instead, before the lock is taken, as a sync's first change builds it
        (`_graph_ahead`): the first supersede after a 100k vault's open built it under the lock (review of s19)."""
        if self._graph is None:
            self._graph_ahead()
        with self.lock:
            return self._built_graph()

    def _built_graph(self) -> LinkGraph:
        """The link graph, built from the memories now if the open read the link table instead (the lock held)."""
        if self._graph is None:
            with collector.loading():
                self._graph = LinkGraph.build(self._memories.link_inputs())
            self._graph.take_changed()  # what it resolved is what the table holds
            self._link_table = self._asked = None
        return self._graph

    def _ahead_of_a_change(self, paths: list[str | Path], reads: dict[str, _Read]) -> None:
        """Make, before a sync takes the index lock, what its first change of a memory needs and the open left
        undone: the link graph (a search reads the link table) and the table of every unit (the open read the whole
        units). Made under the lock at a served 100k vault's first change, they held every search for ~4 CPU s (a
        search waited 12.9 s at load 10, bench/results/s17-lead.md). Each is put in place under the lock only if
        what it was made from did not change meanwhile; else the sync makes it under the lock, as before.

        A sync whose files change no edge (a captured exchange, new or restated; a counter) needs no graph, only the
        names the links ask for (_places_without_graph), told here from the files read before the lock (`reads`, see
        _read_ahead): the graph's build was ~2 of the ~3.5 CPU s left of a served 100k vault's first capture
        (bench/results/s21-capture21.md)."""
        if self._graph is not None and self._all_units is not None:
            return  # made (every sync after a vault's first change): no lock taken for nothing
        if self._graph is None and not self._change_no_edge(paths, reads):
            self._graph_ahead()
        rows = self._unit_rows
        if self._all_units is None and rows:
            units = _row_unit_owners(rows)  # the open's rows: a list no change edits, replaced when the table is made
            with self.lock:
                if self._all_units is None and self._unit_rows is rows:
                    self._all_units, self._whole_owner, self._unit_rows = units, None, []

    def _graph_ahead(self) -> None:
        """The link graph made without the lock, put in place under it if the memories did not change meanwhile (else
        whoever asks next makes it under the lock, as before)."""
        seen = self._memories_seen()
        with collector.loading():  # made to last: frozen in a server, where every full collection walked it
            graph = LinkGraph.build(self._memories.link_inputs())  # over a copy of the slots (Memories.link_inputs)
        with self.lock:
            if self._graph is None and self._memories_seen() == seen:
                graph.take_changed()  # what it resolved is what the table holds
                self._graph, self._link_table, self._asked = graph, None, None

    def _change_no_edge(self, paths: list[str | Path], reads: dict[str, _Read]) -> bool:
        """Whether, as far as the files read before the lock tell, this sync changes no edge (a hint: the sync decides
        each memory under the lock, _places_without_graph): each file is unchanged (its stat as recorded, or its
        content read as the manifest's), or read as a memory the graph does not need. Anything else (a file gone,
        not read, not parsed) is taken to change one."""
        memories: list[tuple[str, Memory]] = []
        for raw in paths:
            rel = self._relative(raw)
            read = reads.get(rel)
            if read is None:
                recorded = self._entries.recorded(rel) if rel else None
                try:
                    info = (self.root / rel).stat()
                except OSError:
                    return False
                if recorded is None or recorded[:2] != (info.st_size, info.st_mtime_ns) or rel in self._recheck:
                    return False
            elif isinstance(read.parsed, ParseError):
                return False
            elif read.parsed is not None:
                memories.append((rel, read.parsed))
        if any(names_if_unlinked(memory) is None for _, memory in memories):
            return False  # one links: the names asked for would be made for nothing (~0.65 CPU s at 100k)
        return all(self._places_without_graph(rel, memory, ahead=True) for rel, memory in memories)

    def _asked_names(self, ahead: bool) -> set[str]:
        """Every name the memories' links ask for (a superset while the graph is not built): made once, and kept until
        the graph is built; `ahead` (without the lock): put in place under it only if the memories did not change
        meanwhile."""
        asked = self._asked
        if asked is None:
            seen = self._memories_seen()
            asked = asked_names(self._memories.link_inputs())  # over a copy of the slots (Memories.link_inputs)
            if not ahead:
                self._asked = asked
            else:
                with self.lock:
                    if self._asked is None and self._graph is None and self._memories_seen() == seen:
                        self._asked = asked
        return asked

    def _places_without_graph(self, rel: str, memory: Memory, ahead: bool = False) -> bool:
        """Whether a sync may index `memory` without the link graph (the graph not built): it changes no edge and no
        row of the link table if it links nowhere and is either the memory indexed from this file with the same id and
        path, which linked nowhere either (a restated exchange, a counter), or a new file with a new id under names no
        link asks for (a captured exchange). The graph is built later from the memories then. Under the lock, or
        `ahead` of it (_change_no_edge)."""
        names = names_if_unlinked(memory)
        if names is None:
            return False
        entry = self._entries.get(rel)
        if entry is not None:
            old = entry.memory
            return (entry.reason is None and old is not None and (old.id, old.path) == (memory.id, memory.path)
                    and names_if_unlinked(old) is not None)
        if identity_key(memory.id) in self.path_of:
            return False
        return not names & self._asked_names(ahead)

    def _memories_seen(self) -> tuple[int, int]:
        """Changes whenever the memories the graph is built from change: a load, a memory remembered or forgotten."""
        return self.loads, self._memory_changes

    @property
    def link_view(self) -> LinkGraph | LinkTable:
        """What a search reads of the links (superseded_ids, successor, neighbours): the graph once it is built, else
        the generation's link table, which answers the same."""
        with self.lock:
            return self._graph if self._graph is not None else self._link_table  # type: ignore[return-value]

    def search_units(self, query: np.ndarray, k: int, allowed: Iterable[int] | None = None,
                     excluded: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The k units nearest a query vector (cosine), among `allowed` if given, none of `excluded` (sorted ids)."""
        return self._vectors.search(query, k, allowed, excluded)

    def search_units_many(self, queries: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        return self._vectors.search_many(queries, k)

    def unit_vectors(self, unit_ids: np.ndarray) -> np.ndarray:
        """The stored vectors of these units, in order."""
        return self._vectors.vectors(unit_ids)

    def searched_units(self) -> np.ndarray:
        """The units a vector search scans (one per chunk), sorted."""
        return self._vectors.searched_order()

    def keyword_search(self, text: str, k: int, filters: KeywordFilter | None = None, postings_budget: int = 0,
                       context_boost: float = 0.0) -> list[KeywordHit]:
        """The top-k chunks for the words of `text` (see KeywordIndex.search)."""
        return self._keyword.search(text, k, filters, postings_budget, context_boost)

    def warm_postings(self, go_on: Callable[[], bool]) -> int:
        """Decode the most frequent terms' postings ahead of the searches (KeywordIndex.warm_postings), without the
        index lock, calling `go_on` between steps; returns the postings decoded."""
        return self._keyword.warm_postings(WARM_POSTINGS_SHARE, go_on)

    def decode_rows_ahead(self, go_on: Callable[[], bool]) -> int:
        """Decode the manifest rows an open left as rows (lazy_rows.py), up to ROWS_AHEAD, without the index lock,
        calling `go_on` between steps; returns the rows decoded."""
        return self._entries.decode_ahead(ROWS_AHEAD, go_on)

    def keyword_idf(self, terms: Sequence[str]) -> dict[str, float]:
        return self._keyword.idf(terms)

    def set_bm25(self, b: float, k1: float) -> None:
        """BM25 parameters for keyword searches (the searcher's setting, kept across generations)."""
        self._keyword.set_weighting(b, k1)

    def keyword_deleted_share(self) -> float:
        return self._keyword.deleted_share()

    def get(self, memory_id: str) -> Memory:
        path = self.path_of.get(identity_key(memory_id))
        if path is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return self._memories[self._entries[path].memory_id]  # type: ignore[index]

    @property
    def by_dedup_key(self) -> dict[bytes, tuple[str, ...]]:
        """Digest of normalized text and type -> the ids of the memories with it. Made at the first ask from every
        memory, outside the index lock and without keeping rows decoded (at 100k that pass is seconds of CPU, and
        under the lock it held every search; decoding kept 100k memories resident), then caught up with the memories
        changed meanwhile (`memories_changed_since`) and kept in step by `_remember` / `_forget`."""
        table = self._by_dedup_key
        for attempt in range(DEDUP_PASSES):
            if table is not None:
                break
            table = self._dedup_table(last=attempt == DEDUP_PASSES - 1)
        return table  # type: ignore[return-value]

    def _dedup_table(self, last: bool) -> dict[bytes, tuple[str, ...]] | None:
        """One pass of `by_dedup_key` over every memory, outside the lock; None when more changed meanwhile than the
        journal keeps, or a swap came (a pull, a rebuild), and this is not the `last` pass, which then makes it again
        under the lock: making it again under the lock at once held every search for the pass (review of s19)."""
        with self.lock:
            mark, _ = self.memories_changed_since(None)
            memories, manifest, read_row = self._memories, self.manifest, self.manifest.body_reader()
        digests, made = memories.dedup_digests(manifest.dedup_digests(), read_row)
        with self.lock:
            if self._by_dedup_key is not None:
                return self._by_dedup_key
            _, changed = self.memories_changed_since(mark)
            if changed is None or memories is not self._memories:  # too much changed, or another generation
                if not last:
                    return None
                digests, made = self._memories.dedup_digests(self.manifest.dedup_digests(), self.manifest.body_reader())
            else:
                for memory_id in changed:
                    memory = self._memories.get(memory_id)
                    if memory is None:
                        digests.pop(memory_id, None)
                    else:
                        digests[memory_id] = dedup_digest(memory.body, memory.type)
            table: dict[bytes, tuple[str, ...]] = {}
            for memory_id, digest in digests.items():
                hold(table, digest, memory_id)
            self._by_dedup_key = table
            if self.writable and len(made) > DEDUP_STORE_ABOVE:  # a generation written before the digests: once
                self.manifest.write_dedup_digests(made)
            return table

    def find_duplicate(self, text: str, memory_type: str) -> Memory | None:
        """An indexed memory with the same normalized text and type, if any (the oldest id wins)."""
        twins = sorted(self.by_dedup_key.get(dedup_digest(text, memory_type), ()))
        # Read without the lock: a twin deleted since the table was read is passed over, not a KeyError (review of s20)
        return next((m for i in twins if (m := self._memories.get(i)) is not None), None)

    def problems(self) -> list[Problem]:
        return [Problem(e.path, e.line, e.reason) for e in sorted(self._entries.values(), key=lambda e: e.path) if e.reason]

    def chunk_count(self) -> int:
        return len(self._chunk_owner)

    def unit_count(self) -> int:
        return len(self._unit_owner)

    def previous_of(self, memory_id: str) -> Memory | None:
        """The memory this one names as `previous:`, if it is indexed."""
        key = self.previous_key.get(memory_id)
        found = self._by_key(key) if key else None
        return found if found is not None and found.id != memory_id else None

    def next_of(self, memory_id: str) -> Memory | None:
        """The memory that names this one as `previous:` (the earliest captured, if several do)."""
        followers = [self._memories[i] for i in self.pointed_by.get(identity_key(memory_id), ()) if i != memory_id]
        return min(followers, key=_capture_order, default=None)

    def _by_key(self, key: str) -> Memory | None:
        path = self.path_of.get(key)
        entry = self._entries.get(path) if path else None
        return self._memories.get(entry.memory_id) if entry and entry.memory_id else None

    # -- changing ----------------------------------------------------------------------

    @for_someone
    def sync(self, paths: Iterable[str | Path] | None = None, *, deep: bool = False,
             force_paths: Iterable[str] = (), progress: Progress | None = None, later: bool = False,
             folders: Iterable[str | Path] = (), keyword_commit_began: Callable[[], None] | None = None,
             building: bool = False) -> SyncReport:
        """Bring the index in line with the disk for `paths` (vault-relative), or for the whole vault.

        `folders` (with `paths`): whole subtrees to bring in line as well, every file found below each and
        every indexed memory below it (one no longer found is removed): a folder a `git pull` created, moved
        in or moved away, without walking the rest of the vault. The vault itself as a folder is all of it.

        `later`: with `defer_embedding`, every new vector is left for the backfill, however few (a captured
        exchange: keyword-searchable at once, and no model call made while the index lock is held).

        `keyword_commit_began`: called once this sync has let go of the lock to commit a big keyword write, or has
        made its documents searchable while it waits for an earlier one's: then a following sync can begin
        (LiveIndex), and its documents are searchable while this one commits or waits."""
        if not self.writable:
            raise IndexUnusable("this index was opened read-only (another process owns it)")
        if not self.keep_ownership():
            raise IndexUnusable(f"{self.root}'s index lock file was deleted and another process took the index "
                                "before this one wrote again: this one writes no more until that process lets go")
        paths = None if paths is None else list(paths)
        folders = list(folders)
        # A pull's sync (many paths, or new folders) makes hundreds of thousands of objects (parsed memories, chunks,
        # keyword documents) and frees no cycles worth finding: the collector's passes over them, and a full pass over
        # the whole index they set off, were 40 % of the CPU time to keyword-searchable at 10k memories
        # (bench/results/reindex-and-pull.md, issue 32 item 4). So the collector is paused while the pull reads, chunks
        # and stages its batch, and only then (`pause`, let go in _after_keyword_writer and _write_keywords): the
        # collector is every thread's, and a pull's sync also waits (for the lock, behind an earlier keyword commit) and
        # may run the model, which a watcher cutting a long pull into batches made minutes with the collector off.
        # Whole-vault syncs (a build, the rescan) keep it: their peak counts. `building`: a slice of a fresh build
        # (fill) is many paths too, but a build's peak counts, and a collector off for every slice is off for the
        # whole build.
        if not building and not self.generation.is_dir():
            self._regenerate()
        pull = not building and paths is not None and (len(paths) >= READ_AHEAD_ABOVE or bool(folders))
        pause = collector.Pause(pull)
        try:
            return self._sync(paths, deep, force_paths, progress, later, folders, keyword_commit_began, pause)
        finally:
            pause.let_go()

    def _sync(self, paths: list[str | Path] | None, deep: bool, force_paths: Iterable[str], progress: Progress | None,
              later: bool, folders: Iterable[str | Path], keyword_commit_began: Callable[[], None] | None,
              pause: collector.Pause) -> SyncReport:
        started = time.perf_counter()
        report = SyncReport()
        below: dict[str, set[str]] = {}  # folder -> the files found below it (walked before the lock)
        pause.hold()
        if paths is not None and folders:
            below = self._walk_folders(folders)
            if "" in below:
                paths, below = None, {}  # the vault itself
            else:
                paths = list(dict.fromkeys([self._relative(raw) for raw in paths]
                                           + [rel for found in below.values() for rel in sorted(found)]))
        forced = set(force_paths)
        walked = _Walk() if paths is None and not forced else None
        # With what failed syncs left to this one (_take_unwritten): a failed pull's files were read under the lock by
        # the next one-file sync. A hint, copied without the lock (one C-level copy of a set of strings).
        given = None if paths is None else [*paths, *tuple(self._unwritten.paths)]
        read_ahead = self._read_ahead(given, walked, deep)
        # Files that changed, most likely: a memory each (a whole-vault sync mostly finds none, and makes what its
        # first one needs under the lock).
        if given is not None and self.writable:
            self._ahead_of_a_change(given, read_ahead)
        pause.let_go()  # while it waits for the lock
        with self.lock:
            pause.hold()
            # Not the keyword turn: a sync may read and chunk its batch while an earlier one commits keyword
            # documents with the lock let go, and then waits its turn to apply it (_after_keyword_writer).
            batch = _Batch(read_ahead=read_ahead, keyword_commit_began=keyword_commit_began, pause=pause)
            again: list[str] = []
            candidates: list[tuple[str, Path | Skipped | None]] = []
            failed_on: str | None = None  # the file whose reading raised, if one did
            after: list[Unit] = []
            try:
                again = self._take_unwritten(batch)
                candidates = self._candidates(None if paths is None else [*paths, *again], walked, below)
                if batch.removed_ids or self._links_whole:
                    # The graph the batch changes, built from the memories before it (see _link_changes); else built
                    # by _observe at the batch's first change of a memory. A reconcile that found every file as the
                    # manifest has it, or only their stat changed (a copy, a restore), changes no memory: building
                    # the graph decoded every row under the lock (~10 CPU s and +137 MB at 100k memories, searches
                    # waiting behind it; bench/results/s17-lead.md).
                    self._built_graph()
                for done, (rel, item) in enumerate(candidates, 1):
                    failed_on = rel
                    self._observe(rel, item, deep or rel in forced, batch, report)
                    if progress:
                        progress("reading", done, len(candidates))
                failed_on = None
                self._name_duplicate_holders(batch)
                self._chunk(batch)
                self._after_keyword_writer(batch)
                big = len(batch.embed) + len(batch.keyword_docs) > RELEASE_AFTER
                with disk_full(self.generation):
                    self._apply(batch, report, later, progress, after)
            except BaseException:
                # Not the file whose reading raised: kept for every later sync, one such file failed them all
                # (review of session 9). A whole-vault sync still looks at it again (_recheck).
                self._left_unwritten(batch, [*again, *(rel for rel, _ in candidates if rel != failed_on)], failed_on,
                                     whole=paths is None)
                raise
            pause.let_go()
            del batch
            if big:
                release_free_memory()
        if after:  # the model runs with the lock let go: searches and other syncs go on meanwhile
            try:
                with disk_full(self.generation):
                    report.embedded += self._embed_queued([u.unit_id for u in after])
            except Exception as exc:  # noqa: BLE001 - indexed and queued already: the backfill tries again
                log.warning("embedding %d units after a sync failed (%s); left for the backfill", len(after), _short(exc))
                self.embedding_wanted.set()
        report.seconds = time.perf_counter() - started
        return report

    def _left_unwritten(self, batch: _Batch, paths: list[str], failed_on: str | None = None, whole: bool = False) -> None:
        """A sync failed before its manifest write (a keyword stage or commit, the model, a full disk): the index's
        own tables hold its batch already, and Whoosh, FAISS and the manifest may not. Had they been left so, the
        next syncs would have found its files as the tables have them, and its memories unsearchable until the next
        owner's heal (review of session 8). So its files are read and written again by the next sync, whatever paths
        that one is given, and what the batch removed is removed again with it.

        A failed sync of the whole vault (`whole`) leaves the files it did not change to the next whole-vault sync
        (the rescan, the next owner's open), which looks at every one of them again: the watcher's next one-file batch
        read all of them under the index lock (review of session 9). The files it changed are read again by the next
        sync whatever it is, as any failed sync's: their unit ids are kept by a changed text, so the removal carried
        over stripped their vectors, and with the keyword write failed too they were not found by their new text
        until the rescan (review of session 10)."""
        self._read_again([path for path in batch.entries if path in self._entries])
        self._recheck.update(paths)  # a whole-vault sync looks at them too (the others it gives, _candidates)
        if failed_on is not None:
            self._recheck.add(failed_on)
        left = self._unwritten
        if not whole:
            left.paths.update(paths)
        left.paths.update(path for path in batch.entries if path != failed_on)
        left.deleted_paths.extend(batch.deleted_paths)
        left.removed_ids |= batch.removed_ids
        left.removed_units |= batch.removed_units

    def _take_unwritten(self, batch: _Batch) -> list[str]:
        """Put into `batch` what failed syncs left unwritten; returns the paths to read again."""
        left, self._unwritten = self._unwritten, _Unwritten()
        batch.deleted_paths.extend(path for path in left.deleted_paths if path not in self._entries)
        batch.removed_ids |= left.removed_ids  # one this batch places again leaves the set (_index_memory)
        batch.removed_units |= left.removed_units  # removed before this batch's vectors are added (_apply)
        return sorted(left.paths)

    def _read_again(self, paths: Iterable[str]) -> None:
        """Forget what the index holds of these files' texts: the next sync that looks at them reads, chunks, embeds
        (from the embedding cache) and writes each again, even where its size and mtime are as recorded."""
        for path in paths:
            self._entries[path] = replace(self._entries[path], content_hash="", embed_hash="", keyword_hash="")
            self._recheck.add(path)

    def fill(self, progress: Progress | None = None, slice_files: int | None = None) -> SyncReport:
        """Index every file of the vault into this new, empty generation, `slice_files` (BUILD_SLICE) files at a time.

        Each slice is one ordinary sync of its paths: read, parse, chunk, keyword-write, embed and persist, then let
        go, before the next is read. A build as one sync held every file's parse, chunks and units to its end (2.2-2.4
        GB at 100k memories, bench/results/scale.md, issue 32 item 1); now the peak grows with a slice. Syncs of paths
        are the incremental index, so a sliced build equals a one-sync build: a memory whose neighbour (`previous:`) or
        duplicate id turns up in a later slice is chunked again there, as an edit would be (its unchanged texts come
        from the embedding cache). A crash between slices leaves a generation that never went live."""
        size = slice_files or BUILD_SLICE
        files = sorted(relative(self.root, item) if isinstance(item, Path) else item.path for item in walk(self.root))
        report = SyncReport()
        counts = _BuildProgress(progress, len(files))
        for start in range(0, len(files), size):
            part = files[start:start + size]
            done = self.sync(part, deep=True, progress=counts.slice(start, len(part)) if progress else None,
                             building=True)
            report.added += done.added
            report.errors += done.errors
            report.embedded += done.embedded
            report.deferred += done.deferred
            report.held += done.held
            del part, done
        # The last slices' vectors went to the log, which every open replays until an owner rewrites the snapshot: at
        # 100k memories a 112 MB log and ~1.3 CPU s of a served first answer (bench/results/s9-first9.md). A build
        # ends with the snapshot instead (both parts written in bounded slices, vectors.py).
        with self.lock:
            self._vectors.save(self.generation)
        self._filled = True
        return report

    def _read_ahead(self, paths: list[str | Path] | None, walked: _Walk | None = None,
                    deep: bool = False) -> dict[str, _Read]:
        """Read and parse the changed files of a big sync (the whole vault, or many paths: a pull) before it takes
        the index lock, so that searches do not wait for a thousand files to be read. A hint only: under the lock
        each file is looked at again, and one that changed meanwhile is read again.

        `walked` (a reconcile of the whole vault, not deep) receives every file of the walk, and which of them
        were found as the manifest has them: under the lock only the others are looked at again. Walking and comparing 100k files
        a second time under the lock made every search wait for it (tens of seconds at 100k memories on a loaded
        machine, bench/results/reindex-and-pull.md, issue 32 item 4). A file changed after this walk is in the
        watcher's next batch.

        A deep reconcile (`deep`: the owner's open) reads and hashes every file here too, and counts as unchanged only
        a file whose stat and content hash are the manifest's and whose mtime is safely past (RACY_NS): it used to
        walk the vault a second time and read every file under the lock (bench/results/first-answer.md, issue 32
        item 5).

        A few paths are read here too while the link graph is not built: whether the sync needs it is told from these
        reads before the lock (_ahead_of_a_change), and the sync takes them, so each file is read once (deciding from a
        read of its own read each file of a small sync twice, and the build's small slices all of theirs)."""
        if paths is not None and len(paths) < READ_AHEAD_ABOVE and (self._graph is not None or not self.writable):
            return {}  # a few files: read under the lock, unless the graph is not built (see _ahead_of_a_change)
        if paths is None:
            files = []
            for found, item in enumerate(walk(self.root)):
                if found % BEHIND_SEARCHES_EVERY == 0:
                    self._behind_searches()
                rel = relative(self.root, item) if isinstance(item, Path) else item.path
                if walked is not None:
                    walked.items[rel] = item
                if isinstance(item, Path):
                    files.append(item)
        else:
            files = [raw if isinstance(raw, Path) and raw.is_absolute() else self.root / str(raw) for raw in paths]
        ahead: dict[str, _Read] = {}
        for done, path in enumerate(files):
            if paths is None and done % BEHIND_SEARCHES_EVERY == 0:
                self._behind_searches()
            if not is_memory_path(self.root, path) or not isinstance(inspect(self.root, path), Path):
                continue  # not a memory, or a link: the sync decides under the lock, and reads nothing outside
            rel = relative(self.root, path)
            try:
                info = path.stat()
            except OSError:
                continue
            previous = self._entries.recorded(rel)  # (size, mtime, content hash): no row decoded for it
            same_stat = previous is not None and previous[:2] == (info.st_size, info.st_mtime_ns)
            # A file to look at again though its stat is as recorded (_recheck: a failed sync's, one saved within the
            # mtime's tick) is read here too: a whole-vault sync after a failed one read all of them under the lock.
            rechecked = rel in self._recheck
            if same_stat and not deep and not rechecked:
                if walked is not None:
                    walked.unchanged.add(rel)  # as the manifest has it: not looked at again
                continue
            checked_at = time.time_ns()
            try:
                data = atomic.read_bytes(path)
            except OSError:  # not readable by this user, a bad sector: the sync's read under the lock makes it its error
                continue
            if not data:
                continue  # gone, or empty (a save in progress?): the sync looks at it under the lock
            parsed: Memory | ParseError | None = None
            digest = sha256(data)
            if previous is not None and digest == previous[2]:  # the content is as the manifest has it
                if (same_stat and walked is not None and not rechecked  # deep, or looked at again: unchanged
                        and info.st_mtime_ns < checked_at - RACY_NS):
                    walked.unchanged.add(rel)
                    continue
            else:
                try:
                    parsed = _parse(self.vault, data, rel)
                except ParseError as exc:
                    parsed = exc
            ahead[rel] = _Read(info.st_size, info.st_mtime_ns, checked_at, digest, parsed)
        return ahead

    def _behind_searches(self) -> None:
        """A walk of the whole vault before the lock (a reconcile, a rescan) waits for the searches running now: it
        is background work, and beside a search it took half the interpreter (a served 100k vault's first answer
        came 3 CPU s later with the owner's reconcile at start, bench/results/merged.md session 8). Bounded: only the searches
        running now, each wait at most SEARCH_WAIT_SECONDS, so a stream of searches slows the walk, never stops it."""
        # Not with the lock held (a reader that became the owner reconciles under it): the searches wait for it.
        if self.searches.count() and not self.lock._is_owned():  # type: ignore[attr-defined]
            self.searches.wait_for_running(SEARCH_WAIT_SECONDS)

    def _walk_folders(self, folders: Iterable[str | Path]) -> dict[str, set[str]]:
        """Each outermost of `folders` (vault-relative, "" for the vault) -> the vault-relative paths of the files a
        walk finds below it; a folder inside another one given is walked with it."""
        rels = sorted({self._relative(raw).strip("/") for raw in folders})
        if "" in rels:
            return {"": set()}
        given = set(rels)
        outermost = [rel for rel in rels
                     if not any("/".join(rel.split("/")[:depth]) in given for depth in range(1, rel.count("/") + 1))]
        return {rel: {relative(self.root, item) if isinstance(item, Path) else item.path
                      for item in walk_below(self.root, self.root / rel)} for rel in outermost}

    def _relative(self, raw: str | Path) -> str:
        """A path given to sync, vault-relative ("" for the vault itself)."""
        if isinstance(raw, Path) and raw.is_absolute():
            return "" if raw == self.root else relative(self.root, raw)
        return str(raw)

    def _candidates(self, paths: Iterable[str | Path] | None, walked: _Walk | None = None,
                    below: dict[str, set[str]] | None = None) -> list[tuple[str, Path | Skipped | None]]:
        if paths is None and walked is not None:  # walked before the lock; unchanged files left out (_read_ahead)
            gone = {path: None for path in self._entries if path not in walked.items}
            return sorted({**{rel: item for rel, item in walked.items.items()
                              if rel not in walked.unchanged or rel in self._recheck}, **gone}.items())
        if paths is None:
            found = {relative(self.root, p) if isinstance(p, Path) else p.path: p for p in walk(self.root)}
            gone = {path: None for path in self._entries if path not in found}
            return sorted({**found, **gone}.items())
        items = []
        for raw in paths:
            rel = relative(self.root, raw) if isinstance(raw, Path) and raw.is_absolute() else str(raw)
            if not is_memory_path(self.root, self.root / rel):
                continue  # .trash/, .memdir/, .git/ ... are never memories, whoever asks
            items.append((rel, inspect(self.root, self.root / rel)))
        named = dict(items)
        if below:
            # Below a synced folder its walk decides: what it did not find is gone (a folder moved away), also a file
            # still reachable some way a vault walk does not go (through a folder symlink). A file that appeared
            # there after the walk is in the watcher's next batch: its events came after this batch was taken.
            found = set().union(*below.values())
            prefixes = tuple(folder + "/" for folder in below)
            named.update({rel: None for rel in [*self._entries, *named] if rel.startswith(prefixes) and rel not in found})
        return sorted(named.items())

    def _observe(self, rel: str, item: Path | Skipped | None, deep: bool, batch: _Batch, report: SyncReport) -> None:
        # (size, mtime, content hash) without decoding the row: a file whose content is as recorded changes no memory,
        # and is never decoded (_restat). Every path below that changes one builds the graph first (_changing).
        recorded = self._entries.recorded(rel)
        if item is None:
            self._recheck.discard(rel)
            self._held_since.pop(rel, None)
            if recorded is not None:
                previous = self._changing(rel)
                assert previous is not None  # recorded: its entry is there, under the lock
                batch.deleted_paths.append(rel)
                # A duplicate reclaimed earlier in this sync may have queued a row for this path: the manifest
                # deletes before it upserts, so the row would outlive the file (and leak chunks on restart).
                batch.entries.pop(rel, None)
                self._unindex(previous, batch)
                self._entries.pop(rel)
                report.removed += previous.reason is None
            return
        if isinstance(item, Skipped):
            self._set_error(rel, self._changing(rel), 0, 0, "", None, item.reason, batch, report)
            return
        checked_at = time.time_ns()
        try:
            info = item.stat()
        except FileNotFoundError:
            return self._observe(rel, None, deep, batch, report)
        if (recorded and not deep and rel not in self._recheck
                and recorded[:2] == (info.st_size, info.st_mtime_ns)):
            return
        ahead = batch.read_ahead.pop(rel, None)
        data: bytes | None = None
        if ahead is not None and ahead.usable(info.st_size, info.st_mtime_ns, recorded):
            digest, checked_at = ahead.digest, ahead.checked_at  # read before the lock (never empty), unchanged since
            self._held_since.pop(rel, None)
        else:
            ahead = None
            try:
                data = atomic.read_bytes(item)
            except OSError as exc:  # not readable by this user (made by sudo, mode 600), a bad sector: this file's error
                self._recheck.add(rel)  # read again by the next sync that looks at it, though its stat is unchanged
                reason = f"cannot be read: {exc.strerror or exc}"
                previous = self._changing(rel)
                return self._set_error(rel, previous, info.st_size, info.st_mtime_ns, "", None, reason, batch, report)
            if data is None:
                return self._observe(rel, None, deep, batch, report)
            # Only an empty read looks at the entry's fields (an editor's save caught half done).
            if self._save_in_progress(rel, data, self._entries.get(rel) if not data else None, info.st_mtime_ns,
                                      checked_at):
                self._recheck.add(rel)
                report.held.append(rel)
                return
            digest = sha256(data)
        # File systems stamp mtimes by a coarse clock (a kernel tick; 1-2 s on FAT, HFS+, some network
        # mounts), so a save within the same tick may keep the size and mtime recorded here, for instance
        # an editor that truncated and rewrote the file while we read it. Until its mtime is safely older
        # than the moment we read it, the file is read again (and hashed; parsed only if it changed).
        if info.st_mtime_ns >= checked_at - RACY_NS:
            self._recheck.add(rel)
        else:
            self._recheck.discard(rel)
        if recorded and recorded[2] == digest:
            if recorded[:2] != (info.st_size, info.st_mtime_ns):
                self._restat(rel, info.st_size, info.st_mtime_ns, batch)
            return
        try:
            memory = ahead.memory() if ahead is not None else _parse(self.vault, data or b"", rel)
        except ParseError as exc:
            previous = self._changing(rel)
            self._set_error(rel, previous, info.st_size, info.st_mtime_ns, digest, exc.line, exc.reason, batch, report)
            return
        previous = self._changing(rel, memory)
        self._index_memory(rel, memory, previous, info.st_size, info.st_mtime_ns, batch, report)

    def _changing(self, rel: str, memory: Memory | None = None) -> Entry | None:
        """The entry of a file whose memory this batch is about to change (to `memory`, if read), the graph built
        first: it is built from the memories before the batch (_link_changes). Not for a memory the graph does not
        need (_places_without_graph)."""
        if self._graph is not None or memory is None or not self._places_without_graph(rel, memory):
            self._built_graph()
        return self._entries.get(rel)

    def _restat(self, rel: str, size: int, mtime_ns: int, batch: _Batch) -> None:
        """Record a file's new size and mtime, its content as recorded (touched, copied, restored, checked out
        again). A row not decoded yet is patched where it lies and only its two columns are written: decoding 100k
        rows into entries and writing them back whole was +137 MB and 6.2 CPU s of the reconcile of a 100k vault
        whose mtimes had all changed (bench/results/s17-lead.md)."""
        entry = self._entries.restat(rel, size, mtime_ns)
        if entry is None:
            batch.restated[rel] = (size, mtime_ns)
        else:
            batch.entries[rel] = entry

    def _save_in_progress(self, rel: str, data: bytes, previous: Entry | None, mtime_ns: int, checked_at: int) -> bool:
        """Whether an empty read of a memory's file is an editor's save caught half done.

        An editor that saves in place truncates the file, then writes it. A memory's file found empty
        soon after a change (its mtime within the coarsest clock's tick of now) is taken for that save:
        the memory is kept as it was (dropping it would hide it from searches and embed it again) and
        looked at again; the save's own events bring a sync, and the live index asks for one. How long
        is measured by memdir's own clock from the first empty read, so a skewed or future mtime
        cannot hold a file for longer than SAVE_IN_PROGRESS_SECONDS; after that it was emptied on
        purpose, and is indexed as such."""
        if data or previous is None or previous.reason is not None or not previous.memory_id \
                or mtime_ns < checked_at - RACY_NS:
            self._held_since.pop(rel, None)
            return False
        first = self._held_since.setdefault(rel, held_clock())
        if held_clock() - first < SAVE_IN_PROGRESS_SECONDS:
            return True
        del self._held_since[rel]
        return False

    def _set_error(self, rel: str, previous: Entry | None, size: int, mtime_ns: int, digest: str,
                   line: int | None, reason: str, batch: _Batch, report: SyncReport) -> None:
        if previous is not None:
            self._unindex(previous, batch)
        entry = Entry(rel, size, mtime_ns, digest, None, line=line, reason=reason)
        batch.entries[rel] = self._entries[rel] = entry
        report.errors += 1

    def _index_memory(self, rel: str, memory: Memory, previous: Entry | None, size: int, mtime_ns: int,
                      batch: _Batch, report: SyncReport) -> None:
        memory = compacted(memory)  # held as long as it is indexed: its repeated strings once, as after a load
        if previous is not None and previous.memory_id and previous.memory_id != memory.id:
            # Another id, or the same in another case: the old one's memory goes (its units are keyed by the id as
            # written). Comparing identity keys kept a case-changed id's old memory beside the new one.
            self._unindex(previous, batch)
            previous = None
        owner = self.path_of.get(identity_key(memory.id))
        if owner is not None and owner != rel:
            rival = self._entries[owner].memory
            if rival is not None and id_precedence(rival) <= id_precedence(memory):
                entry = Entry(rel, size, mtime_ns, memory.content_hash, None, line=memory.id_line,
                              reason=duplicate_id_reason(memory.id, owner), memory=memory)
                if previous is not None:
                    self._unindex(previous, batch)
                batch.entries[rel] = self._entries[rel] = entry
                report.errors += 1
                return
            self._demote(owner, memory, batch, report)
        # Chunked at the end of the sync, when every neighbour is known. Until then the entry keeps
        # what the indices hold for this file, so an unindex in between removes exactly that.
        kept = previous if previous is not None and previous.reason is None else None
        entry = Entry(memory.path if memory.path == rel else rel, size, mtime_ns, memory.content_hash, memory.id,
                      kept.chunk_ids if kept else (),
                      kept.embed_hash if kept else "", memory=memory, units=kept.units if kept else (),
                      keyword_hash=kept.keyword_hash if kept else "")
        batch.placed.add(memory.id)
        batch.removed_ids.discard(memory.id)
        batch.entries[rel] = self._entries[rel] = entry
        self._remember(memory, batch.touched)
        if previous is None or previous.reason is not None:
            report.added += 1
        else:
            report.updated += 1

    def _name_duplicate_holders(self, batch: _Batch) -> None:
        """Name the file that holds a duplicated id at the end of the batch, whatever the order of events.

        The paths whose entry says "duplicate id" are kept from batch to batch (entries change only
        through a batch), instead of walking every entry on every sync: at 10k memories that walk made
        each scored memory's sync 10-130 ms, the more when other threads wanted the interpreter."""
        if self._duplicates is None:
            self._duplicates = {path for path, reason, memory in self._entries.reasons()  # no row decoded for it
                                if memory and is_duplicate_id_reason(reason)}
        else:
            self._duplicates.difference_update(batch.deleted_paths)
            for path, entry in batch.entries.items():
                (self._duplicates.add if _names_duplicate(entry) else self._duplicates.discard)(path)
        for path in sorted(self._duplicates):
            entry = self._entries[path]  # a path leaves the set with its entry: a KeyError here is a bug
            holder = self.path_of.get(identity_key(entry.memory.id), "?")
            reason = duplicate_id_reason(entry.memory.id, holder)
            if reason != entry.reason:
                batch.entries[path] = self._entries[path] = replace(entry, reason=reason)

    def _demote(self, owner_path: str, winner: Memory, batch: _Batch, report: SyncReport) -> None:
        """A file with an older claim on this id appeared: the previous holder becomes the duplicate."""
        old = self._entries[owner_path]
        self._unindex(old, batch, reclaim=False)  # the id is not free: the new claimant takes it
        batch.entries[owner_path] = self._entries[owner_path] = replace(
            old, memory_id=None, chunk_ids=(), embed_hash="", units=(), keyword_hash="",
            line=old.memory.id_line if old.memory else None, reason=duplicate_id_reason(winner.id, winner.path))
        report.errors += 1

    def _unindex(self, entry: Entry, batch: _Batch, reclaim: bool = True) -> None:
        if entry.reason is not None or not entry.memory_id:
            return
        memory_id = entry.memory_id
        batch.removed_units.update(entry.unit_ids)
        batch.placed.discard(memory_id)
        batch.removed_ids.add(memory_id)
        self._disown(entry)
        self._forget(memory_id, batch.touched)
        if reclaim:
            self._reclaim(memory_id, entry.path, batch)

    def _reclaim(self, memory_id: str, freed_path: str, batch: _Batch) -> None:
        """When an id is freed, the best duplicate waiting for it is indexed in its place."""
        waiting = [e for e in self._entries.values()
                   if e.path != freed_path and e.reason and e.memory and identity_key(e.memory.id) == identity_key(memory_id)]
        if not waiting:
            return
        best = min(waiting, key=lambda e: id_precedence(e.memory))  # type: ignore[arg-type]
        self._index_memory(best.path, best.memory, None, best.size, best.mtime_ns, batch, SyncReport())  # type: ignore[arg-type]

    def _remember(self, memory: Memory, touched: set[str] | None = None) -> None:
        self._forget(memory.id, touched, again=True)
        self._memories[memory.id] = memory
        self._facets.remember(memory)
        self._changed_memory(memory.id)
        self._memory_changes += 1  # a graph built ahead from the memories before is not used (_ahead_of_a_change)
        if self._by_dedup_key is not None:
            hold(self._by_dedup_key, dedup_digest(memory.body, memory.type), memory.id)
        self.path_of[identity_key(memory.id)] = memory.path
        key = previous_key(memory)
        if key is not None:
            self.previous_key[memory.id] = key
            hold(self.pointed_by, key, memory.id)
        if touched is not None:
            touched.update(k for k in (identity_key(memory.id), key) if k)

    def _remember_rows(self, rows: list[tuple], numbers: np.ndarray | None = None) -> None:
        """`_remember` for the memories of an open's rows, from their columns: their memories stay undecoded, except
        the few whose text may name a `previous:` (their neighbour keys need it), told by their open columns' marks
        when read (`numbers`), else by their text. Same order, same tables."""
        if not self._memories.load_all(rows, None if numbers is None else numbers[:, open_columns.MARKS]):
            for row in rows:  # an id on two rows: remembered one by one, the later one winning
                self._remember(self._entries[row[ROW_PATH]].memory)  # type: ignore[arg-type]
            return
        self.path_of.update((identity_key(row[ROW_MEMORY_ID]), row[ROW_PATH]) for row in rows)
        marked = open_columns.bits(['"previous"'])
        for row in (rows if numbers is None else
                    [rows[place] for place in np.flatnonzero(numbers[:, open_columns.MARKS] & marked).tolist()]):
            if '"previous"' in row[ROW_MEMORY]:  # the frontmatter key, as the row's JSON holds it
                memory = self._memories[row[ROW_MEMORY_ID]]
                key = previous_key(memory)
                if key is not None:
                    self.previous_key[memory.id] = key
                    hold(self.pointed_by, key, memory.id)

    def _row_chunk_owners(self, rows: list[tuple], numbers: np.ndarray | None = None) -> Owners:
        """chunk -> (memory id, heading) of an open's rows: a memory read as one chunk (the chunk id of an empty
        heading, see _chunk_headings) from its open columns (`numbers`) or its columns, the others decoded and chunked
        again."""
        ids: list[int] = []
        owner: list[int] = []
        label: list[int] = []
        headings: dict[str, int] = {"": 0}
        whole_memories = np.zeros(0, dtype=np.int64)
        if numbers is None:
            chunk_lists = json.loads("[" + ",".join(row[ROW_CHUNK_IDS] or "[]" for row in rows) + "]")  # one parse, not one a row
            others = []
            for code, (row, chunks) in enumerate(zip(rows, chunk_lists)):
                if len(chunks) == 1 and chunks[0] == chunk_id(row[ROW_MEMORY_ID], ""):
                    ids.append(chunks[0])
                    owner.append(code)
                    label.append(0)
                else:
                    others.append(code)
        else:
            whole_memories = np.flatnonzero(numbers[:, open_columns.CHUNK] != open_columns.NONE)
            others = np.flatnonzero(numbers[:, open_columns.CHUNK] == open_columns.NONE).tolist()
        for code in others:
            for chunk, (_, heading) in _chunk_headings(self._entries[rows[code][ROW_PATH]]):
                ids.append(chunk)
                owner.append(code)
                label.append(headings.setdefault(heading, len(headings)))
        return _in_row_order(np.concatenate([numbers[whole_memories, open_columns.CHUNK] if numbers is not None else
                                             whole_memories, np.array(ids, dtype=np.int64)]),
                             np.concatenate([whole_memories, np.array(owner, dtype=np.int64)]),
                             [row[ROW_MEMORY_ID] for row in rows],
                             np.concatenate([np.zeros(len(whole_memories), dtype=np.int32), np.array(label, dtype=np.int32)]),
                             list(headings))

    def _forget(self, memory_id: str, touched: set[str] | None = None, again: bool = False) -> None:
        """`again`: the memory is remembered right after (`_remember`), which puts the new one in its place: a reader
        without the lock (a prompt's standing facts, Index.standing_ids) finds one or the other, never neither."""
        memory = self._memories.get(memory_id) if again else self._memories.pop(memory_id, None)
        if memory is None:
            return
        self._facets.forget(memory_id, marks=not again)
        self._changed_memory(memory_id)
        self._memory_changes += 1
        if self._by_dedup_key is not None:
            let_go(self._by_dedup_key, dedup_digest(memory.body, memory.type), memory_id)
        if self.path_of.get(identity_key(memory_id)) == memory.path:
            del self.path_of[identity_key(memory_id)]
        key = self.previous_key.pop(memory_id, None)
        if key is not None:
            let_go(self.pointed_by, key, memory_id)
        if touched is not None:
            touched.update(k for k in (identity_key(memory_id), key) if k)

    def _own(self, entry: Entry, chunks: list[Chunk]) -> None:
        for chunk in chunks:
            self._chunk_owner[chunk.chunk_id] = (chunk.memory_id, chunk.heading)
        for unit, _, role in entry.units:
            self._unit_owner[unit] = (entry.memory_id, role)  # type: ignore[assignment]

    def _disown(self, entry: Entry) -> None:
        for chunk in entry.chunk_ids:
            self._chunk_owner.pop(chunk, None)
        for unit in entry.unit_ids:
            self._unit_owner.pop(unit, None)

    def _chunk(self, batch: _Batch) -> None:
        """Chunk the memories read in this sync and those whose neighbours may have changed, in the final state."""
        for memory_id in sorted(batch.placed | self._affected(batch.touched)):
            memory = self._memories[memory_id]
            entry = self._entries[memory.path]
            chunks = chunks_for(memory, self.neighbours(memory))
            units = [unit for chunk in chunks for unit in chunk.units]
            embed_hash = unit_hashes.embed_hash(units)  # a digest per unit id and text (unit_hashes.py)
            keyword_hash = sha256(repr(keyword_signature(memory, chunks)))
            if embed_hash != entry.embed_hash:
                # Only the units whose text changed: the memory captured before a new exchange gains its `next` unit
                # and keeps the others, which were removed from FAISS and added back (unit_hashes.py).
                kept = unit_hashes.kept_units(entry.embed_hash, entry.unit_ids, units)
                batch.removed_units.update(unit for unit in entry.unit_ids if unit not in kept)
                batch.embed.extend(unit for unit in units if unit.unit_id not in kept)
            if keyword_hash != entry.keyword_hash:  # the documents need no units: their texts go once embedded
                batch.keyword_docs[memory_id] = (memory, [replace(c, units=()) for c in chunks])
            if memory_id in batch.placed or embed_hash != entry.embed_hash or keyword_hash != entry.keyword_hash:
                new = replace(entry, chunk_ids=tuple(c.chunk_id for c in chunks), embed_hash=embed_hash,
                              units=tuple((u.unit_id, u.chunk_id, u.role) for u in units), keyword_hash=keyword_hash)
                self._disown(entry)
                self._own(new, chunks)
                batch.entries[memory.path] = self._entries[memory.path] = new

    def _affected(self, touched: set[str]) -> set[str]:
        """Memories whose neighbours may have changed: those a touched key names, and those naming one."""
        found: set[str] = set()
        for key in touched:
            memory = self._by_key(key)
            if memory is not None:
                found.add(memory.id)
            found.update(self.pointed_by.get(key, ()))
        return found

    def neighbours(self, memory: Memory) -> Neighbours:
        """The texts an indexed memory's neighbours lend it (see chunking)."""
        follower = self.next_of(memory.id)
        lent = _lent(follower, memory)
        pair = pair_text(memory, follower) if lent and follower is not None else None
        return Neighbours(_lent(self.previous_of(memory.id), memory), lent, pair or "")

    # -- embedding in the background -------------------------------------------------------

    @contextlib.contextmanager
    def _keyword_turn(self) -> Iterator[None]:
        """The keyword index for a writer other than a sync (a merge of segments, compact, heal, close), the lock held:
        one keyword writer at a time, and none of them holding the lock while it waits for Whoosh's. It waits, the
        lock let go, behind the writers already in line (a big keyword write under way, syncs staged and waiting),
        and goes ahead of those that come after it: back-to-back pull batches cannot keep it waiting as long as the
        pull lasts. A sync made in the turn (heal's) is part of it: it does not queue behind later writers."""
        me = threading.get_ident()
        if self._turn_holder == me:
            yield
            return
        if self._keyword_writing or self._keyword_line or self._turn_holder is not None:
            self._wait_in_line(object())
        self._turn_holder = me
        try:
            yield
        finally:
            self._turn_holder = None
            self._keyword_idle.notify_all()

    def _wait_in_line(self, writer: object, before_waiting: Callable[[], None] = lambda: None) -> None:
        """Queue `writer` in the keyword line (the lock held), run `before_waiting`, and wait, the lock let go, until
        the writers before it are done."""
        self._keyword_line.append(writer)  # in line before the lock is let go: a later writer queues behind it
        try:
            before_waiting()
            self._keyword_idle.wait_for(lambda: not self._keyword_writing and self._turn_holder is None
                                        and self._keyword_line[0] is writer)
        finally:
            self._keyword_line.remove(writer)
            self._keyword_idle.notify_all()

    def _after_keyword_writer(self, batch: _Batch) -> None:
        """Wait, the lock let go, while an earlier sync commits its big keyword write (a pull the watcher cut in two
        or more batches), and after the writers in line before this one (syncs, and other writers' turns: a merge of
        segments): this batch's keyword documents are searchable meanwhile (fresh_keywords), and it is applied
        (vectors, graph, keywords, manifest) in its turn, so that what each sync persists is its own batch, in the
        order the batches were read.

        The next batch is handed on as soon as this one is staged (`keyword_commit_began`): a third part of a slow
        pull is then read and searchable while the first still commits, not after the second's commit began. A later
        sync may change a memory this one placed before this one applies: the graph takes the versions this batch
        read (`placed_memories`), and the later sync applies its own over them."""
        if self._turn_holder == threading.get_ident():
            return  # a sync of the writer in its turn (heal's)
        if not self._keyword_writing and not self._keyword_line and self._turn_holder is None:
            return
        self._wait_in_line(batch, lambda: self._stage_ahead(batch))

    def _stage_ahead(self, batch: _Batch) -> None:
        """Make a waiting batch searchable (the lock let go meanwhile) and hand the next batch on."""
        batch.placed_memories = {memory_id: self._memories[memory_id] for memory_id in batch.placed}
        self.version += 1  # the memories changed: what searches keep by version (their allowed set) is stale
        if batch.keyword_docs or batch.removed_ids:
            held = _let_go(self.lock)  # searches go on while it is analysed, as while it waits
            try:
                batch.staged = self._keyword.stage_ahead(list(batch.keyword_docs.values()),
                                                         batch.removed_ids - set(batch.keyword_docs))
            finally:
                for _ in range(held):
                    self.lock.acquire()
            self.version += 1
        batch.pause.let_go()  # read, chunked and staged: what is left is waiting, and Whoosh's write
        if batch.keyword_commit_began is not None:
            batch.keyword_commit_began()

    def _write_keywords(self, docs: list[tuple[Memory, list[Chunk]]], removed: set[str],
                        began: Callable[[], None] | None = None, staged: Staged | None = None,
                        pause: collector.Pause | None = None) -> None:
        """Index the keyword documents of a sync. A big one (a pull of hundreds of files) is written with the
        index lock let go: adding and committing 1,000 memories' documents takes Whoosh seconds, and searches
        would wait behind it. They read the last committed keyword state meanwhile, over memories already in
        their new state: a changed memory keeps its chunk ids (its old text's words still find it), a removed
        one's chunks have no owner and are skipped (search._best_per_memory), a new one is not found yet.

        `staged`: these documents were made searchable already, while an earlier write committed (_after_keyword_writer).
        `pause` (a pull's, see sync): let go once the documents are searchable; Whoosh's write is not under it."""
        pause = pause or collector.Pause(False)
        self.keyword_written_at = time.monotonic()
        if len(docs) + len(removed) < KEYWORD_BESIDE_SEARCHES:
            self._keyword.replace(docs, removed, staged=staged)
            pause.let_go()
            self._segments_left()
            return
        self.version += 1  # the memories, vectors and graph changed: searches meanwhile see them
        self._keyword_writing = True
        held = _let_go(self.lock)
        try:
            if began is not None:
                began()
            self._keyword.replace(docs, removed, beside_searches=True, staged=staged, searchable=pause.let_go)
        finally:
            for _ in range(held):
                self.lock.acquire()
            self._keyword_writing = False
            self._keyword_idle.notify_all()
        self._segments_left()

    def _segments_left(self) -> None:
        """After a keyword write: ask the merger for a merge, or merge here when none runs (or it fell far behind)
        and the segments passed their bound."""
        count = self._keyword.segment_count()
        if count < 2:
            return
        if self.merge_later and count <= SEGMENTS_BOUND * 4:
            self.merge_wanted.set()
        elif count > SEGMENTS_BOUND:
            self._keyword.merge_segments()

    def _vectors_now(self, units: list[Unit], left: list[Unit], later: bool = False,
                     progress: Progress | None = None, after: list[Unit] | None = None,
                     pause: collector.Pause | None = None) -> Iterator[tuple[list[Unit], np.ndarray]]:
        """The units to give vectors in this sync with their vectors, one slice of at most EMBED_SLICE
        units at a time; the units left for the backfill are appended to `left`; `units` is emptied (each slice
        is let go once given). A build embeds the whole
        vault in one sync, and a slice is embedded only when the one before is in FAISS: holding every
        slice until all were embedded was a second copy of the vault's vectors at the build's peak (1 GB
        at 100k memories; bench/results/scale.md, issue 32). Embedded shortest first: a slice's batches hold texts
        of about one length (little padding), and a progress bar moves after each."""
        defer = self.defer_embedding and (later or len(units) > DEFER_ABOVE)
        # A served index embeds an edit's few units at once too, but once the sync has let go of the index lock
        # (`after`, see sync): the model took seconds under nine sessions, and every prompt waited for the lock.
        now = after if self.defer_embedding and not defer and after is not None else None
        defer = defer or now is not None
        ordered = units.copy() if defer else sorted(units, key=lambda u: len(u.text))
        units.clear()  # taken over: a slice's units and their texts go once it is in FAISS, not at the sync's end
        slices = [ordered[start:start + EMBED_SLICE] for start in range(0, len(ordered), EMBED_SLICE)]
        total, done = len(ordered), 0
        del ordered
        for n in range(len(slices)):
            part, slices[n] = slices[n], []
            done += len(part)
            if not defer:
                with pause.suspended() if pause is not None else contextlib.nullcontext():  # the model: few objects
                    vectors = self.embedder.embed([u.text for u in part])
                yield part, vectors
                del vectors
                if progress:
                    progress("embedding", done, total)
                continue
            known = self.embedder.cached([u.text for u in part])  # already embedded once: free now
            (now if now is not None else left).extend(u for i, u in enumerate(part) if i not in known)
            if known:
                yield ([u for i, u in enumerate(part) if i in known],
                       np.stack([known[i] for i in range(len(part)) if i in known]))

    def _defer(self, unit_ids: Iterable[int]) -> None:
        for unit in unit_ids:
            self._unembedded[unit] = None
        if self._unembedded:
            self.embedding_wanted.set()
            with self.units_deferred:
                self.units_deferred.notify_all()

    def backfill(self, limit: int = 8) -> int:
        """Embed up to `limit` deferred units; returns how many were taken off the queue (0: none left).

        The model runs outside the index lock, so searches and syncs go on meanwhile; a unit whose
        memory changed in between is dropped (the sync that changed it queued or embedded its new text)."""
        with self.lock:
            chosen = list(islice(self._unembedded, limit))
            if not chosen:
                self.embedding_wanted.clear()
                return 0
        self._embed_queued(chosen)
        return len(chosen)

    def _embed_queued(self, chosen: list[int]) -> int:
        """Embed these queued units outside the index lock and add those still wanted; returns how many were added."""
        with self.lock:
            texts = self._unit_texts(chosen)
            for unit in chosen:
                if unit not in texts:
                    self._unembedded.pop(unit, None)  # its memory is gone or no longer has it
        wanted = [(unit, *texts[unit]) for unit in chosen if unit in texts]
        vectors = self.embedder.embed([text for _, text, _, _, _ in wanted]) if wanted else None
        with self.lock:
            # A sync may have re-chunked the memory meanwhile (the next exchange captured): a unit whose own digest
            # still reads the text embedded here gets its vector; one whose text changed waits for its new text.
            keep = [row for row, (unit, text, _, path, embed_hash) in enumerate(wanted) if unit in self._unembedded
                    and (entry := self._entries.get(path)) is not None
                    and (entry.embed_hash == embed_hash or unit_hashes.reads(entry.embed_hash, entry.unit_ids, unit, text))]
            if keep and vectors is not None:
                self._vectors.add([wanted[r][0] for r in keep], vectors[keep], [wanted[r][2] == WHOLE for r in keep])
                self._vectors.persist(self.generation)
                self.version += 1
            # Only what was kept leaves the queue: a unit a sync queued again meanwhile, with its memory's
            # new text, waits for the next batch.
            for row in keep:
                self._unembedded.pop(wanted[row][0], None)
            # Readers of this index (other projects reading the user vault) reload when the manifest
            # changes: tell them when the backfill is done, and every few seconds before (a reload per
            # batch would reload a large index thousands of times).
            if keep and (not self._unembedded or time.monotonic() - self._readers_told > READERS_EVERY_SECONDS):
                self.manifest.mark_changed()
                self._readers_told = time.monotonic()
        return len(keep)

    def _unit_texts(self, unit_ids: list[int]) -> dict[int, tuple[str, str, str, str]]:
        """unit id -> (text, role, path, the entry's embed hash), chunked again from the indexed memory."""
        found: dict[int, tuple[str, str, str, str]] = {}
        wanted = set(unit_ids)
        for memory_id in dict.fromkeys(owner[0] for u in unit_ids if (owner := self._unit_owner.get(u)) is not None):
            memory = self._memories.get(memory_id)
            entry = self._entries.get(memory.path) if memory else None
            if memory is None or entry is None:
                continue
            for unit_id, (text, role) in self._texts_of(memory, entry.embed_hash).items():
                if unit_id in wanted:
                    found[unit_id] = (text, role, memory.path, entry.embed_hash)
        return found

    def _texts_of(self, memory: Memory, embed_hash: str) -> dict[int, tuple[str, str]]:
        """A memory's unit texts by unit id. A long document's units span many backfill batches: it is
        chunked once per embed hash (which changes whenever any of its texts does), not once a batch."""
        key = (memory.id, embed_hash)
        texts = self._backfill_texts.get(key)
        if texts is None:
            if len(self._backfill_texts) >= 64:
                self._backfill_texts.clear()
            texts = self._backfill_texts[key] = {unit.unit_id: (unit.text, unit.role)
                                                 for chunk in chunks_for(memory, self.neighbours(memory))
                                                 for unit in chunk.units}
        return texts

    def _apply(self, batch: _Batch, report: SyncReport, later: bool = False, progress: Progress | None = None,
               after: list[Unit] | None = None) -> None:
        added = False
        # Old vectors go first (a changed text keeps its unit id). The files are untouched until the
        # vectors are persisted below, so a model that fails mid-way leaves the disk as it was.
        self._vectors.remove(batch.removed_units)
        for unit in batch.removed_units:
            self._unembedded.pop(unit, None)
        deferred: list[Unit] = []
        for embed, vectors in self._vectors_now(batch.embed, deferred, later, progress, after, batch.pause):
            self._vectors.add([u.unit_id for u in embed], vectors, [u.role == WHOLE for u in embed])
            for unit in embed:
                self._unembedded.pop(unit.unit_id, None)
            report.embedded += len(embed)
            added = True
            del vectors  # before the next slice is embedded
        report.deferred += len(deferred)
        self._defer([u.unit_id for u in deferred])
        for unit in after or ():
            self._unembedded[unit.unit_id] = None  # queued, but embedded by the sync itself (no backfill wake-up)
        graph = self._graph
        # No graph: the batch placed only memories it does not need (_places_without_graph), or changed none.
        assert graph is not None or not batch.removed_ids, "a sync that removes memories builds the graph"
        for memory_id in sorted(batch.removed_ids):
            graph.remove(memory_id)  # type: ignore[union-attr]
        for memory_id in sorted(batch.placed) if graph is not None else ():
            read = batch.placed_memories.get(memory_id)
            graph.upsert(read if read is not None else self._memories[memory_id])
        if batch.keyword_docs or batch.removed_ids:
            docs, removed = list(batch.keyword_docs.values()), batch.removed_ids - set(batch.keyword_docs)
            batch.keyword_docs.clear()  # the chunks' texts go once Whoosh holds them, before the manifest is written
            self._write_keywords(docs, removed, batch.keyword_commit_began, batch.staged, batch.pause)
            del docs
        if batch.removed_units or added:
            self._vectors.persist(self.generation)  # before the manifest: it must never know more than the vectors
        changed = graph.take_changed() if graph is not None else set()  # no graph: nothing was read (see _sync)
        links = self._link_changes(graph, changed) if graph is not None else LinkChanges([], [])
        if batch.entries or batch.deleted_paths or batch.restated or links.rows or links.removed or links.whole:
            try:
                self.manifest.write(list(batch.entries.values()), batch.deleted_paths, links, batch.restated)
            except BaseException:
                if graph is not None:
                    graph.keep_changed(changed)  # not written: the next batch writes these rows
                # What is in memory changed all the same (the graph, the vectors, the keywords): what readers keep by
                # version (a searcher's out-of-sight list, its allowed set) must not outlive it (review of s12).
                self.version += 1
                raise
            self._links_whole = False
            self.version += 1

    def _link_changes(self, graph: LinkGraph, changed: set[str]) -> LinkChanges:
        """The link table's rows that this batch changed: those of every memory whose links were resolved again."""
        if self._links_whole:
            return LinkChanges(graph.link_rows(), [], whole=True)
        rows: list[LinkRow] = []
        removed: list[str] = []
        for node in sorted(changed):
            row = graph.link_row(node)
            if row is None:
                removed.append(node)
            else:
                rows.append(row)
        return LinkChanges(rows, removed)


def _outside(ids: np.ndarray, others: np.ndarray) -> np.ndarray:
    """The ids (ascending) not among `others` (ascending)."""
    return ids[~sorted_contains(others, ids)]


RACY_NS = 2_000_000_000  # the coarsest mtime clock memdir expects (FAT: 2 s), see Index._observe
SAVE_IN_PROGRESS_SECONDS = 1.0  # how long an empty memory file is taken for a save in progress (Index._save_in_progress)
held_clock = time.monotonic  # memdir's own clock for that (tests move it forward instead of waiting)
BUILD_SLICE = 2000  # files a fresh build reads, chunks, embeds and writes at a time (Index.fill): ~25 MB of them
EMBED_SLICE = 512  # units per model call and per FAISS add in a sync that embeds at once (a progress step each)
RELEASE_AFTER = 2048  # units and keyword documents: a sync this big gives the memory it freed back (heap.py)
BEHIND_SEARCHES_EVERY = 32  # files: how often a whole-vault walk before the lock looks for running searches
SEARCH_WAIT_SECONDS = 2.0  # the longest such a walk waits for them at a time (Index._behind_searches)
# Of the keyword postings cache, the share warmed after an open with the most frequent terms' lists; the rest is the
# searches' own. At 100k memories 0.75 (1.5M postings) held the lists of 72 % of a first pass's decoding time.
WARM_POSTINGS_SHARE = 0.75
# Rows decoded ahead after an open at most: a search reads every candidate's memory, ~110 rows decoded for the first time
# a search in a first pass at 100k memories (~3 ms). All 100k decoded: 2.6 CPU s, +118 MB resident.
ROWS_AHEAD = 100_000
READ_AHEAD_ABOVE = 50  # paths: a sync of more reads and parses its changed files before it takes the lock
SEGMENTS_BOUND = 8  # keyword segments: past this many the merger merges even while writes go on (segment_merger.py)
KEYWORD_BESIDE_SEARCHES = 200  # keyword documents: a sync writing more lets searches go on meanwhile (_write_keywords)
DEFER_ABOVE = 64  # units: an edit or two embeds at once (saved is searchable); a fresh vault or a big pull defers
READERS_EVERY_SECONDS = 10.0  # how often a backfill lets other processes' readers of the index reload


def _let_go(lock: threading.RLock) -> int:
    """Release a lock this thread holds however deeply; returns how often to acquire it again."""
    held = 0
    while True:
        try:
            lock.release()
        except RuntimeError:  # no longer held by this thread
            return held
        held += 1


class _BuildProgress:
    """A sliced build's progress in the vault's terms: "reading" counts the vault's files, "embedding" its texts,
    the total texts estimated from the slices done so far (exact once the last slice is chunked)."""

    def __init__(self, progress: Progress | None, files: int) -> None:
        self.progress, self.files = progress, files
        self.units_before = 0  # texts given vectors by the slices done

    def slice(self, start: int, files: int) -> Progress:
        def told(stage: str, done: int, total: int) -> None:
            assert self.progress is not None
            if stage == "reading":
                self.progress(stage, start + done, self.files)
                return
            seen = self.units_before + total  # texts of the slices chunked so far
            estimate = seen if start + files >= self.files else round(seen * self.files / (start + files))
            self.progress(stage, self.units_before + done, max(estimate, seen))
            if done == total:
                self.units_before += total
        return told


def _names_duplicate(entry: Entry) -> bool:
    return entry.memory is not None and is_duplicate_id_reason(entry.reason)


def _in_row_order(ids: np.ndarray, owner: np.ndarray, names: list[str], label: np.ndarray, labels: list[str]) -> Owners:
    """Owners.of_columns of rows given out of their rows' order (owner codes): put back in it, so that an id on two
    rows is the later row's, as when they are made row by row."""
    order = np.argsort(owner, kind="stable")
    return Owners.of_columns(ids[order], owner[order].astype(np.int32), names, label[order], labels)


def _row_whole_owners(rows: list[tuple], numbers: np.ndarray | None = None) -> Owners:
    """The whole-chunk units of an open's rows with their (memory id, "whole"). A row with one whole unit has it in its
    open columns (`numbers`), when read. Else, a row's units column is json.dumps of its (unit, chunk, role) lists, a
    memory of one chunk its whole unit first: that one is read off the text's start; a row with another layout is
    parsed."""
    ids, owner = array("q"), array("i")
    if numbers is not None:
        known = np.flatnonzero(numbers[:, open_columns.WHOLE_UNIT] != open_columns.NONE)
        for code in np.flatnonzero(numbers[:, open_columns.WHOLE_UNIT] == open_columns.NONE).tolist():
            for unit, _, role in json.loads(rows[code][ROW_UNITS] or "[]"):
                if role == WHOLE:
                    ids.append(int(unit))
                    owner.append(code)
        return _in_row_order(np.concatenate([numbers[known, open_columns.WHOLE_UNIT], np.frombuffer(ids, dtype=np.int64)]),
                             np.concatenate([known, np.frombuffer(owner, dtype=np.int32)]),
                             [row[ROW_MEMORY_ID] for row in rows], np.zeros(len(known) + len(ids), dtype=np.int32),
                             [unit_roles()[WHOLE]])
    for code, row in enumerate(rows):
        text = row[ROW_UNITS] or "[]"
        if text.startswith("[[") and text.count('"whole"') == 1:
            first = text[2:text.index("]")].split(", ")
            if len(first) == 3 and first[2] == '"whole"' and first[0].lstrip("-").isdigit():
                ids.append(int(first[0]))
                owner.append(code)
                continue
        for unit, _, role in json.loads(text):
            if role == WHOLE:
                ids.append(int(unit))
                owner.append(code)
    return Owners.of_columns(np.frombuffer(ids, dtype=np.int64), np.frombuffer(owner, dtype=np.int32),
                             [row[ROW_MEMORY_ID] for row in rows], np.zeros(len(ids), dtype=np.int32), [unit_roles()[WHOLE]])


def _row_unit_owners(rows: list[tuple[str, str]]) -> Owners:
    """unit -> (memory id, role) of an open's rows, given as (memory id, units column) (manifest._row), read as numbers
    (`_unit_numbers`) and made into columns without a Python object a unit (600k units at 100k memories)."""
    roles = unit_roles()
    codes = {role: code for code, (_, role) in enumerate(_QUOTED_ROLES)}
    id_parts: list[np.ndarray] = []
    label_parts: list[np.ndarray] = []
    counts = np.zeros(len(rows), dtype=np.int64)
    # A slice of rows at a time: one text of 100k rows held the interpreter for ~1 s, every search waiting (it is made
    # beside them, Index._ahead_of_a_change).
    for start in range(0, len(rows), ROW_SLICE):
        texts = [text or "[]" for _, text in rows[start:start + ROW_SLICE]]
        read = _unit_numbers(texts)
        if read is None:  # a role it does not know: parsed as JSON
            units = json.loads("[" + ",".join(texts) + "]")
            listed = list(chain.from_iterable(units))
            read = (np.array([unit for unit, _, _ in listed], dtype=np.int64),
                    np.array([codes.setdefault(role, len(codes)) for _, _, role in listed], dtype=np.int32),
                    np.fromiter(map(len, units), dtype=np.int64, count=len(units)))
        ids, labels, counts[start:start + len(texts)] = read
        id_parts.append(ids)
        label_parts.append(labels)
    owner = np.repeat(np.arange(len(rows), dtype=np.int32), counts)
    return Owners.of_columns(np.concatenate([np.zeros(0, dtype=np.int64), *id_parts]), owner,
                             [memory_id for memory_id, _ in rows],
                             np.concatenate([np.zeros(0, dtype=np.int32), *label_parts]),
                             [roles.get(r) or shared(r) for r in codes])


_QUOTED_ROLES = tuple((f'"{role}"'.encode(), role) for role in (WHOLE, SENTENCE, PREVIOUS, NEXT))
_UNIT_PUNCTUATION = bytes.maketrans(b"[],", b"   ")


def _unit_numbers(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(unit ids, role codes in _QUOTED_ROLES's order, units per text) of units columns as manifest._row writes them
    (json.dumps of [unit, chunk, role] lists): each role written as its code, and every number read by numpy. Parsing
    them as JSON made a list and three objects a unit, and the columns a tuple a unit: 3.4 of a served 100k vault's
    ~11 CPU s at its first capture (bench/results/s20-capture20.md). None when a text holds a role it does not know."""
    data = " ".join(texts).encode()
    for code, (quoted, _) in enumerate(_QUOTED_ROLES):
        data = data.replace(quoted, b"%d" % code)
    data = data.translate(_UNIT_PUNCTUATION)
    if data.translate(None, b"0123456789- "):
        return None  # a quote left: another role (or a column not written by manifest._row)
    counts = np.fromiter((text.count("[") - 1 for text in texts), dtype=np.int64, count=len(texts))
    numbers = np.fromstring(data, dtype=np.int64, sep=" ") if data.strip() else np.zeros(0, dtype=np.int64)
    if len(numbers) != 3 * int(counts.sum()):
        return None
    return numbers[0::3].copy(), numbers[2::3].astype(np.int32), counts


def _chunk_headings(entry: Entry) -> Iterable[tuple[int, tuple[str, str]]]:
    """(chunk id, (memory id, heading)) of an indexed entry's chunks. A memory read as one chunk (most of them)
    has the chunk id of an empty key and no heading, which its entry tells without chunking the memory again."""
    memory = entry.memory
    assert memory is not None
    if len(entry.chunk_ids) == 1 and entry.chunk_ids[0] == chunk_id(memory.id, ""):
        return ((entry.chunk_ids[0], (memory.id, "")),)
    return ((chunk.chunk_id, (chunk.memory_id, chunk.heading)) for chunk in chunks_for(memory))


def _parse(vault: Vault, data: bytes, rel: str) -> Memory:
    from vault.parse import parse

    return parse(data, rel, max_bytes=vault.settings.max_file_bytes, source=vault.source)


def _lent(neighbour: Memory | None, memory: Memory) -> str:
    """The text a neighbour lends: none to a shared memory from a private one (it would surface it)."""
    if neighbour is None or (neighbour.privacy == "private" and memory.privacy != "private"):
        return ""
    return neighbour_text(neighbour)


def _short(exc: BaseException) -> str:
    """An exception in one line of at most 200 characters, for a log line or an error."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 200 else text[:199] + "…"


def _capture_order(memory: Memory) -> tuple[bool, float, str]:
    """Earliest created first; the id breaks ties, so every sync picks the same next memory."""
    created = memory.created_at.timestamp() if memory.created_at else 0.0
    return (memory.created_at is None, created, identity_key(memory.id))


def build_generation(vault: Vault, embedder: Embedder, layout: Layout, progress: Progress | None = None, *,
                     defer_embedding: bool = False, keep: Path | None = None) -> Path:
    """Index every file into a fresh generation and make it the live one. The caller must own the index.
    With `defer_embedding`, vectors not in the embedding cache are left out: the index that opens the
    generation finds them missing and embeds them in the background (see `Index.backfill`). `keep`: an old
    generation a running index still uses, left on disk (Layout.swap)."""
    index = build_index(vault, embedder, layout, progress, defer_embedding=defer_embedding, keep=keep)
    generation = index.generation
    index.close()
    del index
    _release_build()
    return generation


def build_index(vault: Vault, embedder: Embedder, layout: Layout, progress: Progress | None = None, *,
                defer_embedding: bool = False, kind: type[Index] = Index, keep: Path | None = None) -> Index:
    """build_generation, returning the index that filled the generation, open and live (the caller closes it): a
    caller in this process that reads the generation next uses it instead of loading the generation again."""
    generation = layout.new_generation(embedder)
    with layout.building(generation):  # removed again if anything below fails before it is live
        index = kind(vault, embedder, generation, writable=True, defer_embedding=defer_embedding)
        try:
            index.fill(progress)
            layout.seal(generation, embedder)
            layout.swap(generation, keep)
        except BaseException:
            index.close()
            raise
    return index


def _release_build() -> None:
    """Give back what the build left before the caller opens the built generation in this process. The slices
    leave cycles (tens of thousands of objects at 10k memories) that the next collection would free, but the open
    runs with the collector paused (collector.py), so they stayed live under it; and glibc kept the slices' freed
    heap. At 100k the open then rose 264 MB above the slices' own peak (bench/results/scale.md, issue 32 item 1)."""
    gc.collect()
    release_free_memory()
