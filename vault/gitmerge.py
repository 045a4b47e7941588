"""A git merge driver for memory files: counters add up, outcome histories join, bodies merge as text.

Two machines that score the same memory both change `uses`, `score`, `outcomes`... on the same
lines, which git's line merge reports as a conflict. This driver merges the frontmatter key by
key instead (three-way, against the common ancestor):

- `uses`, `success_count`, `restated`: ours + theirs − base (each side's new evidence counts once).
- `score`: base + (ours − base) + (theirs − base), clamped to 0..1. Score is path-dependent (each
  outcome's change is weighted by the memory's age and clamped), so it cannot be recomputed from
  the counters; adding both sides' changes is what a single machine applying both runs of
  outcomes would have got, up to clamping.
- `outcomes`: base's history, then each side's new outcomes (the side that scored earlier first,
  by `last_used_at`), capped like scoring caps it; `last_outcome` is the later side's.
- `last_used_at`, `updated_at`, `restated_at`: the later time.
- any other key: taken from the side that changed it; a conflict only when both changed it differently.

The body is left to git's own text merge (`git merge-file`). The result is written into the ours
file atomically, with ours' frontmatter patched so that only changed lines change. Anything that
is not a readable memory falls back to a plain `git merge-file` of the whole file.
"""

from __future__ import annotations

import math
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import atomic
from . import frontmatter as fm
from .errors import ParseError, VaultError
from .parse import parse

SUMMED = ("uses", "success_count", "restated")
LATEST = ("last_used_at", "updated_at", "restated_at")
DEFAULT_HISTORY = 20
ATTRIBUTES_LINE = "*.md merge=memdir"
MARKER = 7
_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class MergeResult:
    data: bytes
    conflicts: tuple[str, ...] = ()  # what a person must resolve, one line each

    @property
    def clean(self) -> bool:
        return not self.conflicts


def merge_files(base: Path, ours: Path, theirs: Path, *, label: str | None = None,
                history: int = DEFAULT_HISTORY) -> MergeResult:
    """Git's merge-driver contract: merge into `ours` in place (atomically); `clean` is git's exit 0."""
    ours_bytes = ours.read_bytes()
    result = merge_bytes(base.read_bytes(), ours_bytes, theirs.read_bytes(), label=label or ours.name,
                         history=history)
    if result.data != ours_bytes:
        atomic.replace_file(ours, result.data, expected=ours_bytes)
    return result


def merge_bytes(base: bytes, ours: bytes, theirs: bytes, *, label: str = "memory",
                history: int = DEFAULT_HISTORY) -> MergeResult:
    """Three-way merge of one memory file; falls back to git's text merge for anything else."""
    sides = _documents(base, ours, theirs)
    if sides is None:
        return _text_merge(base, ours, theirs, label)
    (base_doc, base_fm), (ours_doc, ours_fm), (theirs_doc, theirs_fm) = sides
    merged, conflicted = merge_frontmatter(base_fm, ours_fm, theirs_fm, history=history)
    front = _render_frontmatter(ours_doc, merged, ours_fm, theirs_doc, conflicted)
    if front is None:  # a key conflicts and the block has no line layout to put markers in
        return _text_merge(base, ours, theirs, label)
    body, body_conflicts = merge_text(base_doc.body if base_doc else "", ours_doc.body, theirs_doc.body)
    data = ours_doc.with_parts(front, body).text().encode("utf-8")
    conflicts = [f"{label}: '{key}' was changed on both sides" for key in conflicted]
    if body_conflicts:
        conflicts.append(f"{label}: the text was changed on both sides ({body_conflicts} conflicting part"
                         f"{'s' if body_conflicts > 1 else ''})")
    if not conflicts and _valid(ours, label):  # a file that was already invalid is not the merge's doing
        try:
            parse(data, label)
        except ParseError as exc:
            conflicts.append(f"{label}: the merged file is not a valid memory: {exc.reason}")
    return MergeResult(data, tuple(conflicts))


def _valid(data: bytes, label: str) -> bool:
    try:
        parse(data, label)
        return True
    except ParseError:
        return False


def merge_frontmatter(base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any], *,
                      history: int = DEFAULT_HISTORY) -> tuple[dict[str, Any], list[str]]:
    """The merged key → value mapping (missing keys are absent) and the keys in conflict."""
    merged: dict[str, Any] = {}
    conflicted: list[str] = []
    keys = list(ours) + [k for k in theirs if k not in ours] + [k for k in (base or {}) if k not in ours and k not in theirs]
    counters = _counters(base, ours, theirs, history)
    for key in keys:
        b = _MISSING if base is None else base.get(key, _MISSING)
        o, t = ours.get(key, _MISSING), theirs.get(key, _MISSING)
        if key in counters and (o != b and t != b or base is None and o != t):
            value = counters[key]
        elif o == t or t == b:
            value = o
        elif o == b:
            value = t
        elif key in LATEST and isinstance(o, datetime) and isinstance(t, datetime):
            value = max(o, t, key=_utc)
        else:
            conflicted.append(key)
            value = o
        if value is not _MISSING:
            merged[key] = value
    return merged, conflicted


def _counters(base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any],
              history: int) -> dict[str, Any]:
    """The merged value of every counter key the three versions allow to be merged arithmetically."""
    out: dict[str, Any] = {}
    no_base = base is None
    base = base or {}
    for key in SUMMED:
        o, t, b = ours.get(key, 0), theirs.get(key, 0), base.get(key, 0)
        if not all(_number(v) for v in (o, t, b)):
            continue
        total = max(o, t) if no_base else o + t - b  # with no ancestor, the shared part is unknowable
        out[key] = max(0, int(total)) if key != "success_count" else round(max(0.0, float(total)), 4)
    if "success_count" in out and "uses" in out:
        out["success_count"] = min(out["success_count"], float(out["uses"]))
    o, t, b = ours.get("score", 0.5), theirs.get("score", 0.5), base.get("score", 0.5)
    if all(_number(v) for v in (o, t, b)):
        if no_base:
            out["score"] = o if ours.get("uses", 0) >= theirs.get("uses", 0) else t
        else:
            out["score"] = round(min(1.0, max(0.0, b + (o - b) + (t - b))), 4)
    merged = _outcomes(base, ours, theirs, history, no_base)
    if merged is not None:
        out["outcomes"], later = merged
        if "last_outcome" in later:
            out["last_outcome"] = later["last_outcome"]
    return out


def _outcomes(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any], history: int,
              no_base: bool) -> tuple[list[str], dict[str, Any]] | None:
    lists = [side.get("outcomes", []) for side in (base, ours, theirs)]
    if not all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in lists):
        return None
    base_list, ours_list, theirs_list = lists
    if no_base:
        base_list = _common_prefix(ours_list, theirs_list)
    ours_new = _new_since(base_list, ours_list, _delta(ours, base))
    theirs_new = _new_since(base_list, theirs_list, _delta(theirs, base))
    first, second = (ours, theirs) if _scored_at(ours) <= _scored_at(theirs) else (theirs, ours)
    new = ours_new + theirs_new if first is ours else theirs_new + ours_new
    cap = max(history, len(ours_list), len(theirs_list))
    return (base_list + new)[-cap:], second


def _new_since(base: list[str], side: list[str], added: int | None) -> list[str]:
    """The outcomes a side appended after `base` (its list is `(base + new)[-cap:]`)."""
    if side == base:
        return []
    if added is not None and 0 < added <= len(side):
        kept = side[: len(side) - added]
        if not kept or base[-len(kept):] == kept:
            return side[len(side) - added:]
    for overlap in range(min(len(base), len(side)), -1, -1):  # no usable counter: align on the history
        if base[len(base) - overlap:] == side[:overlap]:
            return side[overlap:]
    return side


def _delta(side: dict[str, Any], base: dict[str, Any]) -> int | None:
    o, b = side.get("uses", 0), base.get("uses", 0)
    return o - b if _number(o) and _number(b) and isinstance(o, int) and isinstance(b, int) else None


def _common_prefix(a: list[str], b: list[str]) -> list[str]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _scored_at(side: dict[str, Any]) -> datetime:
    value = side.get("last_used_at")
    return _utc(value) if isinstance(value, datetime) else datetime.min.replace(tzinfo=timezone.utc)


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _number(value: Any) -> bool:
    """A count or score the merge can add: finite (a pushed `uses: .inf` or `10^400` failed the driver with an
    OverflowError; such a value is merged as any other key, a conflict when both sides changed it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int past a float's range
        return False


# -- text --------------------------------------------------------------------------------------

def merge_text(base: str, ours: str, theirs: str) -> tuple[str, int]:
    """git's three-way text merge of two bodies: (result with conflict markers, number of conflicts)."""
    if ours == theirs or theirs == base:
        return ours, 0
    if ours == base:
        return theirs, 0
    data, conflicts = git_merge_file(base.encode("utf-8"), ours.encode("utf-8"), theirs.encode("utf-8"))
    return data.decode("utf-8", errors="surrogateescape"), conflicts


def git_merge_file(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, int]:
    """Run `git merge-file -p` on three byte strings; returns the merged bytes and the conflict count."""
    with tempfile.TemporaryDirectory(prefix="memdir-merge-") as folder:
        paths = [Path(folder, name) for name in ("ours", "base", "theirs")]
        for path, data in zip(paths, (ours, base, theirs)):
            path.write_bytes(data)
        done = subprocess.run(
            ["git", "merge-file", "-p", f"--marker-size={MARKER}", "-L", "ours", "-L", "base", "-L", "theirs",
             *map(str, paths)], capture_output=True, check=False)
    if done.returncode >= 128 or done.returncode < 0:
        raise VaultError(f"git merge-file failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout, done.returncode


def _text_merge(base: bytes, ours: bytes, theirs: bytes, label: str) -> MergeResult:
    data, conflicts = git_merge_file(base, ours, theirs)
    return MergeResult(data, (f"{label}: {conflicts} conflicting part{'s' if conflicts > 1 else ''}",) if conflicts else ())


# -- frontmatter -------------------------------------------------------------------------------

def _documents(*versions: bytes) -> tuple[tuple[fm.Document | None, dict[str, Any] | None], ...] | None:
    """(document, frontmatter) for base, ours and theirs; None when any is not a memory file.
    An empty base (the file was added on both sides) has no document."""
    out = []
    for n, data in enumerate(versions):
        if n == 0 and not data.strip():
            out.append((None, None))
            continue
        try:
            doc = fm.split(data.decode("utf-8"))
            if doc.frontmatter is None:
                return None
            out.append((doc, fm.load(doc.frontmatter).data))
        except (UnicodeDecodeError, fm.FrontmatterError):
            return None
    return tuple(out)


def _render_frontmatter(ours_doc: fm.Document, merged: dict[str, Any], ours: dict[str, Any],
                        theirs_doc: fm.Document, conflicted: list[str]) -> str | None:
    """Ours' frontmatter with only the merged keys' lines changed and conflict markers around each conflict.
    A key taken whole from theirs keeps theirs' exact lines (comments, quoting); computed values
    (counters) are rendered into ours' lines by the frontmatter patcher."""
    text = ours_doc.frontmatter or ""
    newline = ours_doc.newline
    theirs = fm.load(theirs_doc.frontmatter or "").data
    theirs_keys = fm.key_segments(theirs_doc.frontmatter or "")
    changed = {k: v for k, v in merged.items() if k not in conflicted and not _same(ours.get(k, _MISSING), v)}
    verbatim = {k for k, v in changed.items() if theirs_keys and k in theirs_keys and _same(theirs.get(k, _MISSING), v)}
    updates = {k: v for k, v in changed.items() if k not in verbatim}
    removals = [k for k in ours if k not in merged]
    if updates or removals:
        text = fm.patch(text, updates, removals, newline)
    if not verbatim and not conflicted:
        return text
    ours_keys = fm.key_segments(text)
    if ours_keys is None or theirs_keys is None:
        return None if conflicted else fm.patch(text, {k: changed[k] for k in verbatim}, (), newline)
    for key in verbatim:
        text = _splice(text, ours_keys.get(key, ""), _newlines(theirs_keys[key], newline), newline)
    for key in conflicted:
        mine, other = ours_keys.get(key, ""), _newlines(theirs_keys.get(key, ""), newline)
        block = (f"{'<' * MARKER} ours{newline}{_ended(mine, newline)}{'=' * MARKER}{newline}"
                 f"{_ended(other, newline)}{'>' * MARKER} theirs{newline}")
        text = _splice(text, mine, block, newline)
    return text


def _splice(text: str, old: str, new: str, newline: str) -> str:
    """Replace one key's exact lines, or add them at the end when the key is new."""
    return text.replace(old, _ended(new, newline), 1) if old else _ended(text, newline) + _ended(new, newline)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _newlines(text: str, newline: str) -> str:
    text = text.replace("\r\n", "\n")
    return text.replace("\n", newline) if newline != "\n" else text


def _ended(text: str, newline: str) -> str:
    return text if not text or text.endswith("\n") else text + newline


def vault_of(path: Path) -> Path | None:
    """The vault a repository path belongs to (the nearest folder above it holding memdir.toml)."""
    for folder in Path(path).absolute().parents:
        if (folder / "memdir.toml").is_file():
            return folder
    return None


# -- registration ------------------------------------------------------------------------------

def register(root: Path, command: str) -> list[str]:
    """Make git use the driver for this vault: the `.gitattributes` line (in the vault, committed) and,
    when the vault is in a git work tree, `merge.memdir.*` in that repository's config (never cloned,
    so every clone needs it once). Returns what changed; nothing when all is already in place."""
    changed = []
    if _ensure_attributes(root / ".gitattributes"):
        changed.append(".gitattributes")
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is not None:
        wanted = {"merge.memdir.name": "memdir: merge memory counters and outcomes",
                  "merge.memdir.driver": command}
        stale = {key: value for key, value in wanted.items() if _git(root, "config", "--get", key) != value}
        for key, value in stale.items():
            if _git(root, "config", key, value) is None:
                raise VaultError(f"could not set git config {key} in {top}")
        if stale:
            changed.append(f"git merge driver in {top}")
    return changed


def _ensure_attributes(path: Path) -> bool:
    current = atomic.read_bytes(path)
    if current is None:
        atomic.create_file(path, f"# memdir: merge memory counters without conflicts (memdir init)\n{ATTRIBUTES_LINE}\n".encode())
        return True
    text = current.decode("utf-8", errors="surrogateescape")
    if any(line.split()[:1] == ["*.md"] and "merge=memdir" in line.split() for line in text.splitlines()):
        return False
    newline = "\r\n" if "\r\n" in text else "\n"
    addition = ("" if not text or text.endswith("\n") else newline) + ATTRIBUTES_LINE + newline
    atomic.replace_file(path, (text + addition).encode("utf-8", errors="surrogateescape"), expected=current)
    return True


def _git(root: Path, *args: str) -> str | None:
    """Run git in `root`; its stdout stripped, or None when git fails or is not installed."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None
