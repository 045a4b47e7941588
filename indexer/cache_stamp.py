"""The embedding cache's stamp: a cache that came from elsewhere is emptied before a vector of it is used.

`.memdir/cache/embeddings.sqlite` holds a vector per text hash, and a rebuild takes every vector it finds there
without the model. Read by SQLite, it runs no code, but an archive of a project (a tarball, GitHub's "Download ZIP")
that carries its `.memdir/` carries the cache too: a planted vector for a text's hash, one close to every question,
put the archive's memory among the answers to every prompt (bench/results/s23-attack23.md). So a cache carries a
stamp, an HMAC under this user's index key (vault/state_stamp.py) of a random nonce in a table of its own. A cache
without one that checks is emptied and stamped afresh; the model embeds its texts again.

A cache from before stamps has no stamp: it is this user's own, and kept, when the index beside it is (the caller
says so: a generation stamped by this user), or when it last changed before this user's key was made.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
from pathlib import Path

from vault import state_stamp

log = logging.getLogger("memdir.embed")
PURPOSE = "memdir-embedding-cache"


def trusted(db: sqlite3.Connection, path: Path, adopt: bool) -> None:
    """Stamp the cache as this user's, emptying it first unless it carries this user's stamp, or has none and is the
    user's own from before stamps (`adopt`: the index beside it is this user's). Raises sqlite3 errors (a full disk:
    the caller runs without the cache)."""
    if state_stamp.signature(PURPOSE, b"") is None:
        return  # no key: nothing stamped or checked (vault/state_stamp.py)
    db.execute("CREATE TABLE IF NOT EXISTS stamp (nonce BLOB, signature TEXT)")
    if _checks(db):
        return
    db.execute("BEGIN IMMEDIATE")  # another process may be deciding too: decided once, under SQLite's write lock
    try:
        rows = db.execute("SELECT count(*) FROM stamp").fetchone()[0]
        if _checks(db):
            db.execute("COMMIT")
            return
        if rows or not (adopt or state_stamp.older_than_key(path)):
            count = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
            db.execute("DELETE FROM vectors")
            if count:
                log.warning("the embedding cache %s carries no stamp of this user's key (it came with an archive, or "
                            "from another user): its %d vectors are not used, the texts are embedded again", path, count)
        db.execute("DELETE FROM stamp")
        nonce = secrets.token_bytes(16)
        db.execute("INSERT INTO stamp VALUES (?, ?)", (nonce, state_stamp.signature(PURPOSE, nonce)))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def _checks(db: sqlite3.Connection) -> bool:
    rows = db.execute("SELECT nonce, signature FROM stamp").fetchall()
    return any(state_stamp.signed(PURPOSE, bytes(nonce), str(told)) for nonce, told in rows)
