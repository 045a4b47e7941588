"""The whole vault as a state machine: random programs, human edits, git and crashes against a model.

A real git repository, the real writer, curator and indices (with the hashing embedder). The
model holds what every file must say: id, title, a human `note:` and `previous:`, body and
counter (or the exact bytes of a file that does not parse). After every step no human byte may be lost,
the counters must equal the model's, no frontmatter may be torn or doubled and no temp file
may be left; after quiescing, the index must equal a fresh rebuild of the same files.

CI runs the `reliability-ci` Hypothesis profile; MEMDIR_LONG=1 (or bench/reliability.py
--long) selects `reliability-long`.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from indexer.rebuild import reindex
from mcp_server.service.app import App
from tests.reliability.harness import drift, git, markdown_files, new_vault, run_worker, temp_files
from vault import frontmatter as fm
from vault import parse, store
from vault.errors import ParseError, VaultError
from vault.ids import identity_key

LONG = os.environ.get("MEMDIR_LONG") == "1"  # read at import: the clean_environ fixture hides MEMDIR_* later
# No explain phase: on Python < 3.12 it traces every line and makes each step ~10x slower.
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
settings.register_profile("reliability-ci", max_examples=25, stateful_step_count=30, deadline=None,
                          phases=PHASES, suppress_health_check=list(HealthCheck))
settings.register_profile("reliability-long", max_examples=int(os.environ.get("MEMDIR_LONG_EXAMPLES", "300")),
                          stateful_step_count=60, deadline=None, phases=PHASES, suppress_health_check=list(HealthCheck))

WORDS = "postgres lock celery retry ledger currency deploy fly import parser timezone cache vault".split()
FOLDERS = ("history", "patterns", "memory_bank")
BROKEN = [
    b"---\ntitle: [unclosed\n---\nbroken by a human\n",
    b"---\nid: m-0badf00d\nid: m-0badf00d\n---\nduplicate keys\n",
    b"---\nuses: &a 1\nscore: *a\n---\nan alias\n",
    b"---\ntitle: x\n",
    b"\xef\xbb\xbf---\ntitle: caf\xe9\n---\nlatin-1, not UTF-8\n",
]


@dataclass(frozen=True)
class Expected:
    """What one file must hold. `raw` is set for files that do not parse: their bytes are frozen."""

    id: str
    title: str
    body: str
    uses: int
    note: str | None = None
    raw: bytes | None = None
    previous: str | None = None  # the memory this one follows: its indexed texts read that memory's text


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _human_file(memory: Expected, minute: int, *, crlf: bool, bom: bool) -> bytes:
    note = f'note: "{memory.note}"\n' if memory.note is not None else ""
    note += f"previous: {memory.previous}\n" if memory.previous is not None else ""
    text = (f"---\nid: {memory.id}\ncollection: history\ntype: learning\ntitle: {memory.title}\n"
            f"created_at: 2026-11-01T08:{minute % 60:02d}:00Z\nuses: {memory.uses}\n{note}---\n")
    body = memory.body.replace("\r\n", "\n")
    data = (text + body).replace("\n", "\r\n") if crlf else text + body
    return (b"\xef\xbb\xbf" if bom else b"") + data.encode()


class VaultMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self._random_id = store.new_id
        store.new_id = lambda: f"m-{0x20000 + self._next():08x}"  # deterministic, so Hypothesis can replay and shrink
        self.tmp = Path(tempfile.mkdtemp(prefix="memdir-model-"))
        self.root = new_vault(self.tmp / "vault", in_git=True)
        self.app = App(self.root)
        self.files: dict[str, Expected] = {}
        self.pending: set[str] = set()
        self.commits: list[tuple[str, dict[str, Expected]]] = [(git(self.root, "rev-parse", "HEAD"), {})]
        self.conflicts = 0

    def teardown(self) -> None:
        try:
            self.quiesce()
        finally:
            store.new_id = self._random_id
            self.app.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers ---------------------------------------------------------------------------

    def _next(self) -> int:
        self.serial = getattr(self, "serial", 0) + 1
        return self.serial

    def _live(self, parseable: bool = True) -> list[str]:
        return sorted(p for p, e in self.files.items()
                      if not p.startswith(".trash/") and (e.raw is None or not parseable))

    def _disk(self) -> dict[str, bytes]:
        return {p.relative_to(self.root).as_posix(): p.read_bytes() for p in self._all_md()}

    def _all_md(self) -> list[Path]:
        trash = sorted((self.root / ".trash").rglob("*.md")) if (self.root / ".trash").exists() else []
        return markdown_files(self.root) + trash

    def _uses(self, data: bytes, rel: str) -> int | None:
        try:
            return parse(data, rel).uses
        except ParseError:
            return None

    # -- programs --------------------------------------------------------------------------

    @rule(seed=st.integers(0, 10**6), folder=st.sampled_from(("history", "patterns", "memory_bank")))
    def program_adds(self, seed: int, folder: str) -> None:
        rng = random.Random(seed)
        content = f"{_words(rng, 6).capitalize()} number {self._next()}."
        added = self.app.curator.add(content, collection=folder, type="learning")
        assert added.status == "created"
        memory = added.memory
        self.files[memory.path] = Expected(memory.id, memory.title, content + "\n", memory.uses)

    @precondition(lambda self: self.files)
    @rule(data=st.data(), outcome=st.sampled_from(("worked", "partial", "failed")))
    def program_scores(self, data: st.DataObject, outcome: str) -> None:
        memory_id = data.draw(st.sampled_from(sorted({e.id for e in self.files.values()})))
        before = self._disk()
        try:
            result = self.app.curator.score({memory_id: outcome})
        except VaultError as exc:
            self.conflicts += 1
            assert self._disk() == before, f"a refused score ({exc}) still changed a file"
            return
        assert result[0].changes, "a scored memory reported no change"
        after = self._disk()
        changed = [p for p in after if after[p] != before.get(p)]
        assert len(changed) == 1 and set(after) == set(before), f"one score changed {changed}"
        path = changed[0]
        assert identity_key(parse(after[path], path).id) == identity_key(memory_id), \
            f"scoring {memory_id} rewrote {path}, which holds another memory"
        assert self._uses(after[path], path) == self._uses(before[path], path) + 1
        self.files[path] = replace(self.files[path], uses=self.files[path].uses + 1)

    @precondition(lambda self: self._live(parseable=False))
    @rule(data=st.data())
    def program_deletes(self, data: st.DataObject) -> None:
        memory_id = data.draw(st.sampled_from(sorted({self.files[p].id for p in self._live(parseable=False)})))
        before = self._disk()
        try:
            destination = self.app.curator.delete(memory_id)
        except VaultError:
            self.conflicts += 1
            assert self._disk() == before
            return
        after = self._disk()
        gone = set(before) - set(after)
        assert len(gone) == 1 and set(after) - set(before) == {destination}, (gone, destination)
        source = gone.pop()
        assert after[destination] == before[source], "deleting changed the file's bytes"
        if self.files[source].raw is None:
            assert identity_key(parse(after[destination], destination).id) == identity_key(memory_id), \
                f"deleting {memory_id} trashed {source}, which holds another memory"
        self.files[destination] = self.files.pop(source)

    @precondition(lambda self: any(p.startswith(".trash/") for p in self.files))
    @rule(data=st.data(), folder=st.sampled_from(FOLDERS))
    def restore_from_trash(self, data: st.DataObject, folder: str) -> None:
        source = data.draw(st.sampled_from(sorted(p for p in self.files if p.startswith(".trash/"))))
        destination = f"{folder}/restored-{self._next()}.md"
        try:
            self.app.vault.writer.restore(source, destination)
        except ParseError:
            pass  # the file moved back; it just does not parse (it was broken when deleted)
        self.files[destination] = self.files.pop(source)
        self.pending.add(destination)

    @rule()
    def program_reindexes(self) -> None:
        reindex(self.app.index)
        self.pending.clear()

    # -- humans ----------------------------------------------------------------------------

    @rule(seed=st.integers(0, 10**6), folder=st.sampled_from(FOLDERS), crlf=st.booleans(), bom=st.booleans())
    def human_creates(self, seed: int, folder: str, crlf: bool, bom: bool) -> None:
        rng = random.Random(seed)
        n = self._next()
        body = f"{_words(rng, 5)} human {n}. See [[m-{rng.randint(0, n):08x}]].\n"
        follows = sorted({e.id for e in self.files.values()} | {f"m-{0x10000 + n + 1:08x}"})  # or the next one
        previous = rng.choice(follows) if rng.random() < 0.5 else None
        memory = Expected(f"m-{0x10000 + n:08x}", f"Human {n}", body.replace("\n", "\r\n") if crlf else body, 0,
                          previous=previous)
        path = f"{folder}/human-{n}.md"
        (self.root / path).parent.mkdir(exist_ok=True)
        (self.root / path).write_bytes(_human_file(memory, n, crlf=crlf, bom=bom))
        self.files[path] = memory
        self.pending.add(path)

    @precondition(lambda self: self._live())
    @rule(data=st.data(), seed=st.integers(0, 10**6))
    def human_edits_body(self, data: st.DataObject, seed: int) -> None:
        path = data.draw(st.sampled_from(self._live()))
        text = (self.root / path).read_bytes().decode("utf-8")
        doc = fm.split(text)
        body = f"{_words(random.Random(seed), 7)} edited {self._next()}.{doc.newline}"
        (self.root / path).write_bytes(doc.with_parts(body=body).text().encode())  # in place, like an editor
        self.files[path] = replace(self.files[path], body=body)
        self.pending.add(path)

    @precondition(lambda self: self._live())
    @rule(data=st.data(), title=st.booleans())
    def human_edits_frontmatter(self, data: st.DataObject, title: bool) -> None:
        path = data.draw(st.sampled_from(self._live()))
        text = (self.root / path).read_bytes().decode("utf-8")
        doc = fm.split(text)
        value = f"edited {self._next()}"
        key = "title" if title else "note"
        lines = [line for line in (doc.frontmatter or "").splitlines(keepends=True) if not line.startswith(f"{key}:")]
        lines.append(f'{key}: "{value}"{doc.newline}' if key == "note" else f"{key}: {value.capitalize()}{doc.newline}")
        (self.root / path).write_bytes(doc.with_parts(frontmatter="".join(lines)).text().encode())
        self.files[path] = replace(self.files[path], **({"title": value.capitalize()} if title else {"note": value}))
        self.pending.add(path)

    @precondition(lambda self: self._live())
    @rule(data=st.data(), broken=st.sampled_from(BROKEN))
    def human_breaks_a_file(self, data: st.DataObject, broken: bytes) -> None:
        path = data.draw(st.sampled_from(self._live()))
        (self.root / path).write_bytes(broken)
        self.files[path] = replace(self.files[path], raw=broken)
        self.pending.add(path)

    @precondition(lambda self: any(e.raw is not None for p, e in self.files.items() if not p.startswith(".trash/")))
    @rule(data=st.data(), crlf=st.booleans())
    def human_fixes_a_file(self, data: st.DataObject, crlf: bool) -> None:
        path = data.draw(st.sampled_from(self._live(parseable=False)))
        memory = replace(self.files[path], raw=None, note=None, body=f"fixed {self._next()}\n")
        memory = replace(memory, body=memory.body.replace("\n", "\r\n") if crlf else memory.body)
        (self.root / path).write_bytes(_human_file(memory, self.serial, crlf=crlf, bom=False))
        self.files[path] = memory
        self.pending.add(path)

    @precondition(lambda self: self._live(parseable=False))
    @rule(data=st.data(), folder=st.sampled_from(FOLDERS), over=st.booleans())
    def human_renames(self, data: st.DataObject, folder: str, over: bool) -> None:
        live = self._live(parseable=False)
        source = data.draw(st.sampled_from(live))
        others = [p for p in live if p != source]
        destination = data.draw(st.sampled_from(others)) if over and others else f"{folder}/moved-{self._next()}.md"
        (self.root / destination).parent.mkdir(exist_ok=True)
        os.rename(self.root / source, self.root / destination)  # `mv`, overwriting the target if asked
        self.files[destination] = self.files.pop(source)
        self.pending |= {source, destination}

    @precondition(lambda self: len(self.commits) > 1 or self.files)
    @rule(data=st.data())
    def git_checkout(self, data: st.DataObject) -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-qm", f"step {self._next()}", "--allow-empty")
        self.commits.append((git(self.root, "rev-parse", "HEAD"), dict(self.files)))
        sha, snapshot = data.draw(st.sampled_from(self.commits[:-1]))
        git(self.root, "checkout", "-q", "--detach", sha)
        self.pending |= set(self.files) | set(snapshot)
        # Git neither removes nor brings back ignored files (.trash/): they stay as they are now, and a
        # snapshot's ignored entries are not restored (one may have been restored out of the trash since).
        ignored = {p: e for p, e in self.files.items() if self._git_ignored(p)}
        self.files = {**{p: e for p, e in snapshot.items() if not self._git_ignored(p)}, **ignored}

    def _git_ignored(self, path: str) -> bool:
        return path.startswith(".trash/") and ".trash/" in (self.root / ".gitignore").read_text()

    @precondition(lambda self: self._live())
    @rule(data=st.data(), kill_at=st.integers(1, 24))
    def a_writer_is_killed(self, data: st.DataObject, kill_at: int) -> None:
        path = data.draw(st.sampled_from(self._live()))
        code, acks, _ = run_worker("edit", self.root, kill_at, 3, path)
        uses = parse((self.root / path).read_bytes(), path).uses
        acked = self.files[path].uses + len(acks)
        assert uses in (acked, acked + 1) if code == -9 else uses == acked, f"{path}: {uses} after {len(acks)} acks"
        self.files[path] = replace(self.files[path], uses=uses)
        self.app.close()  # the owner restarts: sweep temp files, heal, reconcile
        self.app = App(self.root)
        self.pending.clear()

    # -- the index ---------------------------------------------------------------------------

    @precondition(lambda self: self.pending)
    @rule(data=st.data())
    def watcher_delivers_some_events(self, data: st.DataObject) -> None:
        delivered = data.draw(st.sets(st.sampled_from(sorted(self.pending))))
        self.app.index.sync(sorted(delivered))
        self.pending.clear()  # the rest were dropped: only a rescan finds them

    @rule()
    def quiesce(self) -> None:
        self.app.index.sync()
        self.pending.clear()
        differing = drift(self.app.index)
        assert not differing, f"after a full sync the index differs from a rebuild in {differing}"

    # -- invariants --------------------------------------------------------------------------

    @invariant()
    def every_file_says_what_the_model_says(self) -> None:
        disk = self._disk()
        assert set(disk) == set(self.files), f"unexpected files: {set(disk) ^ set(self.files)}"
        for path, expected in self.files.items():
            data = disk[path]
            if expected.raw is not None:
                assert data == expected.raw, f"{path} did not parse and was rewritten anyway"
                continue
            memory = parse(data, path)
            assert (memory.id, memory.title, memory.body) == (expected.id, expected.title, expected.body), path
            assert memory.frontmatter.get("note") == expected.note, f"{path}: the human's note was lost"
            assert memory.frontmatter.get("previous") == expected.previous, f"{path}: the human's previous was lost"
            assert memory.uses == expected.uses, f"{path}: uses {memory.uses}, expected {expected.uses}"
            text = data.decode("utf-8").removeprefix("\ufeff")
            assert text.startswith("---") and not fm.split(text).body.startswith("---"), f"{path}: torn frontmatter"

    @invariant()
    def no_temp_files_are_left(self) -> None:
        assert not temp_files(self.root)


VaultMachine.TestCase.settings = settings.get_profile("reliability-long" if LONG else "reliability-ci")
# The long profile runs for many minutes; pyproject's 300 s pytest-timeout is sized for the CI profile.
TestVaultModel = pytest.mark.timeout(0 if LONG else 300)(VaultMachine.TestCase)
