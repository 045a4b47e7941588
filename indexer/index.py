"""The derived state of one vault, kept equal to what a rebuild from the files would give.

Layout under `<vault>/.memdir/`:

    index/CURRENT          name of the live generation (replaced atomically)
    index/gen-*/           manifest.sqlite, vectors.faiss, keyword/ (Whoosh)
    cache/embeddings.sqlite   vectors by text hash; survives rebuilds
    index.lock             held by the one process allowed to change the index

Every change, whether from the watcher, a startup reconcile or a full rebuild, goes through
`sync()`, which looks at the disk (not at what an event said happened), so incremental
updates and rebuilds run the same code and end in the same state.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import shutil
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

from vault import Memory, Problem, Vault, atomic
from vault.errors import NotFoundError, ParseError, VaultError
from vault.dedup import dedup_key
from vault.ids import identity_key
from vault.parse import sha256
from vault.paths import Skipped, inspect, is_memory_path, relative, walk

from .chunking import Chunk, chunks_for
from .embed import CachedEmbedder, Embedder
from .graph import LinkGraph
from .keyword import KeywordIndex
from .keyword import signature as keyword_signature
from .manifest import SCHEMA_VERSION, Entry, Manifest
from .vectors import VectorIndex

log = logging.getLogger("memdir.index")
Progress = Callable[[int, int], None]  # (files done, files in total)


class IndexUnusable(VaultError):
    """The index files are missing, foreign or damaged; `memdir reindex` rebuilds them."""


@dataclass
class SyncReport:
    added: int = 0
    updated: int = 0
    removed: int = 0
    errors: int = 0
    embedded: int = 0  # chunks whose text had to be embedded (cache misses included)
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


@dataclass
class _Batch:
    """Mutations collected during one sync and applied to the indices together."""

    entries: dict[str, Entry] = field(default_factory=dict)
    deleted_paths: list[str] = field(default_factory=list)
    indexed: dict[str, tuple[Memory, list[Chunk], bool, bool]] = field(default_factory=dict)  # id -> (memory, chunks, embed?, keyword?)
    removed_ids: set[str] = field(default_factory=set)
    removed_chunks: set[int] = field(default_factory=set)


class Index:
    def __init__(self, vault: Vault, embedder: Embedder, generation: Path, *, writable: bool) -> None:
        self.vault = vault
        self.root = vault.root
        self.embedder = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(
            embedder, vault.root / ".memdir" / "cache" / "embeddings.sqlite"
        )
        self.writable = writable
        self.lock = threading.RLock()
        self.version = 0  # bumped on every change; readers use it to invalidate caches
        self._owner: Ownership | None = None
        self._load(generation)

    def _load(self, generation: Path) -> None:
        """Read one generation's files into memory (constructor, and the swap after a rebuild)."""
        self.generation = generation
        self.manifest = Manifest(generation / "manifest.sqlite")
        self.vectors = VectorIndex.load(generation / "vectors.faiss", self.embedder.dim)
        self.keyword = KeywordIndex.open(generation / "keyword")
        self.entries: dict[str, Entry] = {e.path: e for e in self.manifest.entries()}
        self.memories: dict[str, Memory] = {}
        self.path_of: dict[str, str] = {}  # identity_key(id) -> path
        self.chunk_owner: dict[int, tuple[str, str]] = {}  # chunk id -> (memory id, heading)
        self.by_dedup_key: dict[str, set[str]] = {}  # normalized text + type -> memory ids
        for entry in self.entries.values():
            if entry.memory_id and entry.memory and entry.reason is None:
                self._remember(entry.memory, entry.chunk_ids, self._headings(entry))
        self.graph = LinkGraph.build(self.memories.values())

    # -- opening and building ------------------------------------------------------------

    @classmethod
    def open(cls, vault: Vault, embedder: Embedder, *, writable: bool = True, progress: Progress | None = None) -> "Index":
        """Open the live generation (building one if there is none or it is foreign) and reconcile the files."""
        layout = Layout(vault.root)
        owner = layout.try_own() if writable else None
        generation = layout.current()
        if generation is None or not _compatible(generation, embedder):
            if owner is None:
                raise IndexUnusable(f"no usable index in {layout.base}; run memdir reindex (or start memdir serve)")
            generation = build_generation(vault, embedder, layout, progress)
        index = cls(vault, embedder, generation, writable=owner is not None)
        index._owner = owner
        if owner is not None:
            index.heal()
            atomic.sweep_temp_files(vault.root)
            index.sync(deep=True)
        return index

    def close(self) -> None:
        with self.lock:
            self.keyword.close()
            self.manifest.close()
            if self._owner is not None:
                self._owner.release()
                self._owner = None

    def heal(self) -> int:
        """Make FAISS and Whoosh agree with the manifest after a crash; returns the files re-indexed."""
        with self.lock:
            expected = {cid for e in self.entries.values() if e.reason is None for cid in e.chunk_ids}
            stray_vectors = self.vectors.ids() - expected
            self.vectors.remove(stray_vectors)
            keyword_ids = self.keyword.chunk_ids()
            if keyword_ids - expected:
                self.keyword.delete_chunks(keyword_ids - expected)
            missing = (expected - self.vectors.ids()) | (expected - keyword_ids)
            stale = {e.path for e in self.entries.values() if set(e.chunk_ids) & missing}
            if stray_vectors or keyword_ids - expected or stale:
                log.warning("index healed: %d stray vectors, %d stray keyword documents, %d files re-indexed",
                            len(stray_vectors), len(keyword_ids - expected), len(stale))
            for path in stale:
                self.entries[path] = replace(self.entries[path], content_hash="", embed_hash="")
            if stale:
                self.sync(stale, deep=True, force_paths=stale)
            elif stray_vectors:
                self.vectors.save(self.generation / "vectors.faiss")
            return len(stale)

    def compact(self) -> None:
        """Purge deleted keyword documents; afterwards search results equal a fresh rebuild's exactly."""
        with self.lock:
            self.keyword.compact()

    # -- reading ---------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        path = self.path_of.get(identity_key(memory_id))
        if path is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return self.memories[self.entries[path].memory_id]  # type: ignore[index]

    def find_duplicate(self, text: str, memory_type: str) -> Memory | None:
        """An indexed memory with the same normalized text and type, if any (the oldest id wins)."""
        twins = sorted(self.by_dedup_key.get(dedup_key(text, memory_type), ()))
        return self.memories[twins[0]] if twins else None

    def problems(self) -> list[Problem]:
        return [Problem(e.path, e.line, e.reason) for e in sorted(self.entries.values(), key=lambda e: e.path) if e.reason]

    def chunk_count(self) -> int:
        return len(self.chunk_owner)

    # -- changing ----------------------------------------------------------------------

    def sync(self, paths: Iterable[str | Path] | None = None, *, deep: bool = False,
             force_paths: Iterable[str] = (), progress: Progress | None = None) -> SyncReport:
        """Bring the index in line with the disk for `paths` (vault-relative), or for the whole vault."""
        if not self.writable:
            raise IndexUnusable("this index was opened read-only (another process owns it)")
        started = time.perf_counter()
        report = SyncReport()
        with self.lock:
            batch = _Batch()
            forced = set(force_paths)
            candidates = self._candidates(paths)
            for done, (rel, item) in enumerate(candidates, 1):
                self._observe(rel, item, deep or rel in forced, batch, report)
                if progress:
                    progress(done, len(candidates))
            self._name_duplicate_holders(batch)
            self._apply(batch, report)
        report.seconds = time.perf_counter() - started
        return report

    def _candidates(self, paths: Iterable[str | Path] | None) -> list[tuple[str, Path | Skipped | None]]:
        if paths is None:
            found = {relative(self.root, p) if isinstance(p, Path) else p.path: p for p in walk(self.root)}
            gone = {path: None for path in self.entries if path not in found}
            return sorted({**found, **gone}.items())
        items = []
        for raw in paths:
            rel = relative(self.root, raw) if isinstance(raw, Path) and raw.is_absolute() else str(raw)
            if not is_memory_path(self.root, self.root / rel):
                continue  # .trash/, .memdir/, .git/ ... are never memories, whoever asks
            items.append((rel, inspect(self.root, self.root / rel)))
        return sorted(dict(items).items())

    def _observe(self, rel: str, item: Path | Skipped | None, deep: bool, batch: _Batch, report: SyncReport) -> None:
        previous = self.entries.get(rel)
        if item is None:
            if previous is not None:
                batch.deleted_paths.append(rel)
                self._unindex(previous, batch)
                self.entries.pop(rel)
                report.removed += previous.reason is None
            return
        if isinstance(item, Skipped):
            self._set_error(rel, previous, 0, 0, "", None, item.reason, batch, report)
            return
        try:
            info = item.stat()
        except FileNotFoundError:
            return self._observe(rel, None, deep, batch, report)
        if previous and not deep and (previous.size, previous.mtime_ns) == (info.st_size, info.st_mtime_ns):
            return
        data = atomic.read_bytes(item)
        if data is None:
            return self._observe(rel, None, deep, batch, report)
        digest = sha256(data)
        if previous and previous.content_hash == digest:
            if (previous.size, previous.mtime_ns) != (info.st_size, info.st_mtime_ns):
                batch.entries[rel] = self.entries[rel] = replace(previous, size=info.st_size, mtime_ns=info.st_mtime_ns)
            return
        try:
            memory = _parse(self.vault, data, rel)
        except ParseError as exc:
            self._set_error(rel, previous, info.st_size, info.st_mtime_ns, digest, exc.line, exc.reason, batch, report)
            return
        self._index_memory(rel, memory, previous, info.st_size, info.st_mtime_ns, batch, report)

    def _set_error(self, rel: str, previous: Entry | None, size: int, mtime_ns: int, digest: str,
                   line: int | None, reason: str, batch: _Batch, report: SyncReport) -> None:
        if previous is not None:
            self._unindex(previous, batch)
        entry = Entry(rel, size, mtime_ns, digest, None, line=line, reason=reason)
        batch.entries[rel] = self.entries[rel] = entry
        report.errors += 1

    def _index_memory(self, rel: str, memory: Memory, previous: Entry | None, size: int, mtime_ns: int,
                      batch: _Batch, report: SyncReport) -> None:
        if previous is not None and previous.memory_id and identity_key(previous.memory_id) != identity_key(memory.id):
            self._unindex(previous, batch)
            previous = None
        owner = self.path_of.get(identity_key(memory.id))
        if owner is not None and owner != rel:
            rival = self.entries[owner].memory
            if rival is not None and _precedence(rival) <= _precedence(memory):
                entry = Entry(rel, size, mtime_ns, memory.content_hash, None, line=memory.id_line,
                              reason=_duplicate_reason(memory.id, owner), memory=memory)
                if previous is not None:
                    self._unindex(previous, batch)
                batch.entries[rel] = self.entries[rel] = entry
                report.errors += 1
                return
            self._demote(owner, memory, batch, report)
        chunks = chunks_for(memory)
        embed_hash = sha256("\x1f".join(c.embedding_text for c in chunks))
        same_text = previous is not None and previous.embed_hash == embed_hash and previous.reason is None
        if previous is not None and previous.reason is None and not same_text:
            batch.removed_chunks.update(previous.chunk_ids)
        same_keyword = same_text and previous is not None and previous.memory is not None and (
            keyword_signature(previous.memory, chunks) == keyword_signature(memory, chunks))
        batch.indexed[memory.id] = (memory, chunks, not same_text, not same_keyword)
        batch.removed_ids.discard(memory.id)
        entry = Entry(rel, size, mtime_ns, memory.content_hash, memory.id, tuple(c.chunk_id for c in chunks),
                      embed_hash, memory=memory)
        batch.entries[rel] = self.entries[rel] = entry
        self._remember(memory, entry.chunk_ids, [c.heading for c in chunks])
        if previous is None or previous.reason is not None:
            report.added += 1
        else:
            report.updated += 1

    def _name_duplicate_holders(self, batch: _Batch) -> None:
        """Name the file that holds a duplicated id at the end of the batch, whatever the order of events."""
        for path, entry in list(self.entries.items()):
            if entry.memory is None or not (entry.reason or "").startswith("duplicate id"):
                continue
            holder = self.path_of.get(identity_key(entry.memory.id), "?")
            reason = _duplicate_reason(entry.memory.id, holder)
            if reason != entry.reason:
                batch.entries[path] = self.entries[path] = replace(entry, reason=reason)

    def _demote(self, owner_path: str, winner: Memory, batch: _Batch, report: SyncReport) -> None:
        """A file with an older claim on this id appeared: the previous holder becomes the duplicate."""
        old = self.entries[owner_path]
        self._unindex(old, batch, reclaim=False)  # the id is not free: the new claimant takes it
        batch.entries[owner_path] = self.entries[owner_path] = replace(
            old, memory_id=None, line=old.memory.id_line if old.memory else None,
            reason=_duplicate_reason(winner.id, winner.path))
        report.errors += 1

    def _unindex(self, entry: Entry, batch: _Batch, reclaim: bool = True) -> None:
        if entry.reason is not None or not entry.memory_id:
            return
        memory_id = entry.memory_id
        batch.removed_chunks.update(entry.chunk_ids)
        batch.indexed.pop(memory_id, None)
        batch.removed_ids.add(memory_id)
        self._forget(memory_id)
        if reclaim:
            self._reclaim(memory_id, entry.path, batch)

    def _reclaim(self, memory_id: str, freed_path: str, batch: _Batch) -> None:
        """When an id is freed, the best duplicate waiting for it is indexed in its place."""
        waiting = [e for e in self.entries.values()
                   if e.path != freed_path and e.reason and e.memory and identity_key(e.memory.id) == identity_key(memory_id)]
        if not waiting:
            return
        best = min(waiting, key=lambda e: _precedence(e.memory))  # type: ignore[arg-type]
        self._index_memory(best.path, best.memory, None, best.size, best.mtime_ns, batch, SyncReport())  # type: ignore[arg-type]

    def _remember(self, memory: Memory, chunk_ids: Iterable[int], headings: list[str]) -> None:
        self._forget(memory.id)
        self.memories[memory.id] = memory
        self.by_dedup_key.setdefault(dedup_key(memory.body, memory.type), set()).add(memory.id)
        self.path_of[identity_key(memory.id)] = memory.path
        for chunk, heading in zip(chunk_ids, headings):
            self.chunk_owner[chunk] = (memory.id, heading)

    def _forget(self, memory_id: str) -> None:
        memory = self.memories.pop(memory_id, None)
        if memory is None:
            return
        twins = self.by_dedup_key.get(dedup_key(memory.body, memory.type), set())
        twins.discard(memory_id)
        if self.path_of.get(identity_key(memory_id)) == memory.path:
            del self.path_of[identity_key(memory_id)]
        entry = self.entries.get(memory.path)
        for chunk in entry.chunk_ids if entry else ():
            self.chunk_owner.pop(chunk, None)

    def _headings(self, entry: Entry) -> list[str]:
        return [c.heading for c in chunks_for(entry.memory)] if entry.memory else []  # type: ignore[arg-type]

    def _apply(self, batch: _Batch, report: SyncReport) -> None:
        to_embed = [(m, c) for m, chunks, embed, _ in batch.indexed.values() if embed for c in chunks]
        vectors = self.embedder.embed([c.embedding_text for _, c in to_embed]) if to_embed else None
        report.embedded += len(to_embed)
        self.vectors.remove(batch.removed_chunks)
        if vectors is not None:
            self.vectors.add([c.chunk_id for _, c in to_embed], vectors)
        keyword_docs = [(m, chunks) for m, chunks, _, rewrite in batch.indexed.values() if rewrite]
        if keyword_docs or batch.removed_ids:
            self.keyword.replace(keyword_docs, batch.removed_ids - set(batch.indexed))
        for memory_id in batch.removed_ids - set(batch.indexed):
            self.graph.remove(memory_id)
        for memory, _, _, _ in batch.indexed.values():
            self.graph.upsert(memory)
        if batch.removed_chunks or vectors is not None:
            self.vectors.save(self.generation / "vectors.faiss")
        if batch.entries or batch.deleted_paths:
            self.manifest.write(list(batch.entries.values()), batch.deleted_paths)
            self.version += 1


def _parse(vault: Vault, data: bytes, rel: str) -> Memory:
    from vault.parse import parse

    return parse(data, rel, max_bytes=vault.settings.max_file_bytes, source=vault.source)


def _duplicate_reason(memory_id: str, holder: str) -> str:
    return f"duplicate id {memory_id!r} (also in {holder}); give this file a new id"


def _precedence(memory: Memory) -> tuple[bool, float, int, str]:
    """The same rule as `vault.store.resolve_duplicate_ids`: oldest first, then shortest path."""
    created = memory.created_at.timestamp() if memory.created_at else 0.0
    return (memory.created_at is None, created, len(memory.path), memory.path)


# --- generations ------------------------------------------------------------------------

class Layout:
    def __init__(self, vault_root: Path) -> None:
        self.base = vault_root / ".memdir" / "index"
        self.lock_path = vault_root / ".memdir" / "index.lock"

    def current(self) -> Path | None:
        try:
            name = (self.base / "CURRENT").read_text().strip()
        except FileNotFoundError:
            return None
        generation = self.base / name
        return generation if name.startswith("gen-") and (generation / "meta.json").exists() else None

    def new_generation(self) -> Path:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        generation = self.base / f"gen-{stamp}-{secrets.token_hex(3)}"
        generation.mkdir(parents=True)
        return generation

    def swap(self, generation: Path) -> None:
        """Point CURRENT at the new generation in one rename, then drop the old ones."""
        temp = self.base / f"CURRENT.{secrets.token_hex(4)}"
        temp.write_text(generation.name + "\n")
        os.replace(temp, self.base / "CURRENT")
        atomic.fsync_dir(self.base)
        for old in self.base.glob("gen-*"):
            if old != generation:
                shutil.rmtree(old, ignore_errors=True)

    def try_own(self) -> "Ownership | None":
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        return Ownership(fd)


class Ownership:
    """The flock that makes one process the index's only writer."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _compatible(generation: Path, embedder: Embedder) -> bool:
    try:
        meta = json.loads((generation / "meta.json").read_text())
    except (OSError, ValueError):
        return False
    return meta == _meta(embedder)


def _meta(embedder: Embedder) -> dict[str, object]:
    return {"schema_version": SCHEMA_VERSION, "embedder": embedder.id, "dim": embedder.dim}


def build_generation(vault: Vault, embedder: Embedder, layout: Layout, progress: Progress | None = None) -> Path:
    """Index every file into a fresh generation and make it the live one. The caller must own the index."""
    generation = layout.new_generation()
    Manifest(generation / "manifest.sqlite").close()
    VectorIndex(embedder.dim).save(generation / "vectors.faiss")
    KeywordIndex.create(generation / "keyword").close()
    index = Index(vault, embedder, generation, writable=True)
    try:
        index.sync(None, deep=True, progress=progress)
    finally:
        index.close()
    (generation / "meta.json").write_text(json.dumps(_meta(embedder)))
    layout.swap(generation)
    return generation


def reindex(index: Index, progress: Progress | None = None) -> SyncReport:
    """Rebuild into a new generation, swap it in under the running index, then catch up with edits made meanwhile."""
    started = time.perf_counter()
    generation = build_generation(index.vault, index.embedder, Layout(index.root), progress)
    with index.lock:
        old_keyword, old_manifest = index.keyword, index.manifest
        index._load(generation)
        index.version += 1
        old_keyword.close()
        old_manifest.close()
    index.sync()  # files saved while the new generation was being built
    report = SyncReport(added=len(index.memories), errors=len(index.problems()))
    report.seconds = time.perf_counter() - started
    return report


@dataclass(frozen=True)
class RebuildReport:
    memories: int
    chunks: int
    problems: int
    embedded: int
    seconds: float


def rebuild(vault: Vault, embedder: Embedder, progress: Progress | None = None) -> RebuildReport:
    """`memdir reindex` without a server: take ownership, build a fresh generation, swap it in."""
    layout = Layout(vault.root)
    owner = layout.try_own()
    if owner is None:
        raise IndexUnusable("another process (a running memdir server?) owns this index; reindex through it")
    started = time.perf_counter()
    try:
        cached = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(
            embedder, vault.root / ".memdir" / "cache" / "embeddings.sqlite")
        generation = build_generation(vault, cached, layout, progress)
        index = Index(vault, cached, generation, writable=False)
        report = RebuildReport(len(index.memories), index.chunk_count(), len(index.problems()), cached.misses,
                               time.perf_counter() - started)
        index.close()
        return report
    finally:
        owner.release()
