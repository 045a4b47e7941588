"""The vault as git remembers it: the files at a past commit or date, and one memory's versions.

Read-only: it runs `git` plumbing (rev-parse, rev-list, ls-tree, cat-file, log) and never writes to
the working tree or to `.git`. Errors name what was expected, so a mistyped date or commit, a date
before the vault's first commit, or a vault outside git each say so plainly.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path

from .errors import NotFoundError, ParseError, ValidationError
from .model import Memory
from .parse import parse
from .scoring import COUNTER_KEYS

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$")
_FORMAT = "%H%x00%aI%x00%an%x00%s"
_COMMITISH = re.compile(r"[\w./@^~{}-]{1,200}$")


@dataclass(frozen=True)
class Commit:
    sha: str
    date: datetime
    author: str
    subject: str


@dataclass(frozen=True)
class Version:
    """One committed state of a memory file, and what changed from the version before it."""

    commit: Commit
    path: str  # relative to the vault root at that commit
    memory: Memory | None  # None when the file did not parse then
    body_changed: bool
    keys_changed: tuple[str, ...]  # frontmatter keys added, removed or changed (counters included)
    counters_changed: tuple[str, ...] = field(default=())
    created: bool = False
    error: str | None = None


class VaultHistory:
    """Git history of the vault at `root` (the vault may be a folder inside a larger repository)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        try:
            top = self._git("rev-parse", "--show-toplevel", cwd=self.root).strip()
        except ValidationError:
            raise ValidationError(f"the vault {self.root} is not in a git repository: answers as of a past date "
                                  f"and `memdir log` read its git history (run `git init` and commit it)") from None
        self.top = Path(top).resolve()
        prefix = self.root.relative_to(self.top).as_posix()
        self.prefix = "" if prefix == "." else prefix + "/"

    # -- commits ---------------------------------------------------------------------

    def resolve(self, when: str) -> Commit:
        """The commit a `--as-of` value names: a date (the last commit on or before it) or a commit.
        One `git log` either way: as-of searches pay for it on every call."""
        text = when.strip()
        if _DATE.match(text):
            moment = _parse_moment(text)
            out = self._git("log", "-1", f"--before={moment.isoformat()}", f"--format={_FORMAT}", "HEAD", "--",
                            self.prefix or ".")
            if not out.strip():
                first = self.first_commit()
                raise ValidationError(f"--as-of {text} is before the vault's first commit "
                                      f"({first.date.date().isoformat()}, {first.sha[:10]})" if first else
                                      f"--as-of {text}: the vault has no commits yet")
            return _commit(out)
        if not _COMMITISH.match(text) or text.startswith("-"):
            raise ValidationError(f"--as-of {text!r}: expected a date (YYYY-MM-DD, or an ISO date and time) or a commit")
        try:
            return _commit(self._git("log", "-1", "--no-walk", f"--format={_FORMAT}", f"{text}^{{commit}}", "--"))
        except ValidationError:
            raise ValidationError(f"--as-of {text!r}: no such commit, and not a date "
                                  f"(expected YYYY-MM-DD or a commit)") from None

    def commit(self, sha: str) -> Commit:
        return _commit(self._git("log", "-1", "--no-walk", f"--format={_FORMAT}", sha, "--"))

    def first_commit(self) -> Commit | None:
        out = self._git("rev-list", "--reverse", "HEAD", "--", self.prefix or ".").split()
        return self.commit(out[0]) if out else None

    # -- files -----------------------------------------------------------------------

    def files(self, commit: Commit) -> dict[str, bytes]:
        """Every Markdown file and memdir.toml of the vault at `commit`, by path relative to the vault."""
        listing = self._git("ls-tree", "-r", "-z", "--full-tree", commit.sha, "--", self.prefix or ".")
        wanted: dict[str, str] = {}
        for entry in listing.split("\0"):
            if not entry:
                continue
            meta, _, path = entry.partition("\t")
            mode, kind, blob = meta.split()
            if kind != "blob" or mode == "120000" or not path.startswith(self.prefix):
                continue
            relative = path[len(self.prefix):]
            parts = relative.split("/")
            if any(p.startswith(".") for p in parts[:-1]) or not (relative.endswith(".md") or relative == "memdir.toml"):
                continue
            wanted[relative] = blob
        return dict(zip(wanted, self._blobs(list(wanted.values()))))

    def read(self, commit: Commit, relative: str) -> bytes:
        try:
            return self._git_bytes("show", f"{commit.sha}:{self.prefix}{relative}")
        except ValidationError:
            raise NotFoundError(f"{relative} did not exist at {commit.sha[:10]}") from None

    def versions(self, relative: str) -> list[Version]:
        """The file's committed versions, newest first, following renames."""
        out = self._git("log", "--follow", "--name-only", "--format=%x01%H%x00%aI%x00%an%x00%s", "--",
                        self.prefix + relative)
        entries = []
        for record in out.split("\x01")[1:]:
            header, _, names = record.partition("\n")
            sha, when, author, subject = header.split("\0", 3)
            path = next((n for n in names.splitlines() if n.strip()), self.prefix + relative)
            entries.append((Commit(sha, datetime.fromisoformat(when), author, subject), path[len(self.prefix):]))
        versions: list[Version] = []
        previous: Memory | None = None
        for commit, path in reversed(entries):  # oldest first, so each is compared with the one before
            try:
                data = self._git_bytes("show", f"{commit.sha}:{self.prefix}{path}")
            except ValidationError:
                continue  # the commit that deleted it: nothing to read
            try:
                memory: Memory | None = parse(data, path)
                error = None
            except ParseError as exc:
                memory, error = None, str(exc)
            versions.append(_compare(commit, path, memory, previous, error))
            previous = memory or previous
        return list(reversed(versions))

    # -- git -------------------------------------------------------------------------

    def _blobs(self, shas: list[str]) -> list[bytes]:
        if not shas:
            return []
        process = subprocess.run(["git", "cat-file", "--batch"], input="\n".join(shas).encode() + b"\n",
                                 cwd=self.top, capture_output=True, check=True)
        out, position, blobs = process.stdout, 0, []
        for _ in shas:
            header_end = out.index(b"\n", position)
            size = int(out[position:header_end].split()[2])
            blobs.append(out[header_end + 1:header_end + 1 + size])
            position = header_end + 1 + size + 1
        return blobs

    def _git(self, *args: str, cwd: Path | None = None) -> str:
        return self._git_bytes(*args, cwd=cwd).decode("utf-8", errors="replace")

    def _git_bytes(self, *args: str, cwd: Path | None = None) -> bytes:
        try:
            process = subprocess.run(["git", *args], cwd=cwd or self.top, capture_output=True, timeout=60)
        except FileNotFoundError:
            raise ValidationError("git is not installed; answers from the vault's history need it") from None
        if process.returncode != 0:
            raise ValidationError(process.stderr.decode(errors="replace").strip() or f"git {args[0]} failed")
        return process.stdout


def _commit(line: str) -> Commit:
    sha, when, author, subject = line.rstrip("\n").split("\0", 3)
    return Commit(sha, datetime.fromisoformat(when), author, subject)


def _parse_moment(text: str) -> datetime:
    """A date means the end of that day (UTC); a date and time means that moment."""
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time.max, tzinfo=timezone.utc)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(f"--as-of {text!r}: not a date (expected YYYY-MM-DD, or an ISO date and time)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _compare(commit: Commit, path: str, memory: Memory | None, previous: Memory | None, error: str | None) -> Version:
    if memory is None:
        return Version(commit, path, None, False, (), error=error)
    if previous is None:
        return Version(commit, path, memory, True, tuple(sorted(memory.frontmatter)), created=True)
    now, before = dict(memory.frontmatter), dict(previous.frontmatter)
    keys = tuple(sorted(k for k in set(now) | set(before) if now.get(k) != before.get(k)))
    return Version(commit, path, memory, memory.body != previous.body, keys,
                   tuple(k for k in keys if k in COUNTER_KEYS))
