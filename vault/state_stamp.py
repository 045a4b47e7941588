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


def _digest(key: bytes, name: str, meta: Mapping[str, Any]) -> str:
    message = f"memdir-generation\0{name}\0{json.dumps(dict(meta), sort_keys=True)}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _read_or_make(path: Path) -> bytes | None:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("the index stamp key %s is not readable (%s): indexes are neither stamped nor checked", path, exc)
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


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != KEY_BYTES:
        raise OSError(f"{path} holds {len(data)} bytes, not a key of {KEY_BYTES}")
    return data
