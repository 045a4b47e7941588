"""Whole-vault rebuilds: `memdir reindex` with a server running (`reindex`) and without one (`rebuild`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from vault import Vault
from vault.carried_state import check_not_carried

from .embed import CachedEmbedder, Embedder
from .generations import Layout
from .index import Index, IndexUnusable, Progress, SyncReport, build_generation, build_index


def reindex(index: Index, progress: Progress | None = None) -> SyncReport:
    """Rebuild into a new generation, swap it in under the running index, then catch up with edits made meanwhile."""
    started = time.perf_counter()
    layout = Layout(index.root)
    # The running index goes on writing its generation (a capture's sync) until it has swapped: that one is
    # dropped only after, or the sync met a removed folder and the capture reported a failure.
    generation = build_generation(index.vault, index.embedder, layout, progress, keep=index.generation)
    with index.lock:
        index.swap(generation)
    layout.drop_others(generation)
    index.sync()  # files saved while the new generation was being built
    report = SyncReport(added=index.memory_count(), errors=len(index.problems()))
    report.seconds = time.perf_counter() - started
    return report


@dataclass(frozen=True)
class RebuildReport:
    memories: int
    chunks: int
    problems: int
    embedded: int
    seconds: float


def rebuild(vault: Vault, embedder: Embedder, progress: Progress | None = None) -> RebuildReport:
    """`memdir reindex` without a server: take ownership, build a fresh generation, swap it in."""
    check_not_carried(vault.root)  # its embedding cache is read
    layout = Layout(vault.root)
    owner = layout.try_own()
    if owner is None:
        raise IndexUnusable("another memdir process owns this index (another command building or changing it, "
                             "or a server; memdir status lists servers); run memdir reindex again when it is done")
    started = time.perf_counter()
    try:
        cached = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(
            embedder, vault.root / ".memdir" / "cache" / "embeddings.sqlite", adopt=layout.ours())
        index = build_index(vault, cached, layout, progress)  # counted as it was filled, not loaded again
        try:
            return RebuildReport(index.memory_count(), index.chunk_count(), len(index.problems()), cached.misses,
                                 time.perf_counter() - started)
        finally:
            index.close()
    finally:
        owner.release()
