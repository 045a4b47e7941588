"""Keep every path inside the vault, and decide which files are memories.

Paths from outside (CLI arguments, MCP tools, hooks) are checked lexically first (no `..`,
absolute paths, drive letters, backslashes, percent-escapes, NUL, Windows reserved names,
trailing dots) and then resolved on disk, so a symlink, dangling or not, cannot lead out.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Iterator

from .errors import PathError

MAX_PATH_CHARS = 1024
_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL"} | {f"COM{i}" for i in range(1, 10)} | {f"LPT{i}" for i in range(1, 10)}
)
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_relative(user_path: str, within: str = "the vault") -> PurePosixPath:
    """Lexical checks on a path relative to `within` (the vault, or the project for a cited file);
    returns it normalized (NFC, no `.` parts)."""
    if not isinstance(user_path, str) or not user_path.strip():
        raise PathError("path is empty")
    if len(user_path) > MAX_PATH_CHARS:
        raise PathError(f"path is longer than {MAX_PATH_CHARS} characters")
    if "\x00" in user_path:
        raise PathError("path contains a NUL byte")
    if _CONTROL.search(user_path):
        raise PathError("path contains control characters")
    if "\\" in user_path:
        raise PathError(f"path {user_path!r} contains a backslash; use '/' between folders")
    if _PERCENT_ESCAPE.search(user_path):
        raise PathError(f"path {user_path!r} contains percent-escapes; give the plain name")
    if user_path.startswith(("/", "~")) or PureWindowsPath(user_path).drive:
        raise PathError(f"path {user_path!r} is absolute; give a path relative to {within}")
    parts: list[str] = []
    for part in user_path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            raise PathError(f"path {user_path!r} climbs out with '..'")
        if part != part.rstrip(". "):
            raise PathError(f"name {part!r} ends with a dot or space (Windows drops them)")
        if part.split(".", 1)[0].upper() in _RESERVED:
            raise PathError(f"name {part!r} is reserved on Windows")
        if ":" in part:
            raise PathError(f"name {part!r} contains ':' (a drive or stream on Windows)")
        if len(part.encode()) > 255:
            raise PathError(f"name {part[:40]!r}… is longer than 255 bytes")
        parts.append(unicodedata.normalize("NFC", part))
    if not parts:
        raise PathError("path names no file")
    return PurePosixPath(*parts)


def resolve_inside(root: Path, user_path: str) -> Path:
    """Resolve a user-supplied vault-relative path, refusing anything that would leave the vault."""
    relative = check_relative(user_path)
    if relative.parts[0].startswith("."):
        raise PathError(f"{relative.parts[0]}/ is memdir's or another tool's folder, not a memory location")
    candidate = root.joinpath(*relative.parts)
    ensure_inside(root, candidate)
    return candidate


def resolved_within(path: Path, *bounds: Path) -> Path | None:
    """Where `path` leads once every symlink is followed (a dangling one too), when that is inside one of
    `bounds` (each resolved as well); None when it leads outside all of them. The one check behind every
    path memdir walks or is given: a vault's memories, a path argument, an ingest's folder walk."""
    real = os.path.realpath(path)
    for bound in bounds:
        real_bound = os.path.realpath(bound)
        if os.path.commonpath([real_bound, real]) == real_bound:
            return Path(real)
    return None


def ensure_inside(root: Path, candidate: Path) -> None:
    """Follow symlinks (even dangling ones) and refuse a target outside the vault."""
    if resolved_within(candidate, root) is None:
        raise PathError(f"{candidate.relative_to(root) if candidate.is_relative_to(root) else candidate} "
                        "leads outside the vault (through a symlink)")


def relative(root: Path, path: Path) -> str:
    """The vault-relative, "/"-separated form used as Memory.path."""
    # The string prefix is what relative_to checks too, lexically; done on strings it costs a
    # tenth, which matters when a full reconcile asks it for each of 10k files.
    text, base = str(path), str(root)
    if text.startswith(base) and text[len(base):len(base) + 1] == os.sep:
        return text[len(base) + 1:].replace(os.sep, "/")
    return path.relative_to(root).as_posix()


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file under the vault that looks like a memory but cannot be read as one."""

    path: str
    reason: str


def walk(root: Path) -> Iterator[Path | Skipped]:
    """Every Markdown file of the vault, in a stable order; dot-folders and dot-files are never memories."""
    return _walk_from(root, root)


def walk_below(root: Path, folder: Path) -> Iterator[Path | Skipped]:
    """The files of `walk(root)` that lie below `folder`, found without walking the rest of the vault (a folder
    a `git pull` created or moved in). Nothing when the whole-vault walk would not enter the folder: it is
    gone, outside the vault, a dot-folder or inside one, or a symlink or below one (a walk follows none)."""
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        return iter(())
    step = root
    for part in parts:
        step = step / part
        try:
            info = os.lstat(step)
        except OSError:
            return iter(())
        if part.startswith(".") or not stat.S_ISDIR(info.st_mode):
            return iter(())  # a dot-name, a symlink or a file: the whole-vault walk stops here too
    return _walk_from(root, folder)


def _walk_from(root: Path, top: Path) -> Iterator[Path | Skipped]:
    for folder, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or not name.lower().endswith(".md"):
                continue
            item = inspect(root, Path(folder, name))
            if item is not None:
                yield item


def inspect(root: Path, path: Path) -> Path | Skipped | None:
    """Classify one candidate file: readable memory path, Skipped (with why), or None if it is gone."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        real = resolved_within(path, root)
        if real is None:
            return Skipped(relative(root, path), "symlink leads outside the vault; not read")
        if not os.path.exists(real):
            return Skipped(relative(root, path), "dangling symlink")
        info = os.stat(real)
    if not stat.S_ISREG(info.st_mode):
        return Skipped(relative(root, path), "not a regular file")
    if info.st_nlink > 1:
        return Skipped(relative(root, path), "hard-linked file (it may alias a file outside the vault); not read")
    return path


def is_memory_path(root: Path, path: Path) -> bool:
    """Cheap filter for watcher events: a .md file under the vault and outside every dot-folder."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    return bool(parts) and parts[-1].lower().endswith(".md") and not any(p.startswith(".") for p in parts)
