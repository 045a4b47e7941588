"""A memdir process that SIGKILLs itself at a chosen point, for the crash campaigns.

Usage: python -m tests.reliability.worker MODE VAULT KILL_AT [ROUNDS]

MODE is one of
    write    Vault.edit counter increments and Vault.add creates (no index); KILL_AT counts
             write-path system calls (write, fsync, replace, link, unlink, rename).
    score    Index.open (reconcile) then Curator.score rounds; KILL_AT counts Python and C
             function calls from before the open, so it lands anywhere in reconcile, write or sync.
    reindex  Index.open then a full reindex into a new generation, 2 files a slice; KILL_AT counts calls in the reindex.
    swap     as reindex, but counting starts when the new generation is swapped in.
    fold     Index.open, a round of counter increments synced (their vectors in the log), then the log folded into
             the snapshot as an idle owner does (Index.settle_vectors); KILL_AT counts calls in the fold.
    edit     like write, for one file: python -m tests.reliability.worker edit VAULT KILL_AT ROUNDS PATH
    race     scores every history memory ROUNDS times as Curator.score would (outcome_updates), no index:
             K of these run at once against a human editor

KILL_AT 0 never kills; the worker then prints "events N" (how many points there were) at the end.
Every acknowledged increment prints "ack <id> <uses>".
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

WRITE_CALLS = ("write", "fsync", "replace", "link", "unlink", "rename")


class Trigger:
    def __init__(self, kill_at: int) -> None:
        self.kill_at = kill_at
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        if self.count == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def arm_syscalls(self) -> None:
        def counted(function):
            def wrapper(*args, **kwargs):
                self.tick()
                return function(*args, **kwargs)

            return wrapper

        for name in WRITE_CALLS:
            setattr(os, name, counted(getattr(os, name)))

    def arm_calls(self) -> None:
        def profile(frame, event, arg):
            if event in ("call", "c_call"):
                self.tick()

        sys.setprofile(profile)

    def disarm(self) -> None:
        sys.setprofile(None)


def ids_in(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / "history").glob("m-*.md"))


def run_write(root: Path, trigger: Trigger, rounds: int) -> None:
    from vault import Change, Vault

    vault = Vault(root)
    trigger.arm_syscalls()
    for round_ in range(rounds):
        for memory_id in ids_in(root):
            memory = vault.edit(vault.load(f"history/{memory_id}.md"), Change(derive=lambda m: {"uses": m.uses + 1}))
            print(f"ack {memory.id} {memory.uses}", flush=True)
        vault.add(f"takeaway of round {round_} {os.getpid()}", collection="patterns", type="learning")


def run_edit(root: Path, trigger: Trigger, rounds: int, relative: str) -> None:
    from vault import Change, Vault

    vault = Vault(root)
    trigger.arm_syscalls()
    for _ in range(rounds):
        memory = vault.edit(vault.load(relative), Change(derive=lambda m: {"uses": m.uses + 1}))
        print(f"ack {memory.id} {memory.uses}", flush=True)


def run_race(root: Path, rounds: int) -> None:
    from datetime import datetime, timezone

    from vault import Change, Vault
    from vault.errors import ConflictError
    from vault.scoring import outcome_updates
    from vault.settings import ScoringSettings

    vault = Vault(root)
    scoring = ScoringSettings()
    for _ in range(rounds):
        for memory_id in ids_in(root):
            now = datetime.now(timezone.utc).replace(microsecond=0)
            derive = lambda m: outcome_updates(m, "worked", now, scoring)  # noqa: E731
            while True:
                try:
                    memory = vault.edit(vault.load(f"history/{memory_id}.md"), Change(derive=derive))
                    break
                except ConflictError:
                    print(f"conflict {memory_id}", flush=True)  # reported, then retried by the caller
            print(f"ack {memory.id} {memory.uses}", flush=True)


def _curator(index):
    from indexer.curator import Curator
    from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

    return Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())


def _open(root: Path):
    from indexer.embed import HashingEmbedder
    from indexer.index import Index
    from vault import Vault

    return Index.open(Vault(root), HashingEmbedder())


def run_score(root: Path, trigger: Trigger, rounds: int) -> None:
    import indexer.curator  # noqa: F401  (imported before arming: the points are in memdir's work, not imports)
    import indexer.index  # noqa: F401

    trigger.arm_calls()
    index = _open(root)
    curator = _curator(index)
    for _ in range(rounds):
        for memory_id in ids_in(root):
            result = curator.score({memory_id: "worked"})[0]
            print(f"ack {memory_id} {result.changes['uses']}", flush=True)
    trigger.disarm()
    index.close()


def run_reindex(root: Path, trigger: Trigger, at_swap: bool) -> None:
    import indexer.index
    from indexer.generations import Layout
    from indexer.rebuild import reindex

    indexer.index.BUILD_SLICE = 2  # the crash vault's few files in several slices: kills land between slices too
    index = _open(root)
    if at_swap:
        original = Layout.swap

        def swap(self, generation, *keep):
            trigger.arm_calls()
            return original(self, generation, *keep)

        Layout.swap = swap
    else:
        trigger.arm_calls()
    reindex(index)
    trigger.disarm()
    index.close()


def run_fold(root: Path, trigger: Trigger) -> None:
    import indexer.index
    from vault import Change

    indexer.index.SETTLE_SHARE = 0.0  # the crash vault's log is a small share of its snapshot: fold it anyway
    index = _open(root)
    for memory_id in ids_in(root):
        path = f"history/{memory_id}.md"
        memory = index.vault.edit(index.vault.load(path), Change(derive=lambda m: {"uses": m.uses + 1}))
        print(f"ack {memory.id} {memory.uses}", flush=True)
    index.vault.add(f"takeaway folded by {os.getpid()}", collection="patterns", type="learning")  # vectors: a log
    index.sync()
    trigger.arm_calls()
    folded = index.settle_vectors()
    trigger.disarm()
    print(f"folded {folded}", flush=True)
    index.close()


def main() -> None:
    mode, root, kill_at = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    trigger = Trigger(kill_at)
    if mode == "write":
        run_write(root, trigger, rounds)
    elif mode == "edit":
        run_edit(root, trigger, rounds, sys.argv[5])
    elif mode == "race":
        run_race(root, rounds)
    elif mode == "score":
        run_score(root, trigger, rounds)
    elif mode == "fold":
        run_fold(root, trigger)
    elif mode in ("reindex", "swap"):
        run_reindex(root, trigger, at_swap=mode == "swap")
    else:
        raise SystemExit(f"unknown mode {mode}")
    trigger.disarm()
    print(f"events {trigger.count}", flush=True)


if __name__ == "__main__":
    main()
