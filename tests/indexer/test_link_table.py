"""The generation keeps the links a search reads (link_table.py): a cold open answers superseded, successor and
neighbours from it without building the link graph, the table written sync by sync equals a rebuild's, and a
generation written before the table existed still opens and gets its table from its owner."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from indexer import index as index_module
from indexer.generations import Layout
from indexer.index import Index
from indexer.link_table import LinkTable
from indexer.manifest import LINKS_KEY
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings

from .helpers import note, open_index, reader, rebuilt_state, state


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Notes that link in a ring, a ghost link, a supersedes chain of three and a memory superseding itself."""
    folder = tmp_path / "vault"
    for n in range(4):
        note(folder, f"patterns/n{n}.md", f"m-n{n}", f"Note {n} on caching links [[n{(n + 1) % 4}]] and [[src/app.py]].")
    note(folder, "patterns/old.md", "m-old", "The old way to deploy.")
    note(folder, "patterns/mid.md", "m-mid", "A better way to deploy.", "supersedes: [m-old]\n", "2026-10-02")
    note(folder, "patterns/new.md", "m-new", "The way to deploy.", "supersedes: [\"[[mid]]\"]\n", "2026-10-03")
    note(folder, "patterns/self.md", "m-self", "Deploy notes that name themselves.", "supersedes: [m-self]\n")
    return folder


def builds(monkeypatch) -> list:
    """Every LinkGraph.build the index makes."""
    made: list = []
    real = index_module.LinkGraph.build
    monkeypatch.setattr(index_module.LinkGraph, "build", staticmethod(lambda memories: made.append(1) or real(memories)))
    return made


def assert_answers_as_the_graph(view: LinkTable, index: Index) -> None:
    graph = index.links
    assert view.superseded_ids() == graph.superseded_ids()
    for memory_id in [*index.memory_ids(), "m-unknown", "M-N1"]:
        assert view.successor(memory_id) == graph.successor(memory_id), memory_id
        assert view.neighbours(memory_id) == graph.neighbours(memory_id), memory_id


def test_a_cold_open_searches_from_the_stored_links_without_building_the_graph(root: Path, monkeypatch):
    open_index(root).close()
    made = builds(monkeypatch)
    index = reader(root)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    hits = searcher.search(SearchRequest(query="deploy caching"))
    assert made == []  # the search read the table
    assert isinstance(index.link_view, LinkTable)
    assert "m-old" not in [h.memory.id for h in hits] and "m-mid" not in [h.memory.id for h in hits]
    assert index.link_view.successor("m-old") == "m-new"
    assert_answers_as_the_graph(index.link_view, index)  # asking for the graph builds it once
    assert made == [1] and index.link_view is index.links
    index.close()


def test_a_search_from_the_table_returns_what_a_search_from_the_graph_returns(root: Path):
    note(root, "history/coffee.md", "m-coffee", "espresso espresso, see [[far]]")
    note(root, "history/far.md", "m-far", "nothing in common here")  # found only through the link
    open_index(root).close()
    index = reader(root)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256", score_threshold=0.0))
    queries = ["deploy", "caching links", "note 2", "the old way", "espresso"]
    from_table = [[(h.memory.id, h.final, h.channel, h.via, h.successor) for h in searcher.search(SearchRequest(query=q))]
                  for q in queries]
    index.links  # noqa: B018 - the graph is built; searches read it from now on
    from_graph = [[(h.memory.id, h.final, h.channel, h.via, h.successor) for h in searcher.search(SearchRequest(query=q))]
                  for q in queries]
    assert from_table == from_graph and any(hit[2] == "graph" for hits in from_table for hit in hits)
    index.close()


def test_the_table_written_sync_by_sync_equals_a_rebuilds(root: Path, tmp_path: Path):
    index = open_index(root)
    note(root, "patterns/newest.md", "m-newest", "Deploy now.", "supersedes: [m-new]\n", "2026-10-04")
    note(root, "patterns/app.md", "m-app", "The app file the ring links to.")  # the ghost names no memory yet
    (root / "patterns" / "n2.md").unlink()  # links to it become ghosts
    note(root, "patterns/mid.md", "M-MID", "A better way to deploy.", "supersedes: [m-old]\n", "2026-10-02")
    note(root, "patterns/n3.md", "m-n3", "Note 3 links nowhere now.")
    index.sync()
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path)  # with the link table
    assert index.manifest.link_rows() == index.links.link_rows()
    index.close()
    cold = reader(root)
    assert_answers_as_the_graph(cold.link_view, cold)  # type: ignore[arg-type]
    cold.close()


def test_a_generation_written_before_the_table_opens_and_its_owner_writes_the_whole_table(root: Path, tmp_path: Path,
                                                                                          monkeypatch):
    open_index(root).close()
    manifest = Layout(root).current() / "manifest.sqlite"  # type: ignore[operator]
    with sqlite3.connect(manifest) as db:  # as a generation of the previous schema has it
        db.execute("DROP TABLE links")
        db.execute("DELETE FROM meta WHERE key = ?", (LINKS_KEY,))
    made = builds(monkeypatch)
    old = reader(root)  # a reader builds the graph, as before
    assert made == [1] and old.link_view is old.links and old.links.successor("m-old") == "m-new"
    old.close()
    owner = open_index(root)  # its reconcile changes no file, and still writes the table
    assert owner.manifest.link_rows() == owner.links.link_rows() != []
    owner.close()
    made.clear()
    cold = reader(root)
    assert made == [] and cold.manifest.link_rows() == rebuilt_state(root, tmp_path)["link_table"]
    cold.close()


def test_link_rows_not_written_are_written_with_the_next_batch(root: Path, tmp_path: Path, monkeypatch):
    index = open_index(root)
    note(root, "patterns/newest.md", "m-newest", "Deploy now.", "supersedes: [m-new]\n", "2026-10-04")
    real = index.manifest.write
    monkeypatch.setattr(index.manifest, "write", lambda *a, **k: (_ for _ in ()).throw(OSError("disk gone")))
    with pytest.raises(OSError):
        index.sync()
    monkeypatch.setattr(index.manifest, "write", real)
    note(root, "patterns/n0.md", "m-n0", "Note 0 changed, links [[n1]].")
    index.sync(deep=True, force_paths=["patterns/newest.md"])
    assert index.manifest.link_rows() == index.links.link_rows()
    assert ("m-newest", "2026-10-04T12:00:00+00:00", (("m-new", "supersedes"),)) in index.manifest.link_rows()
    index.close()


def test_a_batch_written_by_a_memdir_that_does_not_know_the_table_makes_the_table_untrusted(root: Path, tmp_path: Path,
                                                                                           monkeypatch):
    index = open_index(root)
    index.close()
    note(root, "patterns/newest.md", "m-newest", "Deploy now.", "supersedes: [m-new]\n", "2026-10-04")
    index = open_index(root)
    manifest = index.manifest
    real = manifest.write
    monkeypatch.setattr(manifest, "write",  # an older memdir
                        lambda upserts, deleted, links=None, restated=None: real(upserts, deleted, None, restated))
    index.sync(["patterns/newest.md"], deep=True, force_paths=["patterns/newest.md"])
    (root / "patterns" / "mid.md").unlink()
    index.sync()
    index.close()
    made = builds(monkeypatch)
    cold = reader(root)
    assert made == [1] and cold.link_view.successor("m-old") is None  # from the graph, not the stale table
    cold.close()
    owner = open_index(root)  # its next batch writes the whole table again
    assert owner.manifest.links_complete()
    assert owner.manifest.link_rows() == rebuilt_state(root, tmp_path)["link_table"]
    owner.close()
