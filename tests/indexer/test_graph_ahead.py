"""The link graph of a reopened index (which answered from the generation's link table) is built from the manifest's
rows, decoding only the memories whose text may hold a link; a sync of changed files builds it, and the table of every
unit, before it takes the index lock, so searches go on meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer import graph as graph_module
from indexer import index as index_module
from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.conftest import memory_text, write
from tests.reliability.harness import new_vault
from vault import Vault

from .helpers import rebuilt_state, state

PLAIN = 40


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = new_vault(tmp_path / "vault")
    for n in range(PLAIN):
        write(folder, f"history/p{n:02}.md", memory_text(f"m-0000a0{n:02}", f"Plain {n}", f"nothing links from note {n}"))
    write(folder, "history/linker.md", memory_text("m-0000b001", "Linker", "see [[p03]] and [[history/p04]]"))
    write(folder, "history/newer.md", memory_text("m-0000b002", "Newer", "the newer rule",
                                                  extra="supersedes: [m-0000a005]\n"))
    write(folder, "history/needs.md", memory_text("m-0000b003", "Needs", "needs the plain one",
                                                  extra="depends_on: [m-0000a006]\n"))
    write(folder, "history/ghostly.md", memory_text("m-0000b004", "Ghostly", "points at [[not-written-yet]]"))
    return folder


def reopened(root: Path) -> Index:
    Index.open(Vault(root), HashingEmbedder()).close()
    return Index.open(Vault(root), HashingEmbedder())  # rows undecoded, the links read from the table


def test_the_graph_built_from_the_rows_decodes_only_the_linking_memories_and_equals_a_rebuilds(
        root: Path, tmp_path: Path):
    index = reopened(root)
    assert index._graph is None
    undecoded = index._entries._undecoded
    edges = index.links.to_edge_list()
    assert undecoded - index._entries._undecoded == 4  # the linker, the superseding, the depending and the ghostly
    fresh = Index.open(Vault(root), HashingEmbedder())
    try:
        assert edges == rebuilt_state(root, tmp_path / "rebuilt")["graph"]
        assert index.links.link_rows() == index.manifest.link_rows()
    finally:
        fresh.close()
        index.close()


def test_a_sync_of_a_changed_file_makes_the_graph_and_the_unit_table_without_the_index_lock(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    index = reopened(root)
    held: list[tuple[str, bool]] = []
    real_build = graph_module.LinkGraph.build.__func__  # type: ignore[attr-defined]
    real_units = index_module._row_unit_owners

    def build(cls, memories):  # type: ignore[no-untyped-def]
        held.append(("graph", index.lock._is_owned()))
        return real_build(cls, memories)

    def units(rows):  # type: ignore[no-untyped-def]
        held.append(("units", index.lock._is_owned()))
        return real_units(rows)

    monkeypatch.setattr(index_module.LinkGraph, "build", classmethod(build))
    monkeypatch.setattr(index_module, "_row_unit_owners", units)
    write(root, "history/p07.md", memory_text("m-0000a007", "Plain 7", "now it links to [[p08]]"))
    index.sync(["history/p07.md"])
    assert held == [("graph", False), ("units", False)]  # each made once, before the lock
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


def test_a_graph_made_ahead_is_not_put_in_place_once_a_memory_changed_after_it_began(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    index = reopened(root)
    real_build = graph_module.LinkGraph.build.__func__  # type: ignore[attr-defined]

    def build(cls, memories):  # type: ignore[no-untyped-def]
        made = real_build(cls, memories)
        with index.lock:  # as a sync running meanwhile would: a memory remembered again
            index._remember(index.memory("m-0000a009"))
        return made

    monkeypatch.setattr(index_module.LinkGraph, "build", classmethod(build))
    index._ahead_of_a_change()
    assert index._graph is None  # made from the memories before: left for the sync to make under the lock
    assert index._all_units is not None  # the open's rows did not change
    monkeypatch.undo()
    write(root, "history/p09.md", memory_text("m-0000a009", "Plain 9", "now linking [[p10]]"))
    index.sync(["history/p09.md"])
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


def test_the_first_read_of_the_graph_after_a_reopen_builds_it_without_the_index_lock(
        root: Path, monkeypatch: pytest.MonkeyPatch):
    # A supersedes link is checked for a cycle through the graph (session 19) before its write: the first one after a
    # reopen built the whole graph with the index lock held, every search waiting (about 4 CPU s at 100k, s17).
    index = reopened(root)
    held: list[bool] = []
    real_build = graph_module.LinkGraph.build.__func__  # type: ignore[attr-defined]

    def build(cls, memories):  # type: ignore[no-untyped-def]
        held.append(index.lock._is_owned())
        return real_build(cls, memories)

    monkeypatch.setattr(index_module.LinkGraph, "build", classmethod(build))
    assert index.links.supersedes("m-0000b002", "m-0000a005")
    assert held == [False] and index.links is index.links
    index.close()
