"""The link graph's own adjacency answers every query as the edge and node lists say, after any sequence of changes.

The graph was a networkx MultiDiGraph; it is now two small maps (graph.py). These tests passed against the networkx
version before the change and pass after it: each query is checked against an answer worked out here from nothing
but `to_edge_list()` and `to_node_list()`, and the three a search reads against the generation's link table, which
answers them from the rows alone (link_table.py).
"""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings

from indexer.graph import GHOST, LinkGraph
from indexer.link_table import LinkTable
from indexer.links import SUPERSEDES
from vault import Memory
from vault.ids import identity_key

from .test_graph import IDS, applied, assert_same_graph, note, operations

RELATIONS = [None, "links_to", "supersedes", "depends_on", "contradicts", "embeds"]


def assert_queries_follow_the_lists(graph: LinkGraph, asked: list[str]) -> None:
    edges = graph.to_edge_list()
    nodes = dict(graph.to_node_list())
    memories = {node for node, data in nodes.items() if dict(data)["kind"] == "memory"}
    ghosts = {node for node, data in nodes.items() if dict(data)["kind"] == "ghost"}
    # every edge joins two nodes of the list, and every ghost is some edge's target
    assert {e.source for e in edges} <= memories and {e.target for e in edges} <= memories | ghosts
    assert ghosts == {e.target for e in edges if e.target.startswith(GHOST)}
    assert all(dict(nodes[g]) == {"kind": "ghost", "target": g.removeprefix(GHOST)} for g in ghosts)
    assert graph.ghosts() == {
        g.removeprefix(GHOST): sorted({e.source for e in edges if e.target == g}) for g in sorted(ghosts)
    }
    assert graph.superseded_ids() == {
        e.target for e in edges if e.relation == SUPERSEDES and e.source != e.target and e.target in memories
    }
    rows = graph.link_rows()
    assert rows == sorted(
        (m, dict(nodes[m])["created"], tuple(sorted({(e.target, e.relation) for e in edges
                                                      if e.source == m and e.target in memories})))
        for m in memories if any(e.source == m and e.target in memories for e in edges)
    )
    table = LinkTable(rows)
    for memory_id in asked:
        node = next((m for m in memories if identity_key(m) == identity_key(memory_id)), None)  # ids ignore case
        assert (memory_id in graph) == (node is not None)
        for relation in RELATIONS:
            assert graph.outgoing(memory_id, relation) == [
                e for e in edges if e.source == node and relation in (None, e.relation)
            ]
            assert graph.backlinks(memory_id, relation) == [
                e for e in edges if e.target == node and relation in (None, e.relation)
            ]
        near = {e.target for e in edges if e.source == node} | {e.source for e in edges if e.target == node}
        assert graph.neighbours(memory_id) == {n for n in near if n != node and n in memories}
        assert graph.neighbours(memory_id) == table.neighbours(memory_id)
        assert graph.successor(memory_id) == table.successor(memory_id)
        chain = graph.supersedes_chain(memory_id)
        assert len(chain) == len(set(chain)) and set(chain) == family(edges, memories, node)
        if graph.successor(memory_id) is not None:
            assert graph.successor(memory_id) in chain
    assert graph.superseded_ids() == table.superseded_ids()


def family(edges: list, memories: set[str], node: str | None) -> set[str]:
    """The memories joined to `node` by supersedes links between two memories, either way (none if unknown)."""
    if node is None:
        return set()
    pairs = [(e.source, e.target) for e in edges if e.relation == SUPERSEDES and e.target in memories]
    found, grew = {node}, True
    while grew:
        joined = {b for a, b in pairs if a in found} | {a for a, b in pairs if b in found}
        grew = not joined <= found
        found |= joined
    return found


@settings(max_examples=80, deadline=None)
@given(operations)
def test_every_query_agrees_with_the_edge_list_after_any_upserts_and_removes(steps: list[Memory | str]):
    for graph, current in applied(steps):
        assert_queries_follow_the_lists(graph, [*IDS, "m-unknown", "M-A"])
        assert_same_graph(graph, current)


def test_a_memory_removed_takes_the_links_into_it_until_its_askers_resolve_again():
    hub, spoke = note("hub.md", id="m-hub"), note("spoke.md", "Depends on [[hub]]; see [[src/app.py]].", id="m-spoke")
    graph = LinkGraph.build([hub, spoke])
    graph.remove("m-hub")
    assert [e.target for e in graph.outgoing("m-spoke")] == ["ghost:hub", "ghost:src/app.py"]
    assert graph.backlinks("m-hub") == [] and "m-hub" not in graph
    assert sorted(graph.ghosts()) == ["hub", "src/app.py"]
    graph.upsert(hub)
    assert [e.target for e in graph.outgoing("m-spoke")] == ["m-hub", "ghost:src/app.py"]
    assert sorted(graph.ghosts()) == ["src/app.py"]
    assert_queries_follow_the_lists(graph, ["m-hub", "m-spoke"])


def test_two_links_to_one_target_are_two_edges_and_leave_together():
    target = note("t.md", id="m-t")
    source = note("s.md", "See [[t]].\n\nThis replaces [[t]].\n\nSee [[t]] again.", id="m-s")
    graph = LinkGraph.build([target, source])
    assert [e.relation for e in graph.backlinks("m-t")] == ["links_to", "supersedes", "links_to"]
    assert graph.link_row("m-s") == ("m-s", "", (("m-t", "links_to"), ("m-t", "supersedes")))
    graph.upsert(note("s.md", "nothing now", id="m-s"))
    assert graph.backlinks("m-t") == [] and graph.link_row("m-s") is None
    assert_queries_follow_the_lists(graph, ["m-t", "m-s"])


def test_the_link_graph_imports_no_graph_library():
    """networkx was 12.8 MB of a server's resident memory and 314 modules, for a dozen dict operations."""
    code = "import sys, indexer.index, indexer.graph; print('networkx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
