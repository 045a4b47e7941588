"""The composition root: the project vault and the user's personal vault, each with its index, searcher and
curator, sharing one embedding model; wired once per process.

The user vault (`[vault] user_vault`, or $MEMDIR_USER_VAULT) holds private memories. It is a normal
vault with its own `.memdir/` index. It is opened when it exists and created on the first private
write. Several project servers may share it: the first to open it owns its index (the index's flock)
and watches it; the others read it, reload it when the owner commits, write files only (the owner's
watcher indexes them) and take ownership over when the owner exits.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from indexer.asof import AsOfIndices
from indexer.curator import Curator
from indexer.embed import CachedEmbedder, Embedder, make_embedder
from indexer.index import Index, IndexUnusable, Progress
from indexer.live import LiveIndex
from indexer.search import Searcher
from indexer.settings import SearchSettings
from vault import Vault, init_vault
from vault.errors import CarriedStateError, ConfigError, NotFoundError, ValidationError
from vault.ids import check_id

from ..client import servers_folder
from ..config import Config, default_config_text, int8_override, load_config, user_vault_root

log = logging.getLogger("memdir.app")
PROJECT, USER = "project", "user"


@dataclass
class Side:
    """One opened vault: the project's or the user's."""

    source: str  # "project" or "user": what every memory read from it carries as Memory.source
    root: Path
    config: Config
    vault: Vault
    index: Index
    searcher: Searcher
    curator: Curator
    live: LiveIndex | None = None


def open_side(root: Path, source: str, config: Config, embedder: Embedder, search: SearchSettings, *,
              writable: bool, progress: Progress | None = None, defer_embedding: bool = False,
              reconcile: bool = True, stop: threading.Event | None = None, read_when_full: bool = False) -> Side:
    vault = Vault(root, config.vault, source=source)
    if isinstance(embedder, CachedEmbedder):
        embedder = embedder.inner  # each vault caches its own texts' vectors under its own .memdir/
    index = Index.open(vault, embedder, writable=writable, progress=progress, defer_embedding=defer_embedding,
                       reconcile=reconcile, stop=stop, read_when_full=read_when_full)
    # With the schedule off (`[lifecycle] every = "off"`) the lifecycle is wholly manual: reads
    # show everything until `memdir gc` runs. Benchmarks of old corpora rely on that.
    curator = Curator(index, config.scoring, config.lifecycle, config.dedup,
                      outcome_history=config.vault.outcome_history, max_content_chars=config.vault.max_content_chars)
    return Side(source, root, config, vault, index, Searcher(index, search, lifecycle=config.lifecycle if config.lifecycle.every_seconds else None), curator)


class App:
    """Everything a command or the server needs, built from `<vault>/memdir.toml`."""

    def __init__(self, root: Path, *, config: Config | None = None, embedder: Embedder | None = None,
                 writable: bool = True, progress: Progress | None = None, defer_embedding: bool = False,
                 reconcile_later: bool = False, stop: threading.Event | None = None, read_when_full: bool = False) -> None:
        self.root = root
        self.config = config or load_config(root)
        self.embedder = embedder or configured_embedder(self.config)  # one model for both vaults
        self.writable = writable
        # A server answers before a fresh vault is embedded and fills the vectors in behind (Index.backfill);
        # a command that exits when done embeds everything first.
        self.defer_embedding = defer_embedding
        # A server (`reconcile_later`) answers from the committed index at once; each vault it owns reconciles its
        # files in the background once `start_watching` has its watcher up (Index.open, LiveIndex.start).
        self.reconcile_later = reconcile_later
        # A server's: set when it lets go of the vault, it calls off an open's wait for another process's build.
        self.stop = stop
        # A command's: a vault on a full disk is still searched, read-only (Index.open).
        self.read_when_full = read_when_full
        self.project = open_side(root, PROJECT, self.config, self.embedder, self.config.search,
                                 writable=writable, progress=progress, defer_embedding=defer_embedding,
                                 reconcile=not reconcile_later, stop=stop, read_when_full=read_when_full)
        self.vault, self.index, self.searcher, self.curator = (
            self.project.vault, self.project.index, self.project.searcher, self.project.curator)
        self.user_root = user_vault_root(self.config, root)
        self.user: Side | None = None
        self._watching = False
        self._open = True
        self._past: AsOfIndices | None = None
        if self.user_root is not None and self.user_root.is_dir():
            try:
                self.user = self._open_user()
            except (IndexUnusable, ConfigError, CarriedStateError) as exc:
                log.warning("user vault %s not opened: %s", self.user_root, exc)

    # -- the two vaults ----------------------------------------------------------------

    def user_side(self, create: bool = False) -> Side | None:
        """The user vault, caught up with its owner's changes; with `create`, made if missing (or an error)."""
        if self.user is None:
            if self.user_root is None:
                if create:
                    raise ValidationError("private memories need a user vault, and [vault] user_vault is empty "
                                          "in memdir.toml; set it (or MEMDIR_USER_VAULT) to a folder")
                return None
            if not create and not self.user_root.is_dir():
                return None
            if create:
                init_vault(self.user_root, default_config_text())
            try:
                self.user = self._open_user()
            except (IndexUnusable, ConfigError, CarriedStateError):
                if create:
                    raise
                return None
        elif self.user.index.refresh() and self._watching:
            self._watch(self.user)  # the previous owner exited and this process took the index over
        return self.user

    def sides(self, include_user: bool = True) -> list[Side]:
        """The project vault, then the user vault when there is one (and the caller may read it)."""
        user = self.user_side() if include_user else None
        return [self.project] + ([user] if user is not None else [])

    def side_of(self, memory_id: str, sides: list[Side] | None = None) -> Side:
        """The vault holding a memory: ids are globally unique, so at most one does (`sides`: what `sides()` gave,
        for a caller that looks up many ids)."""
        check_id(memory_id)
        for side in self.sides() if sides is None else sides:
            try:
                side.index.get(memory_id)
                return side
            except NotFoundError:
                continue
        raise NotFoundError(f"no memory with id {memory_id!r}")

    def _open_user(self) -> Side:
        assert self.user_root is not None
        user_config = load_config(self.user_root)
        # The project's search settings rank both vaults, so their results compare; the user vault's
        # own [search] embedder is not used: the one model this process loaded indexes both.
        side = open_side(self.user_root, USER, user_config, self.embedder, self.config.search, writable=self.writable,
                         defer_embedding=self.defer_embedding, reconcile=not self.reconcile_later, stop=self.stop,
                         read_when_full=self.read_when_full)
        if self._watching:
            self._watch(side)
        return side

    def past(self) -> AsOfIndices:
        """The project vault as committed at past dates (built on demand from its git history)."""
        if self._past is None:
            self._past = AsOfIndices(self.project.index)
        return self._past

    # -- watching and closing ------------------------------------------------------------

    def start_watching(self) -> None:
        """Follow edits to the files of every vault whose index this process owns (the server does this)."""
        self._watching = True
        for side in self.sides():
            self._watch(side)

    def _watch(self, side: Side) -> None:
        if side.live is None and side.index.writable:
            side.live = LiveIndex(side.index, side.config.watch).start()

    def close(self) -> None:
        """Stop the watchers and close both indices (releasing their ownership); safe to call twice."""
        sides, self._open = (self.project, self.user) if self._open else (), False
        if self._past is not None:
            self._past.close()
            self._past = None
        for side in sides:
            if side is None:
                continue
            if side.live is not None:
                side.live.stop()
                side.live = None
            side.index.close()


def configured_embedder(config: Config) -> Embedder:
    """The embedder memdir.toml's [search] names, its int8 settings as set (a server's and `memdir reindex`'s)."""
    try:
        return make_embedder(config.search.embedder, config.search.int8_long_queries, servers_folder(),
                             config.search.int8_documents, int8_override())
    except ValueError as exc:
        raise ConfigError(f"memdir.toml [search] embedder: {exc}") from None
