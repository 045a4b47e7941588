"""What `.trash/` holds, and where each file came from.

Deleting, merging and the lifecycle move memory files to `.trash/<folders>/<name>.<UTC stamp>.md`;
this module finds a memory's trashed copies by id so `memdir restore` can put the newest one back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import ParseError
from .model import Memory
from .parse import parse

TRASH = ".trash"
_STAMP = re.compile(r"\.(\d{8}T\d{6}\d*Z)(?=\.[^./]+$|$)")


@dataclass(frozen=True)
class Trashed:
    trash_path: str  # relative to the vault root, under .trash/
    original_path: str  # where it lived before it was trashed
    stamp: str  # when it was trashed (UTC, sortable)
    memory: Memory


def original_path(trash_path: str) -> tuple[str, str]:
    """`.trash/notes/x.20261121T091200Z.md` → (`notes/x.md`, `20261121T091200Z`)."""
    inside = trash_path.removeprefix(TRASH + "/")
    match = _STAMP.search(inside)
    if match is None:
        return inside, ""
    return inside[: match.start()] + inside[match.end():], match.group(1)


def trashed_copies(root: Path, memory_id: str) -> list[Trashed]:
    """Every trashed file holding `memory_id`, newest first. Files that do not parse are skipped:
    the trash holds what people threw away, and one broken file must not hide the rest."""
    folder = root / TRASH
    found = []
    for path in folder.rglob("*.md") if folder.is_dir() else ():
        if path.is_symlink() or not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        try:
            memory = parse(path.read_bytes(), relative)
        except (ParseError, OSError):
            continue
        if memory.id == memory_id:
            original, stamp = original_path(relative)
            found.append(Trashed(relative, original, stamp, memory))
    return sorted(found, key=lambda t: t.stamp, reverse=True)
