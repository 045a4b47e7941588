"""Text → unit vectors: the real model, a deterministic fake for tests, and a cache keyed by text hash.

The cache is what makes scoring cheap: a score rewrites a memory's frontmatter on every
turn, but the text that was embedded (title and body) does not change, so its hash hits
the cache and nothing is embedded again. A text another call is embedding right now is waited
for, not sent again (CachedEmbedder.embed).
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import threading
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Callable, Protocol, Sequence

import numpy as np

from vault.room import out_of_room, reason

from . import cache_stamp

log = logging.getLogger("memdir.embed")
MEMORY_CACHE_ENTRIES = 4096
# Queries sent ahead and not asked for yet (CachedEmbedder.send_query): one a prompt in flight, a few sessions at once.
SENT_QUERIES = 16


class Embedder(Protocol):
    """Anything that turns texts into L2-normalized float32 vectors of a fixed dimension."""

    id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray:
        """One search query's vector (1-D). May take a faster, slightly less exact path than `embed`."""
        ...


class PendingVector(Protocol):
    """A query's vector on its way: a Future, or a request already sent whose answer is read when asked."""

    def result(self, timeout: float | None = None) -> np.ndarray: ...


class _Remembered:
    """A pending query vector that the cache keeps once it is read."""

    def __init__(self, pending: PendingVector, keep: Callable[[np.ndarray], None]) -> None:
        self._pending, self._keep = pending, keep

    def result(self, timeout: float | None = None) -> np.ndarray:
        vector = self._pending.result(timeout)
        self._keep(vector)
        return vector


_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """A deterministic bag-of-words embedder for fast tests: texts that share words get close vectors."""

    dim = 256

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.id = f"hashing-{dim}"
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm else _unit(self.dim)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class Ready:
    """A query vector already computed, in the shape a search waits on (PendingVector)."""

    def __init__(self, vector: np.ndarray) -> None:
        self._vector = vector

    def result(self, timeout: float | None = None) -> np.ndarray:
        return self._vector


def _unit(dim: int) -> np.ndarray:
    vector = np.zeros(dim, dtype=np.float32)
    vector[0] = 1.0
    return vector


def make_embedder(name: str, int8_long_queries: bool = True, int8_cache: Path | None = None,
                  int8_documents: bool = False, int8_here: bool | None = None) -> Embedder:
    """The embedder a vault's memdir.toml names ([search] embedder, int8_long_queries and int8_documents; the
    defaults are the settings'; `int8_cache`: a folder that keeps the int8 graph's calibration between processes;
    `int8_here`: OnnxMiniLM's, None for the CPU to decide)."""
    if name == "all-MiniLM-L6-v2":
        from .onnx_minilm import OnnxMiniLM  # ONNX Runtime is imported only when the model is wanted

        return OnnxMiniLM(int8_long_queries=int8_long_queries, int8_cache=int8_cache, int8_documents=int8_documents,
                          int8_here=int8_here)
    if name.startswith("hashing-") and name[8:].isdigit():
        return HashingEmbedder(int(name[8:]))
    raise ValueError(f"unknown embedder {name!r}; use all-MiniLM-L6-v2 (or hashing-256 for tests)")


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class CachedEmbedder:
    """Wraps an embedder with a persistent cache (SQLite) keyed by the SHA-256 of each text.

    The key is the embedder's id, not which graph made the vector: a float32 and an int8 vector of one text
    ([search] int8_documents; cosine >= 0.997 to each other) are the same model's on purpose. A vault embedded before
    int8 keeps its vectors and is not embedded again, and a rebuild reads what the incremental index stored
    (bench/results/s17-int8docs17.md)."""

    def __init__(self, inner: Embedder, path: Path | None, *, adopt: bool = False) -> None:
        """`adopt`: the index beside the cache is this user's, so an unstamped cache is its own (cache_stamp.py)."""
        self.inner = inner
        self.id = inner.id
        self.dim = inner.dim
        self.path = path
        self.misses = 0  # texts actually sent to the model: what tests count
        self._memory: dict[bytes, np.ndarray] = {}  # small recent-use cache in front of SQLite
        self._lock = threading.Lock()
        self._underway: dict[bytes, Future[np.ndarray]] = {}  # texts a call has sent to the model and not stored yet
        self._underway_lock = threading.Lock()
        self._sent: dict[bytes, PendingVector] = {}  # query texts sent ahead of their search (send_query), oldest first
        self._sent_lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, key BLOB, vector BLOB, PRIMARY KEY (model, key))")
                try:
                    cache_stamp.trusted(self._db, path, adopt)  # a cache that came with an archive is emptied first
                except sqlite3.OperationalError as exc:  # locked past SQLite's wait, or no room: not used unchecked
                    self._db.close()
                    self._db = None
                    log.warning("the embedding cache %s could not be checked (%s); embedding without it", path, exc)
            except (sqlite3.OperationalError, OSError) as exc:
                why = out_of_room(path, exc)
                if not why:
                    raise
                if self._db is not None:
                    self._db.close()
                    self._db = None  # a cache: on a full disk the embedder runs without it
                log.warning("the embedding cache %s cannot open (%s: %s); embedding without it", path, why, exc)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors: from the cache, from another call that is embedding the same text at this moment
        (waited for), else from the model, each distinct text once.

        A served index has two callers: the backfill and a sync that embeds its few units itself once it has let go
        of the index lock. Both take queued units, so both could send the same captured exchange's texts at once: up
        to 20 of the ~310 texts the model host got in a nine-session run were such repeats
        (bench/results/s19-capture19.md)."""
        keys = [text_key(t) for t in texts]
        found = self._lookup(keys)
        mine: dict[bytes, str] = {}
        theirs: dict[bytes, Future[np.ndarray]] = {}
        with self._underway_lock:
            for key, text in zip(keys, texts):
                if key in found or key in mine or key in theirs:
                    continue
                if (vector := self._memory.get(key)) is not None:  # stored since the lookup (stored before let go)
                    found[key] = vector
                elif (pending := self._underway.get(key)) is not None:
                    theirs[key] = pending
                else:
                    mine[key] = text
                    self._underway[key] = Future()
        if mine:
            self._embed_now(mine, found)
        for key, pending in theirs.items():
            try:
                found[key] = pending.result()
            except Exception:  # noqa: BLE001 - the other call failed: this one tries the text itself
                self._embed_now({key: texts[keys.index(key)]}, found, underway=False)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    def _embed_now(self, mine: dict[bytes, str], found: dict[bytes, np.ndarray], underway: bool = True) -> None:
        """Embed `mine` (key -> text) with the model into `found`; `underway`: this call registered them as underway
        and lets go of them (with their vectors, or the model's failure for the calls waiting on them)."""
        failure: BaseException | None = None
        try:
            vectors = self.inner.embed(list(mine.values()))
            self.misses += len(mine)
            fresh = dict(zip(mine.keys(), vectors))
            self._store(fresh)  # remembered before let go below: a call looking after that finds it stored
            found.update(fresh)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            if underway:
                with self._underway_lock:
                    pending = [self._underway.pop(key) for key in mine]
                for key, future in zip(mine, pending):
                    if failure is None:
                        future.set_result(found[key])
                    else:
                        future.set_exception(failure)

    def cached(self, texts: Sequence[str]) -> dict[int, np.ndarray]:
        """The vectors of those texts embedded before (position -> vector), without calling the model."""
        found = self._lookup([text_key(t) for t in texts])
        return {i: found[key] for i, t in enumerate(texts) if (key := text_key(t)) in found}

    def embed_query(self, text: str) -> np.ndarray:
        """A search query's vector: kept in a small in-process cache only, never in the persistent one."""
        key = b"q" + text_key(text)
        sent = self._sent_query(key)
        return sent.result() if sent is not None else self._embed_query(key, text)

    def _embed_query(self, key: bytes, text: str) -> np.ndarray:
        vector = self._memory.get(key)
        if vector is None:
            vector = self.inner.embed_query(text)
            self._remember(key, vector)
        return vector

    def start_query(self, text: str) -> PendingVector | None:
        """The query's vector started on the calling thread, when the model can (a cached one, one sent ahead, or the
        embedding host's request sent now: mcp_server/embedding/host.py); None: embed it with `embed_query` in a
        thread."""
        key = b"q" + text_key(text)
        sent = self._sent_query(key)
        return sent if sent is not None else self._start_query(key, text)

    def _start_query(self, key: bytes, text: str) -> PendingVector | None:
        vector = self._memory.get(key)
        if vector is not None:
            return Ready(vector)
        start = getattr(self.inner, "start_query", None)  # the host's embedder has it; a model in-process does not
        pending = start(text) if start is not None else None
        return None if pending is None else _Remembered(pending, lambda found: self._remember(key, found))

    def send_query(self, text: str, threads: Executor) -> None:
        """Start the query's vector now and keep it for the next `start_query` or `embed_query` of the same text: a
        prompt's vault server sends its query when the request's text is known, and the model computes it while the
        server claims the event, opens the turn and does the search's keyword stage (bench/results/s23-hook23.md).
        Embedded in one of `threads` when the model has no request to send (a model in-process). A text asked for
        by no search is dropped after SENT_QUERIES others (an unread host request closes its connection then)."""
        key = b"q" + text_key(text)
        with self._sent_lock:
            if key in self._sent or key in self._memory:
                return
        pending = self._start_query(key, text)
        if pending is None:
            pending = threads.submit(self._embed_query, key, text)
        with self._sent_lock:
            self._sent[key] = pending
            while len(self._sent) > SENT_QUERIES:
                del self._sent[next(iter(self._sent))]

    def _sent_query(self, key: bytes) -> PendingVector | None:
        """The query sent ahead for this text (send_query), taken: one reader of its answer."""
        with self._sent_lock:
            return self._sent.pop(key, None)

    def forget_queries(self) -> None:
        """Drop cached query vectors (benchmarks time the query embedding too)."""
        for key in [k for k in self._memory if k.startswith(b"q")]:
            del self._memory[key]

    def _lookup(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found = {key: self._memory[key] for key in keys if key in self._memory}
        wanted = [key for key in set(keys) if key not in found]
        if wanted and self._db is not None:
            with self._lock:
                for start in range(0, len(wanted) if self._db is not None else 0, 500):  # closed meanwhile: uncached
                    chunk = wanted[start : start + 500]
                    rows = self._db.execute(
                        f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({','.join('?' * len(chunk))})",
                        [self.id, *chunk],
                    ).fetchall()
                    for key, blob in rows:
                        vector = np.frombuffer(blob, dtype=np.float32)
                        if vector.shape == (self.dim,):
                            found[key] = vector
                            self._remember(key, vector)
        return found

    def _remember(self, key: bytes, vector: np.ndarray) -> None:
        self._memory[key] = vector
        if len(self._memory) > MEMORY_CACHE_ENTRIES:
            for old in list(self._memory)[: MEMORY_CACHE_ENTRIES // 4]:
                self._memory.pop(old, None)  # two threads storing at once may both evict one key (review of s20)

    def _store(self, fresh: dict[bytes, np.ndarray]) -> None:
        for key, vector in fresh.items():
            self._remember(key, vector)
        with self._lock:
            if self._db is None:
                return
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                    [(self.id, key, np.asarray(v, dtype=np.float32).tobytes()) for key, v in fresh.items()],
                )
                self._db.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if self._db.in_transaction:  # SQLite may have rolled back already (a full disk does)
                    self._db.execute("ROLLBACK")
                if not reason(exc) and not (self.path and out_of_room(self.path, exc)):  # EFBIG: "disk I/O error"
                    raise
                # A cache: on a full disk the vectors are kept in memory only. It failed every add (a ServerError)
                # before the memory's own write could say "the disk is full" (bench/results/s19-attack19.md).

    def close(self) -> None:
        """Release the cache file; the embedder still embeds afterwards, uncached."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
