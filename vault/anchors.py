"""Code anchors: which project files a memory cites, what they held when it was written, and whether they still do.

A memory about code ("tokens are issued in `services/auth.py`") goes stale when the code moves
on. When a memory is written or verified, every project file it cites is anchored to the file's
git blob id at that moment, kept in ONE frontmatter key as a flow list so a diff stays one line:

    anchors: [services/auth.py@1a2b3c4d5e6f, web/api.ts::API_VERSION@9f8e7d6c5b4a]

A citation is a `[[path]]` link whose target is an existing project file, a backticked path that
exists, or a `path:line` / `path::symbol` form. The blob id is computed here (sha1 of
"blob <size>\\0" + content, streamed), so it equals `git hash-object` and needs no git process.
Paths are checked lexically (no absolute paths, no `..`) and then on disk (a symlink may not
leave the project), so neither a memory nor a hand-edited anchor can make memdir read
`/etc/passwd`. Staleness checks stat each cited file and hash it again only when its
(mtime_ns, size) changed, so a prompt's worth of hits costs a few stats.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import PathError
from .paths import check_relative

KEY = "anchors"
BLOB_CHARS = 12  # 48 bits of the blob id: plenty to notice a change, short enough to keep diffs readable
CHUNK_BYTES = 1 << 20
MAX_CITATIONS = 32  # a memory citing more files than this is a listing, not a claim about code
REASONS = ("changed", "deleted", "symbol-missing")
MAX_CACHED = 200_000

_WIKILINK = re.compile(r"\[\[([^\]\|#\n]+)(?:#[^\]\|\n]*)?(?:\|[^\]\n]*)?\]\]")
_BACKTICK = re.compile(r"`([^`\n]{1,300})`")
_PATH = r"[\w.\-]+(?:/[\w.\-]+)*"
_TARGET = re.compile(rf"^(?P<path>{_PATH})(?::(?P<line>\d+)(?:-\d+)?|::(?P<symbol>[A-Za-z_][\w.]*))?$")
# Outside backticks and links only the unmistakable forms count: a path with a folder or an
# extension followed by `:line` or `::symbol`.
_BARE = re.compile(rf"(?<![\w/.`\[])(?P<path>{_PATH}\.\w+)(?::(?P<line>\d+)|::(?P<symbol>[A-Za-z_]\w*))")
_ANCHOR = re.compile(r"^(?P<path>[^@:\s][^@]*?)(?:::(?P<symbol>[A-Za-z_][\w.]*))?@(?P<blob>[0-9a-f]{7,40})$")


@dataclass(frozen=True, slots=True)
class Citation:
    path: str  # project-relative, "/"-separated
    symbol: str | None = None


@dataclass(frozen=True, slots=True)
class Anchor:
    path: str
    symbol: str | None
    blob: str  # a prefix of the git blob id

    def text(self) -> str:
        return f"{self.path}{'::' + self.symbol if self.symbol else ''}@{self.blob}"


@dataclass(frozen=True, slots=True)
class Stale:
    path: str
    reason: str  # changed | deleted | symbol-missing
    since: str | None  # when the file (or, for a deleted one, its folder) last changed

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason, "since": self.since}


class AnchorError(ValueError):
    """A hand-edited anchor key that cannot be read: the memory is served, doctor reports it."""


def project_root(vault_root: Path) -> Path:
    """The git work tree holding the vault, else the vault's parent folder."""
    vault_root = Path(vault_root).absolute()
    for folder in (vault_root, *vault_root.parents):
        if (folder / ".git").exists():
            return folder
    return vault_root.parent


def blob_id(path: str | Path) -> str:
    """`git hash-object` of a file, read in chunks so a huge or binary file is never held whole."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        digest = hashlib.sha1(b"blob %d\0" % size)
        left = size
        while left > 0:
            chunk = handle.read(min(CHUNK_BYTES, left))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()


def citations(body: str) -> list[Citation]:
    """Every path-shaped citation in a memory's text, in order, without repeats (existence not checked)."""
    found: dict[tuple[str, str | None], Citation] = {}

    def add(path: str, symbol: str | None) -> None:
        path = path.strip().strip("/")
        if path and (path, symbol) not in found and len(found) < MAX_CITATIONS:
            found[(path, symbol)] = Citation(path, symbol)

    for pattern in (_WIKILINK, _BACKTICK):
        for match in pattern.finditer(body):
            target = _TARGET.match(match.group(1).strip())
            if target:
                add(target.group("path"), target.group("symbol"))
    for match in _BARE.finditer(body):
        add(match.group("path"), match.group("symbol"))
    return list(found.values())


def parse_anchor(text: Any) -> Anchor:
    """One `path[::symbol]@blob` entry; AnchorError says what is wrong with it."""
    if not isinstance(text, str):
        raise AnchorError(f"anchor {text!r} is not a string like 'path/to/file.py@1a2b3c4d5e6f'")
    match = _ANCHOR.match(text.strip())
    if not match:
        raise AnchorError(f"anchor {text!r} is not 'path[::symbol]@<hex blob id>'")
    try:
        path = check_relative(match.group("path"), within="the project").as_posix()
    except PathError as exc:
        raise AnchorError(f"anchor {text!r}: {exc}") from None
    return Anchor(path, match.group("symbol"), match.group("blob"))


def parse_anchors(value: Any) -> tuple[list[Anchor], list[str]]:
    """The readable anchors of a frontmatter value, and one reason per entry that is not."""
    if value is None:
        return [], []
    if not isinstance(value, list):
        return [], [f"'{KEY}' must be a list like [path/to/file.py@1a2b3c4d5e6f], not {type(value).__name__}"]
    anchors, errors = [], []
    for item in value:
        try:
            anchors.append(parse_anchor(item))
        except AnchorError as exc:
            errors.append(str(exc))
    return anchors, errors


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Anchors:
    """Anchors and staleness for one vault's project, with a stat-keyed cache of blob ids."""

    def __init__(self, vault_root: Path, project: Path | None = None) -> None:
        self.vault_root = Path(vault_root).absolute()
        self.project = Path(project).absolute() if project else project_root(self.vault_root)
        self._real_project = os.path.realpath(self.project)
        self._real_vault = os.path.realpath(self.vault_root)
        self._lock = threading.Lock()
        self._blobs: dict[str, tuple[int, int, str]] = {}  # path -> (mtime_ns, size, blob id)
        self._symbols: dict[tuple[str, str, str], bool] = {}  # (path, blob, symbol) -> present
        self._parsed: dict[str, tuple[str, list[Anchor]]] = {}  # memory id -> (content hash, anchors)
        self._located: dict[str, str | None] = {}  # project-relative path -> checked real path
        self._verdicts: dict[tuple[Anchor, int, int], Stale | None] = {}  # (anchor, mtime_ns, size) -> verdict

    # -- reading the project safely ------------------------------------------------------

    def locate(self, relative_path: str) -> str | None:
        """The real path of a project file, or None: outside the project, in the vault, in .git, or not a file."""
        try:
            clean = check_relative(relative_path)
        except PathError:
            return None
        if clean.parts[0] == ".git":
            return None
        real = os.path.realpath(os.path.join(self.project, *clean.parts))
        if os.path.commonpath([self._real_project, real]) != self._real_project:
            return None  # a symlink leading out of the project is never followed
        if os.path.commonpath([self._real_vault, real]) == self._real_vault:
            return None  # memories cite each other with links too; those are not code
        return real

    def _locate_cached(self, relative_path: str) -> str | None:
        """`locate` once per path: a symlink swapped in later still cannot lead out, since the path
        kept is the real one checked then (inside the project)."""
        try:
            return self._located[relative_path]
        except KeyError:
            real = self._located[relative_path] = self.locate(relative_path)
            return real

    def _stat(self, relative_path: str) -> tuple[str, os.stat_result] | None:
        real = self._locate_cached(relative_path)
        if real is None:
            return None
        try:
            info = os.stat(real)
        except OSError:
            return None
        return (real, info) if stat.S_ISREG(info.st_mode) else None

    def _blob(self, relative_path: str, real: str, info: os.stat_result) -> str | None:
        with self._lock:
            cached = self._blobs.get(relative_path)
        if cached and cached[0] == info.st_mtime_ns and cached[1] == info.st_size:
            return cached[2]
        try:
            blob = blob_id(real)
        except OSError:
            return None
        with self._lock:
            self._blobs[relative_path] = (info.st_mtime_ns, info.st_size, blob)
        return blob

    def _has_symbol(self, relative_path: str, real: str, blob: str, symbol: str) -> bool:
        key = (relative_path, blob, symbol)
        with self._lock:
            known = self._symbols.get(key)
        if known is not None:
            return known
        # `Class.method` is looked for as `method`: the class line and the method line differ.
        needle = symbol.rsplit(".", 1)[-1].encode()
        word = re.compile(rb"(?<![\w])" + re.escape(needle) + rb"(?![\w])")
        present, tail = False, b""
        try:
            with open(real, "rb") as handle:
                while chunk := handle.read(CHUNK_BYTES):
                    if word.search(tail + chunk):
                        present = True
                        break
                    tail = chunk[-len(needle) - 1:]
        except OSError:
            present = False
        with self._lock:
            self._symbols[key] = present
        return present

    # -- anchoring ------------------------------------------------------------------------

    def anchor(self, body: str, keep: Iterable[Anchor] = ()) -> list[str]:
        """The anchor key for a body: each cited existing project file at its current content.

        `keep` holds anchors already in the file; a citation that keeps its anchor is not silently
        re-confirmed by an unrelated edit (only `verify` does that)."""
        kept = {(a.path, a.symbol): a for a in keep}
        result: list[str] = []
        cited = citations(body)
        with_symbol = {c.path for c in cited if c.symbol}
        for citation in cited:
            if citation.symbol is None and citation.path in with_symbol:
                continue  # `path::symbol` anchors the whole file too; a second plain entry says nothing more
            found = self._stat(citation.path)
            if found is None:
                continue
            path = check_relative(citation.path).as_posix()
            old = kept.get((path, citation.symbol))
            if old is not None:
                result.append(old.text())
                continue
            blob = self._blob(path, *found)
            if blob is not None:
                result.append(Anchor(path, citation.symbol, blob[:BLOB_CHARS]).text())
        return list(dict.fromkeys(result))

    def fields_for(self, body: str, frontmatter: Mapping[str, Any] | None = None, *,
                   fresh: bool = False) -> tuple[dict[str, Any], tuple[str, ...]]:
        """(keys to set, keys to remove) so the anchor key matches `body`; `fresh` re-anchors everything."""
        old = [] if fresh else parse_anchors((frontmatter or {}).get(KEY))[0]
        anchors = self.anchor(body, old)
        if anchors:
            return {KEY: anchors}, ()
        return {}, ((KEY,) if frontmatter and KEY in frontmatter else ())

    # -- staleness ------------------------------------------------------------------------

    def anchors_of(self, memory_id: str, content_hash: str, frontmatter: Mapping[str, Any]) -> list[Anchor]:
        value = frontmatter.get(KEY)
        if not value:
            return []
        with self._lock:
            cached = self._parsed.get(memory_id)
        if cached and cached[0] == content_hash:
            return cached[1]
        anchors = parse_anchors(value)[0]
        with self._lock:
            self._parsed[memory_id] = (content_hash, anchors)
        return anchors

    def stale(self, memory: Any) -> list[Stale]:
        """What changed under a memory since it was anchored (empty when fresh or anchored to nothing)."""
        anchors = self.anchors_of(memory.id, memory.content_hash, memory.frontmatter)
        return [s for s in (self.check(a) for a in anchors) if s is not None]

    def check(self, anchor: Anchor) -> Stale | None:
        """One anchor against its file now: a stat, and a cached verdict while (mtime, size) stay put."""
        real = self._locate_cached(anchor.path)
        if real is None:
            return None  # outside the project: never read, never judged
        try:
            info = os.stat(real)
        except OSError:
            info = None
        if info is not None and stat.S_ISREG(info.st_mode):
            key = (anchor, info.st_mtime_ns, info.st_size)
            try:
                return self._verdicts[key]
            except KeyError:
                if len(self._verdicts) > MAX_CACHED:
                    self._verdicts.clear()  # files that keep changing must not grow the cache forever
                verdict = self._verdicts[key] = self._judge(anchor, real, info)
                return verdict
        return self._judge(anchor, real, None)

    def _judge(self, anchor: Anchor, real: str, info: os.stat_result | None) -> Stale | None:
        if info is None:
            folder = os.path.dirname(os.path.join(self.project, anchor.path))
            try:
                since = _iso(os.stat(folder).st_mtime)
            except OSError:
                since = None
            return Stale(anchor.path, "deleted", since)
        blob = self._blob(anchor.path, real, info)
        if blob is None:
            return None
        since = _iso(info.st_mtime)
        # Checked even when the file is as anchored: `verify` anchors the file as it is now, and a
        # symbol it no longer defines must not look confirmed (the verdict is cached per mtime and size).
        if anchor.symbol and not self._has_symbol(anchor.path, real, blob, anchor.symbol):
            return Stale(anchor.path, "symbol-missing", since)
        return None if blob.startswith(anchor.blob) else Stale(anchor.path, "changed", since)


def anchor_problems(frontmatter: Mapping[str, Any], lines: Mapping[str, int]) -> list[tuple[int | None, str]]:
    """(line, reason) for each unreadable entry of a memory's anchor key, for `memdir doctor`."""
    _, errors = parse_anchors(frontmatter.get(KEY))
    return [(lines.get(KEY), f"{reason}; the memory is still served, `memdir verify` rewrites the key")
            for reason in errors]
