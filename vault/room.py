"""Whether a full disk explains a failure that does not say so.

SQLite opening a database on a full disk says "disk I/O error" (its -shm file cannot grow), not "disk is full":
taken at its word, an open moved a sound index to quarantine, and `memdir reindex` died in a traceback from the
embedding cache (bench/results/s19-attack19.md). Below ROOM_NEEDED free bytes such a failure is a full disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOM_NEEDED = 1 << 20


def out_of_room(where: Path) -> bool:
    """Whether the file system holding `where` (or its nearest existing parent) has less than ROOM_NEEDED bytes free
    for this user."""
    for folder in (where, *where.parents):
        try:
            return shutil.disk_usage(folder).free < ROOM_NEEDED
        except FileNotFoundError:
            continue
        except OSError:
            return False
    return False
