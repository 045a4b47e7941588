"""Whether a write failed for want of room: a full disk, a full quota, or the process's file size limit.

SQLite opening a database on a full disk says "disk I/O error" (its -shm file cannot grow), not "disk is full":
taken at its word, an open moved a sound index to quarantine, and `memdir reindex` died in a traceback from the
embedding cache (bench/results/s19-attack19.md). Below ROOM_NEEDED free bytes such a failure is a full disk.

A file size limit (`ulimit -f`, RLIMIT_FSIZE) fails a write with EFBIG, which SQLite also reports as "disk I/O
error": with such a limit set, an I/O error is taken for it, and named with the limit (s20: a reindex and a first
build under `ulimit -f` died in a traceback).
"""

from __future__ import annotations

import errno
import resource
import shutil
from pathlib import Path

ROOM_NEEDED = 1 << 20
FULL, QUOTA, TOO_LARGE = "the disk is full", "the disk quota is exhausted", "file size limit"
_REASONS = {errno.ENOSPC: FULL, errno.EDQUOT: QUOTA, errno.EFBIG: TOO_LARGE}


def size_limit() -> int | None:
    """This process's file size limit in bytes (`ulimit -f`), or None when there is none."""
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def reason(exc: BaseException) -> str | None:
    """Why `exc` is a failure for want of room, in words (`the disk is full`...), or None when it is not one."""
    found = _REASONS.get(getattr(exc, "errno", None) or 0)
    if found is None:
        text = str(exc).lower()
        if any(sign in text for sign in ("disk is full", "no space left")):
            found = FULL
        elif "quota exceeded" in text:
            found = QUOTA
        elif "file too large" in text:
            found = TOO_LARGE
    if found == TOO_LARGE:
        limit = size_limit()
        return _over(limit) if limit is not None else "a file grew over the largest size allowed here"
    return found


def out_of_room(where: Path, exc: BaseException | None = None) -> str | None:
    """Why a failure at `where` (`exc`, when known) that does not say so is one for want of room, or None: the
    process's file size limit when one is set and the failure is a write's (an I/O error, as SQLite says EFBIG), or a
    full file system (under ROOM_NEEDED bytes free for this user) at `where` or its nearest existing parent. Any
    failure was taken for a limit that was set: a truncated vector file under a 1 GB limit was never rebuilt."""
    limit = size_limit()
    if limit is not None and (exc is None or _a_write_failed(exc)):
        return _over(limit)
    for folder in (where, *where.parents):
        try:
            return FULL if shutil.disk_usage(folder).free < ROOM_NEEDED else None
        except FileNotFoundError:
            continue
        except OSError:
            return None
    return None


def _a_write_failed(exc: BaseException) -> bool:
    """Whether `exc` (or what it was raised from) says a write failed: EFBIG in its own words, or SQLite's I/O error."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain is short; bounded all the same
        if seen is None:
            return False
        if reason(seen) is not None or "disk i/o error" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _over(limit: int) -> str:
    return f"this process may not write files over {limit:,} bytes (ulimit -f)"


def message(what: str, exc: object, why: str) -> str:
    """A failure for want of room, said one way everywhere: what could not be done, the library's words, and what to
    do (`why` from `reason` or `out_of_room`)."""
    if why in (FULL, QUOTA):
        return f"disk full: could not {what} ({exc}); free some space and try again"
    return f"file size limit: could not {what} ({exc}); {why}: raise the limit and try again"
