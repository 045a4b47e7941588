"""A stamp, keyed by this user, on every index generation memdir builds: an index that came from elsewhere is not read.

An index generation's files are parsed by code that trusts them: Whoosh unpickles its table of contents and segment
list (a rewritten one runs code), FAISS parses its file in C++. `carried_state` refuses a `.memdir/` that git tracks,
but one that arrives without git (an archive of a project unpacked, a GitHub "Download ZIP" or release tarball of a
repository that commits it, a copied folder) looked like memdir's own (bench/results/s22-attack22.md). So each
generation carries a `stamp` file beside its meta.json: an HMAC of its name and meta under a key only this user's
memdir has (a random file in the user's state folder, 0600). A generation without a stamp that checks is foreign, like
one built with another embedder: a reader does not open it, and its owner rebuilds it from the memory files and drops
it, unless every file of it checks as one memdir writes, read by code that runs nothing it holds
(indexer/adoption.py): then the owner stamps it and keeps it (a generation from before stamps is not rebuilt).

The key's place is named by the entry point (`keep_key_at`; mcp_server.config.stamp_key_path reads $XDG_STATE_HOME).
Where none is named, or none can be kept (a read-only home), generations are neither stamped nor checked, as before.
A key found unusable (not whole, a symlink, another user's, readable or writable by others) is moved aside and a new
one made, which costs every index one rebuild; only where that cannot be done are stamps off (said in the log).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import threading
import time
from pathlib import Path
from typing import Any, Mapping

log = logging.getLogger("memdir.vault")

KEY_NAME = "index-stamp.key"
KEY_BYTES = 32
STAMP_NAME = "stamp"  # the file in each generation folder, beside meta.json

_key_at: Path | None = None  # set once by the entry point (mcp_server.config.stamp_key_path): config is read there
_keys: dict[Path, bytes | None] = {}
_keys_lock = threading.Lock()


def keep_key_at(path: Path | None) -> None:
    """Where this process keeps the user's stamp key (None: no stamps, as a library caller that names none)."""
    global _key_at
    _key_at = path


def user_key() -> bytes | None:
    """This user's key (made on first use), or None when none is named or none can be kept."""
    path = _key_at
    if path is None:
        return None
    with _keys_lock:
        if path not in _keys:
            _keys[path] = _read_or_make(path)
        return _keys[path]


def stamp(generation: Path, meta: Mapping[str, Any]) -> None:
    """Write the generation's stamp file (nothing when there is no key)."""
    key = user_key()
    if key is not None:
        (generation / STAMP_NAME).write_text(_digest(key, generation.name, meta) + "\n")


def stamped(generation: Path, meta: Mapping[str, Any]) -> bool:
    """Whether the generation carries this user's stamp for `meta` (True when there is no key to check)."""
    key = user_key()
    if key is None:
        return True
    try:
        told = (generation / STAMP_NAME).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return False
    return hmac.compare_digest(told.encode(), _digest(key, generation.name, meta).encode())


def signature(purpose: str, data: bytes) -> str | None:
    """This user's HMAC of `data` for `purpose` (another purpose's never checks), or None when there is no key."""
    key = user_key()
    return None if key is None else hmac.new(key, purpose.encode() + b"\0" + data, hashlib.sha256).hexdigest()


def signed(purpose: str, data: bytes, told: str) -> bool:
    """Whether `told` is this user's signature of `data` for `purpose` (True when there is no key to check)."""
    mine = signature(purpose, data)
    return mine is None or hmac.compare_digest(mine.encode(), told.encode("ascii", "replace"))


def older_than_key(path: Path) -> bool:
    """Whether `path` last changed (ctime, which an unpacked archive cannot set back) before this user's key was made:
    it was there before memdir stamped anything here, so it is this user's own state from before stamps."""
    key_at = _key_at
    if key_at is None or user_key() is None:
        return True
    try:
        return os.stat(path).st_ctime < os.stat(key_at).st_ctime
    except OSError:
        return False


def _digest(key: bytes, name: str, meta: Mapping[str, Any]) -> str:
    message = f"memdir-generation\0{name}\0{json.dumps(dict(meta), sort_keys=True)}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _read_or_make(path: Path) -> bytes | None:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        # A key that is not whole, not this user's, or that others may read stamps nothing safely; left in place it
        # turned stamps off (a truncated key, one root made under `sudo -E`) or let another user stamp an archive's
        # index as this user's, and the archive's pickles ran (bench/results/s23-attack23.md). A new key costs every
        # index one rebuild, without the model's work (the embedding cache).
        if not _set_aside(path, exc):
            log.warning("the index stamp key %s is not usable (%s) and cannot be replaced: indexes are neither stamped "
                        "nor checked, and a .memdir/ that came with an archive would be read; remove it", path, exc)
            return None
    temp = path.with_name(f".{KEY_NAME}.{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, path)  # whole or absent; two processes making it at once: the first one's key is everyone's
        except FileExistsError:
            pass
        return _read(path)
    except OSError as exc:
        log.warning("no index stamp key can be kept in %s (%s): indexes are neither stamped nor checked, and a "
                    ".memdir/ that came with an archive would be read", path.parent, exc)
        return None
    finally:
        temp.unlink(missing_ok=True)


def _set_aside(path: Path, why: OSError) -> bool:
    """Move an unusable key out of the way (renamed beside it, for whoever wants to look), when its folder is this
    user's and no one else may write there; False when it cannot be (another user's folder, a read-only home)."""
    try:
        folder = os.lstat(path.parent)
        if not stat.S_ISDIR(folder.st_mode) or folder.st_uid != os.getuid():
            return False
        if folder.st_mode & 0o022:
            os.chmod(path.parent, stat.S_IMODE(folder.st_mode) & ~0o022)  # or another user could swap the new key in
        aside = path.with_name(f"{KEY_NAME}.unusable-{time.time_ns()}")
        os.rename(path, aside)
    except OSError:
        return False
    log.warning("the index stamp key %s was not usable (%s): moved to %s and a new key made; every index is rebuilt "
                "once, from the embedding cache", path, why, aside.name)
    return True


def _can_be_private(fd: int) -> bool:
    """Whether the key's file system keeps a mode of 0600 (then a key others could read was exposed, and is replaced).
    One that shows every file 0777 (a FAT or drvfs mount) would have a new key made, and set aside, by every process."""
    try:
        os.fchmod(fd, 0o600)
        return not os.fstat(fd).st_mode & 0o077
    except OSError:
        return False


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if info.st_uid != os.getuid() or info.st_mode & 0o077 and _can_be_private(fd):
            raise OSError(f"{path} is not private to this user (owner {info.st_uid}, mode "
                          f"{stat.S_IMODE(info.st_mode):o}): another user could stamp an index as this user's")
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise OSError(f"{path} holds {len(data)} bytes, not a key of {KEY_BYTES}")
    return data
