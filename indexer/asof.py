"""Indices of the vault as it was at a past commit, built on demand for answers "as of" a date.

The files of that commit are written under `.memdir/asof/<commit>/vault/` (never into the working
tree or `.git`) and indexed there like any vault, with the live index's embedding cache: a text
that has not changed since is not embedded again, so an as-of index of a vault whose memories
mostly kept their text costs little more than reading the files. The last few stay on disk and the
last two stay open; the rest are deleted.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import OrderedDict
from pathlib import Path

from vault import Vault
from vault.history import Commit, VaultHistory

from .index import Index
from .search import Searcher
from .settings import SearchSettings

KEEP_OPEN = 2
KEEP_ON_DISK = 4
COMPLETE = ".complete"


class AsOfIndices:
    def __init__(self, index: Index) -> None:
        self.live = index  # its embedder (and embedding cache) is shared
        self.root = index.vault.root
        self.folder = self.root / ".memdir" / "asof"
        self._open: OrderedDict[str, Index] = OrderedDict()
        self._lock = threading.Lock()
        self._history: VaultHistory | None = None
        self._searchers: dict[str, Searcher] = {}

    def history(self) -> VaultHistory:
        if self._history is None:
            self._history = VaultHistory(self.root)  # raises when the vault is not in git (asked again next time)
        return self._history

    def searcher(self, commit: Commit, settings: SearchSettings) -> Searcher:
        """A searcher over the vault as of `commit`; kept with its index (its caches stay warm)."""
        index = self.index(commit)
        with self._lock:
            searcher = self._searchers.get(commit.sha)
            if searcher is None or searcher.index is not index or searcher.settings != settings:
                searcher = self._searchers[commit.sha] = Searcher(index, settings)
            return searcher

    def index(self, commit: Commit) -> Index:
        """The vault as committed at `commit`, indexed (built the first time, then reused)."""
        with self._lock:
            index = self._open.get(commit.sha)
            if index is not None:
                self._open.move_to_end(commit.sha)
                return index
            folder = self.folder / commit.sha / "vault"
            if not (folder.parent / COMPLETE).exists():
                self._materialize(commit, folder)
            os.utime(folder.parent)  # most recently used: kept on disk longest
            index = Index.open(Vault(folder), self.live.embedder)
            self._open[commit.sha] = index
            while len(self._open) > KEEP_OPEN:
                sha, old = self._open.popitem(last=False)
                self._searchers.pop(sha, None)
                old.close()
            self._prune()
            return index

    def close(self) -> None:
        with self._lock:
            for index in self._open.values():
                index.close()
            self._open.clear()
            self._searchers.clear()

    def _materialize(self, commit: Commit, folder: Path) -> None:
        shutil.rmtree(folder.parent, ignore_errors=True)  # a half-written snapshot of a crashed build
        for relative, data in self.history().files(commit).items():
            if relative == "memdir.toml":
                continue  # today's settings rank the past: an old file may hold keys this version refuses
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        folder.mkdir(parents=True, exist_ok=True)
        (folder.parent / COMPLETE).write_text(commit.date.isoformat())

    def _prune(self) -> None:
        """Keep the most recently used snapshots on disk; open ones are never removed."""
        if not self.folder.is_dir():
            return
        snapshots = sorted((p for p in self.folder.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in snapshots[KEEP_ON_DISK:]:
            if old.name not in self._open:
                shutil.rmtree(old, ignore_errors=True)
