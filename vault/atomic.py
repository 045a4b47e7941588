"""Crash-safe file primitives: a reader sees the old file or the new one, never a torn one.

Every replacement writes a temp file in the target's own folder, fsyncs it, renames it over
the target and fsyncs the folder. Temp files carry a recognisable prefix so that a crash
leftover can be found and removed (`sweep_temp_files`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import stat
import sys
from datetime import datetime, timezone
from pathlib import Path

from . import room
from .errors import ConflictError, DiskFullError, VaultError

TEMP_PREFIX = ".memdir-tmp-"


def read_bytes(path: Path) -> bytes | None:
    """A file's bytes, or None when it is gone or is no longer a regular file. Callers stat a path before they read
    it; a FIFO put in its place meanwhile blocked the open for good (the watcher's thread with it), and a device was
    read without end, so the open does not block and the file is checked again once open."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read()


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def real_target(path: Path) -> Path:
    """Write through a symlink to its target, so the link itself stays a link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _write_temp(folder: Path, data: bytes, mode: int | None, durable: bool = True) -> Path:
    """Write (and fsync, when `durable`) a temp file; `mode` None means a new file (0o644 minus the umask)."""
    temp = folder / f"{TEMP_PREFIX}{secrets.token_hex(6)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is not None else 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if mode is not None:
            os.fchmod(fd, mode)
        if durable:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(temp)
        raise
    os.close(fd)
    return temp


def replace_file(path: Path, data: bytes, expected: bytes) -> None:
    """Atomically replace `path` with `data` if it still holds `expected`, keeping its mode.

    Raises ConflictError if the file changed since `expected` was read; the caller re-reads
    and re-applies its change. The final check and the rename are not one atomic step (no
    file system offers that to programs that do not share a lock); the window is microseconds.
    """
    target = real_target(path)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        raise ConflictError(f"{path.name} was deleted while memdir was changing it") from None
    if not mode & stat.S_IWUSR:  # a rename would bypass the permission the user took away
        raise VaultError(f"could not write {path}: the file is read-only; the existing file was left unchanged")
    folder = target.parent
    try:
        temp = _write_temp(folder, data, mode)
    except OSError as exc:
        raise _os_error(exc, path) from None
    try:
        if read_bytes(target) != expected:
            raise ConflictError(f"{path.name} changed while memdir was writing it")
        if not _swap_in(temp, target, expected, data):
            raise ConflictError(f"{path.name} changed while memdir was writing it")
    finally:
        _unlink_quietly(temp)  # after a swap it holds the replaced (old) file
    fsync_dir(folder)


def _swap_in(temp: Path, target: Path, expected: bytes, data: bytes) -> bool:
    """Put `temp` in place of `target`; False (target left as someone else saved it) if it no longer held `expected`.

    Trigger: an editor that saves by rename between our last check and our rename.
    Why: a plain rename would silently drop that save. On Linux, RENAME_EXCHANGE swaps the two
    names atomically, so the file we displaced is still there to compare and, if it was not the
    one we read, to swap back. Elsewhere the check-to-rename window of os.replace remains.
    """
    if not _exchange(temp, target):
        os.replace(temp, target)
        return True
    if read_bytes(temp) == expected:
        return True
    _exchange(temp, target)  # give their save back
    if read_bytes(temp) != data:
        _exchange(temp, target)  # they saved twice meanwhile: keep the newer save in place
    return False


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2 = None
if sys.platform.startswith("linux"):
    try:
        _renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
        _renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    except (AttributeError, OSError):  # a libc without renameat2 (glibc < 2.28, musl < 1.2.5)
        _renameat2 = None


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two names (Linux); False where the system or file system cannot."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EPERM):
        return False
    if code == errno.ENOENT:
        raise ConflictError(f"{b.name} was deleted while memdir was changing it")
    raise OSError(code, os.strerror(code), str(b))


def create_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Atomically create `path` (with `mode`, else 0o644 minus the umask); raises ConflictError if it
    already exists (never overwrites)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        temp = _write_temp(path.parent, data, mode)
    except OSError as exc:
        raise _os_error(exc, path) from None
    try:
        try:
            os.link(temp, path)  # link() fails if the name exists: create-if-absent in one step
        except OSError as exc:
            if exc.errno not in NO_HARD_LINKS:
                raise
            _claim_then_replace(temp, path)
    except FileExistsError:
        raise ConflictError(f"{path.name} already exists") from None
    except OSError as exc:
        raise _os_error(exc, path) from None
    finally:
        _unlink_quietly(temp)
    fsync_dir(path.parent)


# What link() raises on a file system without hard links (some FUSE, network and Windows-shared mounts).
NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EXDEV}


def _claim_then_replace(temp: Path, path: Path) -> None:
    """Create-if-absent without link(): an exclusive create claims the name (FileExistsError if taken), then
    the full temp file is renamed over the empty claim, so no reader ever sees half the data."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    os.replace(temp, path)


def move(source: Path, destination: Path, expected: bytes | None = None) -> None:
    """Rename within the vault without overwriting; with `expected`, only if the source is unchanged."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    if expected is not None and read_bytes(source) != expected:
        raise ConflictError(f"{source.name} changed before it could be moved")
    try:
        os.link(source, destination)
    except FileExistsError:
        raise ConflictError(f"{destination.name} already exists") from None
    except OSError as exc:
        if exc.errno not in NO_HARD_LINKS:
            raise _os_error(exc, destination) from None
        if destination.exists():
            raise ConflictError(f"{destination.name} already exists") from None
        os.rename(source, destination)  # a file system without hard links (some FUSE mounts)
    else:
        os.unlink(source)
    fsync_dir(destination.parent)
    if source.parent != destination.parent:
        fsync_dir(source.parent)


def remove_file(path: Path, expected: bytes) -> None:
    """Delete `path` if it still holds `expected`; ConflictError, and the file as someone saved it, if not.

    The file is first renamed aside (one atomic step) and compared there: a save that landed before
    the rename is put back, one that lands after it finds the name free and is never touched.
    """
    aside = path.parent / f"{TEMP_PREFIX}{secrets.token_hex(6)}"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        raise ConflictError(f"{path.name} was deleted while memdir was removing it") from None
    except OSError as exc:
        raise _os_error(exc, path) from None
    if read_bytes(aside) != expected:
        try:
            move(aside, path)
        except ConflictError:
            pass  # a newer save already took the name: that one stays
        finally:
            _unlink_quietly(aside)
        raise ConflictError(f"{path.name} changed while memdir was removing it; it was left as it is")
    os.unlink(aside)
    fsync_dir(path.parent)


def trash_name(relative_path: str, now: datetime | None = None) -> str:
    """`notes/x.md` → `notes/x.20261121T091200Z.md`: the trash keeps folders and never collides."""
    moment = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S%fZ")
    stem, dot, ext = relative_path.rpartition(".")
    return f"{stem}.{moment}.{ext}" if dot else f"{relative_path}.{moment}"


def sweep_temp_files(root: Path) -> list[Path]:
    """Remove temp files a crashed writer left behind; returns what was removed."""
    removed = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git",)]
        for name in files:
            if name.startswith(TEMP_PREFIX):
                path = Path(folder, name)
                _unlink_quietly(path)
                removed.append(path)
    return removed


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _os_error(exc: OSError, path: Path) -> VaultError:
    no_room = room.reason(exc)
    if no_room is not None:
        return DiskFullError(f"could not write {path}: {no_room}; the existing file was left unchanged")
    reasons = {
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.EROFS: "the file system is read-only",
        errno.EIO: "an I/O error occurred",
    }
    reason = reasons.get(exc.errno or 0, exc.strerror or str(exc))
    return VaultError(f"could not write {path}: {reason}; the existing file was left unchanged")


def write_state(path: Path, data: bytes, mode: int = 0o600, durable: bool = True) -> None:
    """Replace one of memdir's own state files (sessions, server address) atomically.

    Not for memories: those go through `vault.write.Writer`, which also checks for concurrent edits.
    `durable=False` skips the fsyncs: still whole-or-old after a crash of the process, but a power
    loss may keep the previous version (fine for state that is rebuilt or merely convenient).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _write_temp(path.parent, data, mode, durable)
    try:
        os.replace(temp, path)
    except BaseException:
        _unlink_quietly(temp)
        raise
    if durable:
        fsync_dir(path.parent)
