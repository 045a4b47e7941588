"""The only way memdir changes a memory file: atomic, locked, compare-and-swap, re-applied on change.

A caller reads a Memory, describes what it wants as a `Change`, and hands both to `Writer`.
If a human, git or another process changed the file in the meantime, the change is applied
again to the new content: counters are re-derived from the current values, and a key or
body the caller sets only conflicts when someone else changed that same key or body to
something different. Nothing the human wrote is overwritten without a ConflictError. A file
caught in the middle of an editor's in-place save (empty, or cut off inside its frontmatter)
is waited out briefly (`after_saves`) and the change applied to the finished save.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence, TypeVar

from . import atomic
from . import frontmatter as fm
from . import secrets
from .anchors import Anchors
from .errors import ConflictError, NotFoundError, ParseError, ValidationError, VaultError
from .ids import identity_key
from .lock import WriteLock
from .model import Memory
from .parse import DEFAULT_MAX_BYTES, parse, sha256
from .paths import ensure_inside, relative

MAX_ATTEMPTS = 8
MID_SAVE_LOOKS = 100  # see after_saves: about 0.5 s in all
MID_SAVE_PAUSE = 0.005
_NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Change:
    """What to do to one memory, in a form that can be re-applied to newer content."""

    fields: Mapping[str, Any] = field(default_factory=lambda: _NO_FIELDS)  # set these frontmatter keys
    remove: tuple[str, ...] = ()  # drop these keys
    derive: Callable[[Memory], Mapping[str, Any]] | None = None  # keys computed from the current file
    body: str | None = None  # replace the body
    append: str | None = None  # add a paragraph to the end of the body
    move_to: str | None = None  # vault-relative destination after the rewrite (promotion)


class Writer:
    """Owns every write to one vault's files."""

    def __init__(self, root: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, source: str = "project",
                 lock: WriteLock | None = None, scan_secrets: bool = True, anchors: Anchors | None = None) -> None:
        self.root = root
        self.anchors = anchors  # when set, a written body's cited project files are anchored
        self.max_bytes = max_bytes
        self.source = source
        self.lock = lock or WriteLock(root)
        self.scan_secrets = scan_secrets

    # -- reading ------------------------------------------------------------------------

    def read(self, relative_path: str) -> Memory:
        path = self.root / relative_path
        data = atomic.read_bytes(path)
        if data is None:
            raise NotFoundError(f"{relative_path} does not exist")
        return parse(data, relative_path, max_bytes=self.max_bytes, source=self.source)

    # -- writing ------------------------------------------------------------------------

    def create(self, relative_path: str, fields: Mapping[str, Any], body: str, *,
               allow_secrets: bool = False) -> Memory:
        """Write a new file; never replaces an existing one (ConflictError if the name is taken).

        Raises SecretError when `fields` or `body` look like a credential, unless `allow_secrets`.
        """
        path = self.root / relative_path
        ensure_inside(self.root, path)
        if not allow_secrets:
            self.check_secrets(fields, body)
        if self.anchors is not None:
            fields = {**fields, **self.anchors.fields_for(body)[0]}
        text = fm.render_new(fields, _with_final_newline(body))
        data = text.encode("utf-8")
        memory = self._validated(data, relative_path)
        with self.lock.held():
            atomic.create_file(path, data)
        return memory

    def update(self, base: Memory, change: Change, *, allow_secrets: bool = False) -> Memory:
        """Apply `change` to the file `base` was read from; returns the memory as written.

        Only what `change` brings in is scanned for credentials (SecretError unless `allow_secrets`):
        text a person already wrote into the file is theirs, and counters can always be written.
        """
        path = self.root / base.path
        ensure_inside(self.root, path)
        if not allow_secrets:
            self.check_secrets(change.fields, change.body, change.append)
        with self.lock.held():
            for _ in range(MAX_ATTEMPTS):
                current_bytes, current = self._current(path, base)
                new_bytes = self._render(base, current, current_bytes, change)
                if new_bytes != current_bytes:
                    written = self._validated(new_bytes, base.path)
                    try:
                        atomic.replace_file(path, new_bytes, expected=current_bytes)
                    except ConflictError:
                        continue  # changed between our read and our rename: read again, re-apply
                else:
                    written = current
                if change.move_to and change.move_to != base.path:
                    written = self._move(written, new_bytes, change.move_to)
                return written
        raise ConflictError(f"{base.path} kept changing while memdir tried to write it; try again")

    def update_all(self, edits: Sequence[tuple[Memory, Change]]) -> list[Memory]:
        """Apply several changes as one: all of them or none.

        Every file is read and its change rendered before any is written, so a memory moved, deleted or
        unparseable meanwhile refuses the whole call (ConflictError) with nothing written. A file that changes
        between two of the writes puts back the ones already written (compare-and-swap again) and the whole
        set is re-applied. Should a put-back itself find its file changed, the error names what stayed applied.
        For counters and fields (no moves, no new text: the caller checked it).
        """
        paths = [self.root / base.path for base, _ in edits]
        for path, (_, change) in zip(paths, edits):
            ensure_inside(self.root, path)
            if change.move_to:
                raise ValueError("update_all does not move files")
        with self.lock.held():
            for _ in range(MAX_ATTEMPTS):
                planned = []
                for path, (base, change) in zip(paths, edits):
                    current_bytes, current = self._current(path, base)
                    new_bytes = self._render(base, current, current_bytes, change)
                    written = self._validated(new_bytes, base.path) if new_bytes != current_bytes else current
                    planned.append((path, current_bytes, new_bytes, written))
                done: list[tuple[Path, bytes, bytes]] = []
                try:
                    for path, old, new, _ in planned:
                        if new != old:
                            atomic.replace_file(path, new, expected=old)
                            done.append((path, old, new))
                except ConflictError:
                    _put_back(self.root, done)
                    continue  # one of them changed under us: read them all again, re-apply
                except BaseException:  # a full disk, a read-only file: nothing of the call stays
                    _put_back(self.root, done)
                    raise
                return [written for *_, written in planned]
        raise ConflictError(f"{', '.join(b.path for b, _ in edits)} kept changing while memdir tried to write them; try again")

    def check_unchanged(self, base: Memory) -> None:
        """Raise ConflictError when the file no longer holds the bytes `base` was parsed from: a caller about to
        build new text from `base` and move the file away (a merge) would otherwise drop a save it never read."""
        current = self._read_current(self.root / base.path, base)
        if sha256(current) != base.content_hash:
            raise ConflictError(f"{base.path} changed since memdir read it (a save the index has not taken in "
                                "yet); nothing was written: look at it again and retry")

    def trash(self, base: Memory, now: datetime | None = None) -> str:
        """Move the file into `.trash/` (keeping its folders, adding a timestamp); returns the trash path."""
        source = self.root / base.path
        ensure_inside(self.root, source)
        destination = ".trash/" + atomic.trash_name(base.path, now)
        with self.lock.held():
            if not source.exists() and not source.is_symlink():
                raise NotFoundError(f"{base.path} does not exist")
            atomic.move(source, self.root / destination)
        return destination

    def restore(self, trash_path: str, relative_path: str) -> Memory:
        """Move a file back out of `.trash/` to `relative_path` (which must be free)."""
        source = self.root / trash_path
        destination = self.root / relative_path
        ensure_inside(self.root, source)
        ensure_inside(self.root, destination)
        with self.lock.held():
            atomic.move(source, destination)
        return self.read(relative_path)

    def check_secrets(self, fields: Mapping[str, Any], body: str | None, append: str | None = None) -> None:
        """Raise SecretError if new text looks like a credential (a no-op when the vault disables scanning).

        Called by create and update, not by their callers: every path that writes new text into a
        memory passes through this class, so no tool, hook or command can forget the check.
        """
        if not self.scan_secrets:
            return
        findings = [f for text in (body, append) if text for f in secrets.scan(text)]
        seen = {(f.kind, f.masked) for f in findings}  # a title cut from the content repeats its secret
        findings += [f for f in secrets.scan_values(fields) if (f.kind, f.masked) not in seen]
        secrets.refuse(findings)

    # -- internals ----------------------------------------------------------------------

    def _current(self, path: Path, base: Memory) -> tuple[bytes, Memory]:
        """The file as it is now, once a save in progress has finished (see `after_saves`)."""
        def settled() -> tuple[bytes, Memory] | None:
            data = self._read_current(path, base)
            try:
                current = parse(data, base.path, max_bytes=self.max_bytes, source=self.source)
            except ParseError:
                return None
            return (data, current) if data.strip() or current.content_hash == base.content_hash else None

        found = after_saves(settled)
        if found is not None:
            return found
        data = self._read_current(path, base)  # still empty or broken: refuse below, or in _render (another id)
        try:
            return data, parse(data, base.path, max_bytes=self.max_bytes, source=self.source)
        except ParseError as exc:
            raise ConflictError(
                f"{exc}; memdir never rewrites a file it cannot parse; fix the file and try again"
            ) from None

    @staticmethod
    def _read_current(path: Path, base: Memory) -> bytes:
        data = atomic.read_bytes(atomic.real_target(path))
        if data is None:
            raise ConflictError(f"{base.path} was moved or deleted before memdir could change it")
        return data

    def _render(self, base: Memory, current: Memory, current_bytes: bytes, change: Change) -> bytes:
        updates = dict(change.fields)
        if current.content_hash != base.content_hash:
            if identity_key(current.id) != identity_key(base.id):
                # Another memory's file was moved or checked out over this path since it was read: a change
                # meant for one memory must never land in another's file.
                raise ConflictError(f"{base.path} now holds memory {current.id}, not {base.id}; "
                                    "re-read the vault (memdir reindex if it persists) and try again")
            _check_reapplicable(base, current, change)
        if change.derive is not None:
            updates.update(change.derive(current))
        if current.id_derived:
            updates.setdefault("id", current.id)  # the first write pins the path-derived id
        doc = fm.split(current_bytes.decode("utf-8"))
        body = doc.body
        if change.body is not None:
            body = _newlines(_with_final_newline(change.body), doc.newline)
        if change.append:
            body = _appended(body, change.append, doc.newline)
        front = doc.frontmatter
        removals = change.remove
        if self.anchors is not None and (change.body is not None or change.append):
            anchored, dropped = self.anchors.fields_for(body, current.frontmatter)
            updates.update(anchored)
            removals += dropped
        removals = tuple(key for key in removals if key in current.frontmatter)
        if updates or removals:
            front = fm.patch(doc.frontmatter or "", updates, removals, doc.newline)
        return doc.with_parts(front, body).text().encode("utf-8")

    def _validated(self, data: bytes, relative_path: str) -> Memory:
        try:
            return parse(data, relative_path, max_bytes=self.max_bytes, source=self.source)
        except ParseError as exc:
            raise ValidationError(f"refused: the result would not be a valid memory ({exc.reason})") from None

    def _move(self, memory: Memory, data: bytes, destination: str) -> Memory:
        target = self.root / destination
        ensure_inside(self.root, target)
        atomic.move(self.root / memory.path, target, expected=data)
        return parse(data, relative(self.root, target), max_bytes=self.max_bytes, source=self.source)


def _put_back(root: Path, done: list[tuple[Path, bytes, bytes]]) -> None:
    """Undo the writes of an update_all that could not finish, newest first, each only if the file still
    holds what was written (someone who changed it since keeps their change, and the error says so)."""
    for position, (path, old, new) in enumerate(reversed(done)):
        try:
            atomic.replace_file(path, old, expected=new)
        except VaultError as exc:
            applied = [relative(root, p) for p, _, _ in done[: len(done) - position]]
            raise ConflictError(f"only part of the change stayed applied, to {', '.join(applied)}: "
                                f"putting back {relative(root, path)} failed ({exc})") from None


def _check_reapplicable(base: Memory, current: Memory, change: Change) -> None:
    """Someone changed the file since `base` was read: refuse only where they changed what we change."""
    for key, value in change.fields.items():
        theirs = current.frontmatter.get(key)
        if theirs != base.frontmatter.get(key) and theirs != value:
            raise ConflictError(
                f"{current.path}: '{key}' was changed to {_shown(theirs)} since it was read; "
                "re-read the memory and decide again"
            )
    if change.body is not None and current.body != base.body and current.body.rstrip() != change.body.rstrip():
        raise ConflictError(f"{current.path}: the body was edited since it was read; re-read it and apply your edit again")


def _shown(value: Any, limit: int = 80) -> str:
    """A frontmatter value as a person wrote it (a date in ISO 8601, not Python's repr), cut to `limit`."""
    text = value.isoformat().replace("+00:00", "Z") if isinstance(value, (datetime, date)) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} characters)"


def _with_final_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _newlines(text: str, newline: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", newline) if newline != "\n" else text.replace("\r\n", "\n")


def _appended(body: str, addition: str, newline: str) -> str:
    base = body.rstrip("\r\n")
    separator = newline * 2 if base else ""
    return base + separator + _newlines(_with_final_newline(addition.strip("\n")), newline)


T = TypeVar("T")
pause = time.sleep  # the wait between two looks at a file being saved (tests finish the save here instead)


def after_saves(look: Callable[[], T | None]) -> T | None:
    """What `look()` finds once a save in progress has finished; None if every look (MID_SAVE_LOOKS) found nothing.

    An editor that saves in place truncates the file and then writes it: for that moment the file is
    empty or ends inside its frontmatter, and reads as another (path-derived) memory or as a broken one.
    A save takes far less than MID_SAVE_LOOKS pauses; a file still unreadable after them really is.
    """
    for attempt in range(MID_SAVE_LOOKS):
        if attempt:
            pause(MID_SAVE_PAUSE)
        found = look()
        if found is not None:
            return found
    return None


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)

