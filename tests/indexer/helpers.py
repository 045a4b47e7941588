"""Index fixtures shared by the indexer tests."""

from __future__ import annotations

import hashlib
from pathlib import Path

from indexer.embed import CachedEmbedder, HashingEmbedder
from indexer.index import Index
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from vault import Vault


def open_index(root: Path, embedder: HashingEmbedder | None = None) -> Index:
    return Index.open(Vault(root), embedder or HashingEmbedder())


def example_with_fresh(root: Path, notes: list[tuple]) -> Index:
    """The bundled example vault copied to `root` with `notes` ((id, collection, type, title, body, ...)) written five
    hours ago, indexed with the real model: fresh memories among older ones, as a user's vault holds them."""
    import shutil
    from datetime import datetime, timedelta, timezone

    from indexer.embed import make_embedder
    from tests.conftest import EXAMPLE_VAULT

    shutil.copytree(EXAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".memdir", "memdir.toml"))
    vault = Vault(root)
    now = datetime.now(timezone.utc)
    for memory_id, collection, kind, title, body, *_ in notes:
        front = {"id": memory_id, "collection": collection, "type": kind, "title": title,
                 "created_at": now - timedelta(hours=5)}
        vault.writer.create(f"{collection}/{memory_id}.md", front, body)
    return Index.open(Vault(root), make_embedder("all-MiniLM-L6-v2"))


def reader(root: Path) -> Index:
    """The vault's index as a reader opens it (Index(), no reconcile): what a cold open reads of the generation."""
    from indexer.generations import Layout

    return Index(Vault(root), HashingEmbedder(), Layout(root).current(), writable=False)  # type: ignore[arg-type]


def note(root: Path, path: str, memory_id: str, body: str, front: str = "", created: str = "2026-10-01") -> None:
    """A memory file with an id, a title, a creation time, more frontmatter lines (`front`) and a body."""
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(f"---\nid: {memory_id}\ntitle: {memory_id}\ncreated_at: {created}T12:00:00Z\n{front}---\n{body}\n")


def plain_notes(root: Path, count: int, body: str = "") -> None:
    """`count` minimal notes under notes/ (an id, a title, "body N" and `body`): a vault for builds in slices."""
    for n in range(count):
        file = root / "notes" / f"n{n}.md"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"---\nid: m-{n:08x}\ntitle: note {n}\n---\nbody {n}{body}\n")


def fresh_rebuild(root: Path) -> Index:
    """An index built from nothing but the files (in a scratch copy of the index folder)."""
    import shutil

    shutil.rmtree(root / ".memdir" / "index", ignore_errors=True)
    return open_index(root)


def rebuilt_state(root: Path, scratch: Path) -> dict:
    """`state` (vectors left out) of a rebuild from a copy of the vault's files, made in `scratch`."""
    import shutil

    copy = scratch / "rebuilt"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".memdir"))
    rebuilt = fresh_rebuild(copy)
    try:
        return {k: v for k, v in state(rebuilt).items() if k != "vectors"}
    finally:
        rebuilt.close()


def state(index: Index) -> dict:
    """Everything that must be equal between an incrementally updated index and a rebuild.

    Vectors are compared by content, keyword documents by every term they hold: a neighbour
    whose context changed but was not re-indexed keeps its ids and would pass an id check.
    """
    return {
        "memories": sorted((m.id, m.path, m.content_hash) for m in index.all_memories()),
        "chunks": sorted(index._chunk_owner.items()),
        "units": sorted(index.unit_owners()),
        "vectors": sorted((u, hashlib.sha256(index._vectors.vector(u).tobytes()).hexdigest()) for u in index._vectors.ids()),
        "keyword": sorted(index._keyword.postings()),
        "neighbours": sorted((i, getattr(index.previous_of(i), "id", None), getattr(index.next_of(i), "id", None))
                             for i in index.memory_ids()),
        "graph": index.links.to_edge_list(),
        "link_table": index.manifest.link_rows(),  # what a cold open's searches read of the graph (link_table.py)
        # what the lifecycle rules read without decoding a row (lifecycle_facts.py), and whether an open may read it
        "facts": (index.manifest.facts_complete(), index.manifest.fact_rows()),
        # the numbers a cold open reads of each row (open_columns.py), and whether an open may read them
        "open_columns": (index.manifest.open_columns_complete(), index.manifest.open_column_rows()),
        # each row's dedup digest, which the duplicates table's first making reads instead of every body
        "dedup": sorted(index.manifest.dedup_digests().items()),
        "problems": sorted((p.path, p.line, p.reason) for p in index.problems()),
    }


def top_ids(index: Index, query: str, **kwargs: object) -> list[str]:
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    return [hit.memory.id for hit in searcher.search(SearchRequest(query=query, **kwargs))]  # type: ignore[arg-type]


def counting(index: Index) -> CachedEmbedder:
    assert isinstance(index.embedder, CachedEmbedder)
    return index.embedder


def empty_real_model_index(tmp_path: Path) -> Index:
    """A new, empty vault indexed with the real all-MiniLM-L6-v2 model."""
    from indexer.embed import make_embedder

    root = tmp_path / "vault"
    root.mkdir()
    return Index.open(Vault(root), make_embedder("all-MiniLM-L6-v2"))


def default_curator(index: Index):  # -> Curator
    from indexer.curator import Curator
    from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

    return Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
