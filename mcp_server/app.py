"""The composition root: one vault, its config, its index and its searcher, wired once per process."""

from __future__ import annotations

from pathlib import Path

from indexer.embed import Embedder, make_embedder
from indexer.index import Index, Progress
from indexer.curator import Curator
from indexer.search import Searcher
from vault import Vault
from vault.errors import ConfigError

from .config import Config, load_config


class App:
    """Everything a command or the server needs, built from `<vault>/memdir.toml`."""

    def __init__(self, root: Path, *, config: Config | None = None, embedder: Embedder | None = None,
                 writable: bool = True, progress: Progress | None = None) -> None:
        self.root = root
        self.config = config or load_config(root)
        self.vault = Vault(root, self.config.vault)
        self.embedder = embedder or _embedder(self.config)
        self.index = Index.open(self.vault, self.embedder, writable=writable, progress=progress)
        self.searcher = Searcher(self.index, self.config.search)
        self.curator = Curator(self.index, self.config.scoring, self.config.lifecycle, self.config.dedup,
                               outcome_history=self.config.vault.outcome_history,
                               max_content_chars=self.config.vault.max_content_chars)

    def close(self) -> None:
        self.index.close()


def _embedder(config: Config) -> Embedder:
    try:
        return make_embedder(config.search.embedder)
    except ValueError as exc:
        raise ConfigError(f"memdir.toml [search] embedder: {exc}") from None
