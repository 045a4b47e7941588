"""Shared machinery of the reliability proof: vaults in git, index comparisons, crash campaigns.

Used by the tests under tests/reliability/ (bounded) and by bench/reliability.py (long runs).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.indexer.helpers import state
from vault import Vault, atomic, init_vault, parse
from vault.errors import ParseError

REPO = Path(__file__).resolve().parents[2]
HASHING_TOML = '[search]\nembedder = "hashing-256"\n'
SKIP_PARTS = {".git", ".memdir"}


def git(root: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=root, check=True, capture_output=True, text=True,
    )
    return result.stdout.strip()


def new_vault(root: Path, *, in_git: bool = False) -> Path:
    init_vault(root, HASHING_TOML)
    if in_git:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "init", "--allow-empty")
    return root


def markdown_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if not SKIP_PARTS & set(p.relative_to(root).parts))


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob(atomic.TEMP_PREFIX + "*") if ".git" not in p.parts]


def open_index(root: Path) -> Index:
    return Index.open(Vault(root), HashingEmbedder())


def index_state(index: Index) -> dict:
    index.compact()
    return state(index)


def rebuild_state(root: Path) -> dict:
    """The state a fresh rebuild from the files alone gives (built in a scratch copy of the vault)."""
    with tempfile.TemporaryDirectory(prefix="memdir-rebuild-") as scratch:
        copy = Path(scratch) / "v"
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".memdir", ".git"))
        index = open_index(copy)
        try:
            return index_state(index)
        finally:
            index.close()


def drift(index: Index) -> list[str]:
    """Which parts of the index differ from a fresh rebuild (empty when none), with the memories that differ."""
    mine, fresh = index_state(index), rebuild_state(index.root)
    differing = [key for key in fresh if mine[key] != fresh[key]]
    if "memories" in differing:
        only_mine, only_fresh = set(mine["memories"]) - set(fresh["memories"]), set(fresh["memories"]) - set(mine["memories"])
        differing.append(f"index only: {sorted(only_mine)}; rebuild only: {sorted(only_fresh)}")
    if "problems" in differing:
        differing.append(f"index problems: {mine['problems']}; rebuild problems: {fresh['problems']}")
    return differing


def index_litter(root: Path) -> list[str]:
    """Leftovers in the index folder that no live generation uses (crash debris)."""
    base = root / ".memdir" / "index"
    current = (base / "CURRENT").read_text().strip() if (base / "CURRENT").exists() else None
    litter = [p.name for p in base.iterdir() if p.name.startswith("CURRENT.")]
    litter += [p.name for p in base.glob("gen-*") if p.name != current]
    if current:
        litter += [p.name for p in (base / current).glob("*.tmp")]
    return litter


# --- crash campaigns ------------------------------------------------------------------------

BODY = "Memory {i}: the body must survive every crash byte for byte. See [[m-{j:08x}]].\n"
COUNTER = """---
id: m-{i:08x}
collection: history
type: learning
title: Counter {i}
created_at: 2026-11-01T08:00:00Z
uses: 0
---
""" + BODY


def crash_vault(root: Path, memories: int = 4) -> dict[str, str]:
    """A vault of `memories` linked counters; returns id -> body."""
    new_vault(root)
    bodies = {}
    for i in range(memories):
        text = COUNTER.format(i=i, j=(i + 1) % memories)
        (root / "history" / f"m-{i:08x}.md").write_text(text)
        bodies[f"m-{i:08x}"] = BODY.format(i=i, j=(i + 1) % memories)
    return bodies


@dataclass
class CrashReport:
    crash_points: int = 0
    completed_runs: int = 0
    torn_files: int = 0
    lost_increments: int = 0
    index_drift: int = 0
    stray_temp_files: int = 0
    litter: int = 0
    by_mode: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def add(self, other: "CrashReport") -> None:
        for name in ("crash_points", "completed_runs", "torn_files", "lost_increments", "index_drift",
                     "stray_temp_files", "litter"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mode, count in other.by_mode.items():
            self.by_mode[mode] = self.by_mode.get(mode, 0) + count
        self.failures += other.failures


def run_worker(mode: str, root: Path, kill_at: int, rounds: int = 1,
               *extra: str) -> tuple[int, list[tuple[str, int]], int | None]:
    child = subprocess.run(
        [sys.executable, "-m", "tests.reliability.worker", mode, str(root), str(kill_at), str(rounds), *extra],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    if child.returncode not in (0, -9):
        raise AssertionError(f"worker {mode} failed ({child.returncode}):\n{child.stderr[-3000:]}")
    acks = [(line.split()[1], int(line.split()[2])) for line in child.stdout.splitlines() if line.startswith("ack ")]
    events = next((int(line.split()[1]) for line in child.stdout.splitlines() if line.startswith("events ")), None)
    return child.returncode, acks, events


def check_files(root: Path, bodies: dict[str, str], acked: dict[str, int], report: CrashReport, label: str) -> None:
    """Every file parses; counters hold every acknowledged increment (plus at most one unacknowledged)."""
    for path in markdown_files(root) + sorted((root / ".trash").rglob("*.md") if (root / ".trash").exists() else []):
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        try:
            memory = parse(data, rel)
        except ParseError as exc:
            report.torn_files += 1
            report.failures.append(f"{label}: torn {exc}")
            continue
        if memory.id in bodies:
            if memory.body != bodies[memory.id] or data.count(b"\n---\n") != 1 or not data.startswith(b"---\n"):
                report.torn_files += 1
                report.failures.append(f"{label}: {rel} lost bytes or has a second frontmatter block")
            expected = acked.get(memory.id, 0)
            if memory.uses < expected:
                report.lost_increments += expected - memory.uses
                report.failures.append(f"{label}: {memory.id} uses {memory.uses} < acknowledged {expected}")
            elif memory.uses > expected + 1:
                report.failures.append(f"{label}: {memory.id} uses {memory.uses} jumped past {expected} + 1")
                report.lost_increments += 1
            acked[memory.id] = memory.uses


def crash_campaign(workdir: Path, points: int, seed: int,
                   modes: tuple[str, ...] = ("write", "score", "reindex", "swap", "fold"),
                   weights: tuple[int, ...] = (3, 1, 1, 1, 1)) -> CrashReport:
    """SIGKILL workers at `points` random points; after each, check the files, reopen (heal) and compare."""
    rng = random.Random(seed)
    root = workdir / "crash-vault"
    bodies = crash_vault(root)
    report = CrashReport()
    acked: dict[str, int] = {}
    open_index(root).close()
    calibration: dict[str, int] = {}
    attempts = 0
    while report.crash_points < points and attempts < points * 3:
        attempts += 1
        mode = rng.choices(modes, weights)[0]
        if mode not in calibration:
            _, acks, events = run_worker(mode, root, 0)
            acked.update(dict(acks))
            calibration[mode] = events or 1
            check_files(root, bodies, acked, report, f"{mode} calibration")
        kill_at = rng.randint(1, calibration[mode])
        code, acks, events = run_worker(mode, root, kill_at)
        acked.update({memory_id: max(uses, acked.get(memory_id, 0)) for memory_id, uses in acks})
        label = f"{mode} kill_at={kill_at}"
        if code == -9:
            report.crash_points += 1
            report.by_mode[mode] = report.by_mode.get(mode, 0) + 1
        else:
            report.completed_runs += 1
            calibration[mode] = max(calibration[mode], events or 1)
        check_files(root, bodies, acked, report, label)
        index = open_index(root)  # the next start: sweep temp files, heal, reconcile
        try:
            strays = temp_files(root)
            report.stray_temp_files += len(strays)
            litter = index_litter(root)
            report.litter += len(litter)
            if litter:
                report.failures.append(f"{label}: index litter {litter}")
            differing = drift(index)
            if differing:
                report.index_drift += 1
                report.failures.append(f"{label}: index differs from a rebuild in {differing}")
        finally:
            index.close()
        _prune(root, keep=6)
    return report


def _prune(root: Path, keep: int) -> None:
    """The write worker adds a memory per run: keep the vault small so every run costs the same."""
    created = sorted((root / "patterns").glob("*.md"))
    for path in created[:-keep] if len(created) > keep else []:
        path.unlink()


# --- K scorers against a human editor ---------------------------------------------------------

@dataclass
class RaceReport:
    increments: int = 0
    lost_increments: int = 0
    edits: int = 0
    lost_edits: int = 0
    conflicts_reported: int = 0


def _editor_pass(path: Path, marker: str, previous: str | None) -> tuple[bool, bool]:
    """One save by a careful editor: write a swap file, check the file is unchanged, swap it in.

    Like memdir's writer it swaps atomically and looks at what it displaced, so neither side can
    lose the other's save in the check-to-rename window. Returns (saved, previous edit was lost).
    """
    from vault import frontmatter as fm

    data = path.read_bytes()
    doc = fm.split(data.decode("utf-8"))
    lost = previous is not None and previous not in doc.body
    swap = path.with_name(f".{path.name}.swp")
    new = doc.with_parts(body=f"Rewritten by a human: {marker}.\n").text().encode()
    swap.write_bytes(new)
    try:
        if path.read_bytes() != data:
            return False, lost
        if not atomic._exchange(swap, path):
            os.replace(swap, path)
            return True, lost
        if swap.read_bytes() == data:
            return True, lost
        atomic._exchange(swap, path)  # memdir wrote meanwhile: put its file back and retry
        return False, lost
    finally:
        swap.unlink(missing_ok=True)


def race(workdir: Path, scorers: int = 3, rounds: int = 40, memories: int = 3, pace: int = 2) -> RaceReport:
    """K processes score the same memories while an editor keeps rewriting their bodies."""
    root = workdir / "race-vault"
    crash_vault(root, memories)
    children = [subprocess.Popen([sys.executable, "-m", "tests.reliability.worker", "race", str(root), "0", str(rounds)],
                                 cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(scorers)]
    report = RaceReport()
    markers: dict[Path, str | None] = {p: None for p in sorted((root / "history").glob("m-*.md"))}
    serial = 0
    lines: list[list[str]] = [[] for _ in children]
    progress = threading.Condition()

    def read(index: int) -> None:
        for line in children[index].stdout:  # type: ignore[union-attr]
            with progress:
                lines[index].append(line)
                progress.notify_all()
        with progress:
            progress.notify_all()

    readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(len(children))]
    for reader in readers:
        reader.start()
    acks = lambda: sum(line.startswith("ack ") for out in lines for line in out)  # noqa: E731
    try:
        # The human saves one file every `pace` acknowledged increments: paced by events, not by the clock.
        seen = 0
        while any(reader.is_alive() for reader in readers):
            with progress:
                progress.wait_for(lambda: acks() >= seen + pace or not any(r.is_alive() for r in readers), timeout=60)
                seen = acks()
            path = list(markers)[serial % len(markers)]
            serial += 1
            saved, lost = _editor_pass(path, f"edit {serial}", markers[path])
            report.lost_edits += lost
            if saved:
                markers[path] = f"edit {serial}"
                report.edits += 1
            elif lost:
                markers[path] = None
    finally:
        for reader in readers:
            reader.join(timeout=120)
        errors = [child.communicate(timeout=120)[1] for child in children]
    for child, err, out in zip(children, errors, lines):
        if child.returncode != 0:
            raise AssertionError(f"race worker failed ({child.returncode}):\n{err[-3000:]}")
        report.increments += sum(line.startswith("ack ") for line in out)
        report.conflicts_reported += sum(line.startswith("conflict ") for line in out)
    for path, previous in markers.items():
        memory = parse(path.read_bytes(), path.name)
        report.lost_edits += previous is not None and previous not in memory.body
        report.lost_increments += scorers * rounds - memory.uses
    return report


# --- the hostile corpus -----------------------------------------------------------------------

FIXTURES = REPO / "tests" / "fixtures" / "hostile"
BIG_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True)
class Hostile:
    path: str  # vault-relative
    expect: str  # "problem" (reported, never indexed) or "indexed"
    needs_line: bool = False  # a parse error whose line is known must name it


def hostile_corpus(root: Path, outside: Path, *, big: bool = True) -> list[Hostile]:
    """Write every hostile file into the vault (fixtures plus generated ones); `outside` is a folder beyond it."""
    folder = root / "history"
    folder.mkdir(parents=True, exist_ok=True)
    cases = []
    line_less = {"not-a-mapping.md"}  # the error is about the block as a whole: line 2 is still given
    for fixture in sorted(FIXTURES.glob("*.md")):
        shutil.copyfile(fixture, folder / fixture.name)
        cases.append(Hostile(f"history/{fixture.name}", "problem", needs_line=fixture.name not in line_less))
    generated: dict[str, tuple[bytes, str, bool]] = {
        "latin-1.md": (b"---\nid: m-0000b001\ntitle: caf\xe9\n---\nbody\n", "problem", True),
        "nul-bytes.md": (b"---\nid: m-0000b002\n---\nbody\x00with a NUL\n", "problem", True),
        "binary.md": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8, "problem", True),
        "huge-frontmatter.md": (b"---\nid: m-0000b003\nnote: " + b"x" * 70_000 + b"\n---\nbody\n", "problem", True),
        "bom.md": (b"\xef\xbb\xbf---\nid: m-0000b004\ncollection: history\ntitle: With a BOM\n---\nbom body\n",
                   "indexed", False),
        "crlf.md": (b"---\r\nid: m-0000b005\r\ncollection: history\r\ntitle: CRLF\r\n---\r\ncrlf body\r\n", "indexed",
                    False),
        "no-frontmatter.md": (b"# Reference\n\nPlain Markdown is a books document.\n", "indexed", False),
        "empty.md": (b"", "indexed", False),
        "caf\u00e9.md": (b"---\nid: m-0000b006\ntitle: NFC name\n---\nnfc\n", "indexed", False),
        "cafe\u0301.md": (b"---\nid: m-0000b007\ntitle: NFD name\n---\nnfd\n", "indexed", False),
        "Twin.md": (b"---\nid: M-0000B008\ntitle: Case twin\ncreated_at: 2026-01-02T00:00:00Z\n---\nupper\n", "problem",
                    True),
        "twin.md": (b"---\nid: m-0000b008\ntitle: Case twin\ncreated_at: 2026-01-01T00:00:00Z\n---\nlower\n", "indexed",
                    False),
    }
    for name, (data, expect, needs_line) in generated.items():
        (folder / name).write_bytes(data)
        cases.append(Hostile(f"history/{name}", expect, needs_line))
    if big:
        with open(folder / "fifty-megabytes.md", "wb") as handle:
            handle.write(b"---\nid: m-0000b009\n---\n")
            handle.truncate(BIG_BYTES)  # sparse: NULs, and far past the size limit
        cases.append(Hostile("history/fifty-megabytes.md", "problem"))
    outside.mkdir(parents=True, exist_ok=True)
    secret = outside / "secret.md"
    secret.write_text("---\nid: m-0000c001\ntitle: Outside\n---\nprivate words outside the vault\n")
    os.symlink(secret, folder / "symlink-out.md")
    os.symlink(outside / "missing.md", folder / "dangling.md")
    os.link(secret, folder / "hard-link.md")
    cases += [Hostile("history/symlink-out.md", "problem"), Hostile("history/dangling.md", "problem"),
              Hostile("history/hard-link.md", "problem")]
    return cases


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Bytes of every regular file and target of every link under `root` (index and git excluded)."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if SKIP_PARTS & set(path.relative_to(root).parts):
            continue
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = path.read_bytes() if path.stat().st_size < 1 << 20 else f"{path.stat().st_size} bytes"
    return found


def unclear_problems(cases: list[Hostile], problems: list[tuple[str, int | None, str]]) -> list[str]:
    """Cases whose report is missing, lacks the file or the line, or that were reported though valid."""
    by_path = {path: (line, reason) for path, line, reason in problems}
    unclear = []
    for case in cases:
        report = by_path.get(case.path)
        if case.expect == "problem":
            if report is None or not report[1].strip():
                unclear.append(f"{case.path}: not reported")
            elif case.needs_line and not report[0]:
                unclear.append(f"{case.path}: reported without a line ({report[1]})")
        elif report is not None:
            unclear.append(f"{case.path}: valid but reported: {report}")
    return unclear


def drift_in_place(index: Index) -> list[str]:
    """Like `drift`, but rebuilt in the vault itself (hard links and symlinks stay what they are); closes `index`."""
    mine = index_state(index)
    root = index.root
    index.close()
    shutil.rmtree(root / ".memdir" / "index")
    fresh = open_index(root)
    try:
        theirs = index_state(fresh)
    finally:
        fresh.close()
    return [key for key in theirs if mine[key] != theirs[key]]
