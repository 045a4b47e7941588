"""Where one vault's derived index lives on disk, and who may change it.

    <vault>/.memdir/index/CURRENT      name of the live generation (replaced atomically)
    <vault>/.memdir/index/gen-*/       one generation: manifest.sqlite, vectors.faiss, units.f16, vectors.log,
                                       keyword/ (Whoosh), meta.json (the embedder it was built with)
    <vault>/.memdir/index.lock         held by the one process allowed to change the index
    <vault>/.memdir/quarantine/        generations whose files did not load, kept for a look (the newest few)

A generation is built beside the live one and swapped in by one rename of CURRENT, so a reader
never sees a half-built index. A generation built with another embedder (or an older schema) is
foreign: it is rebuilt, never read.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import sqlite3
import os
import secrets
import shutil
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from vault import atomic, lock, room, state_stamp
from vault.errors import DiskFullError, VaultError

from . import adoption
from .embed import Embedder
from .keyword import KeywordIndex
from .manifest import SCHEMA_VERSION, Manifest
from .vectors import VectorIndex

log = logging.getLogger("memdir.index")
_UNSTAMPED_TOLD: set[Path] = set()

QUARANTINE_KEPT = 3
# How long an open waits for another process's first build of the index (Layout.await_build) before it gives up.
# A server builds keywords first and commits in seconds; a command embeds the whole vault first (the example vault
# takes about 4 s, 10k memories a few minutes on 2 cores: those say so and are worth a retry).
BUILD_WAIT_SECONDS = 120.0
BUILD_WAIT_PAUSE = 0.05


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

    def ours(self) -> bool:
        """Whether the live generation carries this user's stamp, whatever its embedder or schema: the `.memdir/`
        beside it is this user's own (the embedding cache from before stamps is kept: indexer/cache_stamp.py)."""
        generation = self.current()
        try:
            meta = json.loads((generation / "meta.json").read_text()) if generation is not None else None
        except (OSError, ValueError):
            return False
        return isinstance(meta, dict) and state_stamp.user_key() is not None and state_stamp.stamped(generation, meta)

    def new_generation(self, embedder: Embedder) -> Path:
        """An empty generation beside the live one; it becomes usable once `seal` names its embedder."""
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        generation = self.base / f"gen-{stamp}-{secrets.token_hex(3)}"
        generation.mkdir(parents=True)
        with self.building(generation):
            Manifest(generation / "manifest.sqlite").close()
            VectorIndex(embedder.dim).save(generation)
            KeywordIndex.create(generation / "keyword").close()
        return generation

    @contextlib.contextmanager
    def building(self, generation: Path) -> Iterator[None]:
        """A generation that fails before it is live is removed at once: a full disk must not stay full of
        half a generation (it would otherwise wait for the next open's sweep). A full disk is named as such."""
        try:
            with disk_full(generation):
                yield
        except BaseException:
            if self.current() != generation:
                shutil.rmtree(generation, ignore_errors=True)
            raise

    @staticmethod
    def seal(generation: Path, embedder: Embedder) -> None:
        meta = _meta(embedder)
        # The stamp in a file of its own: a memdir from before stamps, which compares meta.json whole, still reads
        # the generation (two versions of memdir on one machine do not rebuild each other's index in turn).
        state_stamp.stamp(generation, meta)
        (generation / "meta.json").write_text(json.dumps(meta))

    @staticmethod
    def compatible(generation: Path, embedder: Embedder) -> bool:
        """Built by this schema with this embedder (anything else would mix vectors of two models), by this user's
        memdir (vault/state_stamp.py: an index that came with an archive is never parsed)."""
        try:
            meta = json.loads((generation / "meta.json").read_text())
        except (OSError, ValueError):
            return False
        if meta != _meta(embedder):
            return False
        if not state_stamp.stamped(generation, meta):
            if generation not in _UNSTAMPED_TOLD:  # readers ask before every read, an open's wait every 50 ms
                _UNSTAMPED_TOLD.add(generation)
                log.warning("the index in %s carries no stamp of this user's key (built by another user's memdir, e.g. "
                            "unpacked from an archive, or by a memdir from before stamps): it is not read, and the "
                            "process that owns the index rebuilds it from the memory files", generation)
            return False
        return True

    @staticmethod
    def adopt(generation: Path, embedder: Embedder) -> bool:
        """(The owner, as it opens.) A generation of this schema and embedder that carries no stamp of this user's key
        (built by a memdir from before stamps, or carried in from elsewhere) is stamped, and read from then on, when
        every file of it is one memdir writes, read by code that runs nothing it holds (adoption.py); else it stays
        unstamped and is rebuilt, as before. True when it was adopted."""
        try:
            meta = json.loads((generation / "meta.json").read_text())
        except (OSError, ValueError):
            return False
        if meta != _meta(embedder) or state_stamp.user_key() is None or state_stamp.stamped(generation, meta):
            return False
        if not state_stamp.older_than_key(generation / "meta.json"):
            # Made after this user's key: not an index of this user's memdir from before stamps, which would carry the
            # key's stamp, but one unpacked or copied in since. Its files may be memdir's shape and still hold vectors
            # planted for other text (s23-attack23's cache row): rebuilt, as the cache beside it is emptied.
            log.warning("the index in %s carries no stamp of this user's key and came after the key was made (an "
                        "archive or a copy): it is rebuilt from the memory files", generation)
            return False
        try:
            adoption.check(generation, embedder.dim)
        except (adoption.NotAdopted, OSError) as exc:
            log.warning("the index in %s carries no stamp of this user's key and is not adopted (%s): it is rebuilt "
                        "from the memory files", generation, exc)
            return False
        state_stamp.stamp(generation, meta)
        log.info("the index in %s carried no stamp of this user's key (built by a memdir from before stamps, or "
                 "elsewhere); its files checked as memdir's own: adopted, not rebuilt", generation)
        return True

    def swap(self, generation: Path, keep: Path | None = None) -> None:
        """Point CURRENT at the new generation in one rename, then drop the old ones but `keep`: the generation a
        running index still writes to until it has moved (`reindex`), dropped by `drop_others` after the move."""
        temp = self.base / f"CURRENT.{secrets.token_hex(4)}"
        try:
            temp.write_text(generation.name + "\n")
            os.replace(temp, self.base / "CURRENT")
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        atomic.fsync_dir(self.base)
        self.drop_others(generation, keep)

    def drop_others(self, generation: Path, keep: Path | None = None) -> None:
        for old in self.base.glob("gen-*"):
            if old not in (generation, keep):
                shutil.rmtree(old, ignore_errors=True)

    def sweep(self, live: Path) -> None:
        """Remove what a build or swap killed midway left: other generations and CURRENT temps (owner only), and the
        live generation's temp files (a snapshot's rewrite killed midway: VectorIndex.save and fold)."""
        for debris in [*self.base.glob("CURRENT.*"), *self.base.glob("gen-*")]:
            if debris != live:
                shutil.rmtree(debris, ignore_errors=True) if debris.is_dir() else debris.unlink(missing_ok=True)
        for temp in live.glob("*.tmp"):
            temp.unlink(missing_ok=True)

    @property
    def quarantine_folder(self) -> Path:
        return self.base.parent / "quarantine"

    def quarantined(self) -> list[Path]:
        """The generations moved aside because their files did not load, oldest first (doctor names them)."""
        folder = self.quarantine_folder
        return sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []

    def quarantine(self, generation: Path) -> Path:
        """Move a generation whose files do not load out of the way (owner only), keeping the newest
        QUARANTINE_KEPT for a look; CURRENT then names nothing, so the next build replaces it."""
        folder = self.quarantine_folder
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        target = folder / f"{generation.name}-{stamp}-{secrets.token_hex(2)}"
        os.replace(generation, target)
        (self.base / "CURRENT").unlink(missing_ok=True)
        for old in self.quarantined()[:-QUARANTINE_KEPT]:
            shutil.rmtree(old, ignore_errors=True)
        return target

    def await_build(self, embedder: Embedder, seconds: float = BUILD_WAIT_SECONDS,
                    stop: threading.Event | None = None) -> "Ownership | None":
        """While another process owns the index and there is no generation this embedder can read yet (it is
        building the first one), wait until there is, or until that process lets go first (then the ownership is
        returned, and the caller builds), or until `stop` is set (a server letting go of the vault while it opens:
        its exit waited out the other build). A flock gives no event for a file appearing, so this looks every
        BUILD_WAIT_PAUSE seconds; the caller reads `current()` again after."""
        stop = stop or threading.Event()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not stop.is_set():
            generation = self.current()
            if generation is not None and self.compatible(generation, embedder):
                return None
            owner = self.try_own()
            if owner is not None:
                return owner
            stop.wait(BUILD_WAIT_PAUSE)
        return None

    def try_own(self) -> "Ownership | None":
        """The index's ownership, or None while another process has it: the flock on `index.lock`, and one on the
        vault folder itself, which `rm -rf .memdir` cannot take away from its holder (the lock file it can: the next
        process made a new one nobody held, and owned the index beside the first, bench/results/s19-attack19.md)."""
        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            fd = lock.try_lock(self.lock_path)
        except OSError as exc:
            if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            # A read-only mount or someone else's folder: one line, not a traceback from deep in the open.
            raise VaultError(f"cannot write {self.lock_path.parent}: {(exc.strerror or str(exc)).lower()}; memdir "
                             "keeps the vault's index there: make the vault writable, or copy it somewhere writable") from None
        if fd is None:
            return None
        try:
            folder = lock.try_lock_folder(self.lock_path.parent.parent)
        except OSError:  # a file system that cannot flock a folder: the lock file alone, as before
            folder = NO_FOLDER_LOCK
        if folder is None:  # the owner's lock file was deleted; its folder lock says it is still there
            lock.release(fd)
            return None
        return Ownership(fd, self.lock_path, folder)


NO_FOLDER_LOCK = -1

class Ownership:
    """The flocks that make one process the index's only writer: its lock file's and its vault folder's."""

    def __init__(self, fd: int, path: Path, folder: int = NO_FOLDER_LOCK) -> None:
        self.fd: int | None = fd
        self.path = path
        self.folder: int | None = folder  # NO_FOLDER_LOCK where the file system cannot flock a folder
        self._checking = threading.Lock()  # a sync and the server's tick may check at once: one renews, once

    def kept(self) -> bool:
        """Whether this process still owns the index. Its lock file deleted (`rm -rf .memdir`) is made again and
        taken, for the processes that look at it alone (an older memdir); the folder's flock keeps the ownership
        meanwhile. Without one (a file system that cannot flock a folder), a process that took the new lock file
        first has the index, and this ownership is let go (returns False): at most one process writes an index."""
        with self._checking:
            if self.folder is None:
                return False  # released
            try:
                if self.fd is None:
                    self.path.parent.mkdir(exist_ok=True)  # not its parents (lock.renewed)
                    self.fd = lock.try_lock(self.path)
                else:
                    self.fd = lock.renewed(self.fd, self.path)
            except OSError:  # the folder cannot be made again (read-only now): keep the flocks this process has
                return True
            if self.fd is None and self.folder == NO_FOLDER_LOCK:
                self.folder = None
                return False
            return True

    def release(self) -> None:
        with self._checking:
            if self.fd is not None:
                lock.release(self.fd)
                self.fd = None
            if self.folder is not None and self.folder != NO_FOLDER_LOCK:
                lock.release(self.folder)
            self.folder = None


@contextlib.contextmanager
def disk_full(where: Path) -> Iterator[None]:
    """A full disk, however the library that met it put it (SQLite, FAISS, Whoosh, the OS), as DiskFullError
    naming what could not be written; every other error passes unchanged."""
    try:
        yield
    except (OSError, sqlite3.OperationalError, RuntimeError) as exc:
        # SQLite says "disk I/O error" for a write over the file size limit (EFBIG)
        why = room.reason(exc) or (room.out_of_room(where) if "disk i/o error" in str(exc).lower() else None)
        if not why:
            raise
        raise DiskFullError(room.message(f"write {where}", exc, why)) from None


def _meta(embedder: Embedder) -> dict[str, object]:
    return {"schema_version": SCHEMA_VERSION, "embedder": embedder.id, "dim": embedder.dim}
