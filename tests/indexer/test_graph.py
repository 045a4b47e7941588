"""The wikilink graph: resolution, ghosts, supersedes chains, queries, and incremental == rebuild."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.graph import Ambiguity, Edge, LinkGraph
from vault import Memory, Vault
from vault.parse import parse

EXAMPLE_VAULT = Path(__file__).resolve().parents[2] / ".memories-example"


def note(path: str, body: str = "", *, id: str | None = None, front: str = "") -> Memory:
    """A memory parsed from real file bytes; its id defaults to its path with dots, e.g. "a.note"."""
    memory_id = id or path.removesuffix(".md").replace("/", ".")
    text = f"---\nid: {memory_id}\ntitle: {path}\n{front}---\n{body}\n"
    return parse(text.encode(), path)


def targets(graph: LinkGraph, memory: Memory) -> list[str]:
    return [edge.target for edge in graph.outgoing(memory.id)]


def assert_same_graph(graph: LinkGraph, memories: list[Memory]) -> None:
    """The graph equals a rebuild from the same memories, in either order."""
    for order in (memories, memories[::-1]):
        rebuilt = LinkGraph.build(order)
        assert graph.to_edge_list() == rebuilt.to_edge_list()
        assert graph.to_node_list() == rebuilt.to_node_list()
        assert graph.ambiguous_links() == rebuilt.ambiguous_links()


@pytest.fixture(scope="module")
def example() -> tuple[LinkGraph, dict[str, Memory]]:
    """The example vault read in place (read only) and its graph, with memories by path."""
    memories = Vault(EXAMPLE_VAULT).scan().memories
    return LinkGraph.build(memories), {memory.path: memory for memory in memories}


# -- resolution ---------------------------------------------------------------------------


def test_a_link_resolves_by_the_file_stem():
    target, source = note("patterns/decimal-for-money.md"), note("history/fx.md", "Depends on [[decimal-for-money]].")
    assert targets(LinkGraph.build([target, source]), source) == [target.id]


def test_a_link_resolves_by_its_vault_relative_path():
    target, source = note("memory_bank/python-311-only.md"), note("x.md", "See [[memory_bank/python-311-only]].")
    assert targets(LinkGraph.build([target, source]), source) == [target.id]


def test_a_link_with_the_md_extension_resolves_like_one_without():
    target = note("patterns/decimal-for-money.md")
    source = note("x.md", "[[decimal-for-money.md]] and [[patterns/decimal-for-money.MD]]")
    assert targets(LinkGraph.build([target, source]), source) == [target.id, target.id]


def test_a_link_naming_a_memory_id_resolves_to_that_memory():
    target = note("patterns/locks.md", id="m-7f3a9c2e")
    source = note("x.md", "See [[m-7f3a9c2e]] and [[M-7F3A9C2E]].")
    assert targets(LinkGraph.build([target, source]), source) == ["m-7f3a9c2e", "m-7f3a9c2e"]


def test_resolution_ignores_case_in_paths_stems_and_ids():
    target = note("Memory_Bank/Python-311-Only.md")
    source = note("x.md", "[[python-311-ONLY]] [[memory_bank/PYTHON-311-only]] [[MEMORY_BANK.PYTHON-311-ONLY]]")
    assert targets(LinkGraph.build([target, source]), source) == [target.id] * 3


def test_relative_links_resolve_against_the_linking_memorys_folder():
    sibling, parent = note("a/b/sibling.md"), note("a/parent.md")
    source = note("a/b/source.md", "[[./sibling]] and [[../parent]] and [[./parent]]")
    graph = LinkGraph.build([sibling, parent, source])
    assert targets(graph, source) == [sibling.id, parent.id, "ghost:a/b/parent"]


def test_a_relative_link_climbing_out_of_the_vault_is_a_ghost():
    source = note("top.md", "[[../outside]]")
    assert targets(LinkGraph.build([note("outside.md"), source]), source) == ["ghost:../outside"]


def test_an_exact_path_wins_over_other_memories_with_the_same_stem_without_ambiguity():
    root, nested = note("note.md"), note("a/note.md")
    source = note("b/source.md", "[[note]] and [[a/note]]")
    graph = LinkGraph.build([root, nested, source])
    assert targets(graph, source) == [root.id, nested.id]
    assert graph.ambiguous_links() == []


def test_an_ambiguous_stem_prefers_the_linking_memorys_folder():
    here, there = note("b/note.md"), note("a/note.md")
    source = note("b/source.md", "[[note]]")
    assert targets(LinkGraph.build([here, there, source]), source) == [here.id]


def test_an_ambiguous_stem_elsewhere_prefers_the_shortest_path_then_alphabetical_order():
    short, long = note("zz/note.md"), note("aaa/note.md")
    source = note("source.md", "[[note]]")
    assert targets(LinkGraph.build([long, short, source]), source) == [short.id]
    first, second = note("bb/other.md"), note("aa/other.md")
    source = note("source.md", "[[other]]")
    assert targets(LinkGraph.build([first, second, source]), source) == [second.id]


def test_ambiguous_links_are_reported_with_the_choice_and_every_candidate():
    here, there = note("b/note.md"), note("a/note.md")
    source = note("b/source.md", "[[note]] twice: [[Note]]")
    graph = LinkGraph.build([here, there, source])
    assert graph.ambiguous_links() == [
        Ambiguity(source.id, "Note", here.id, (here.id, there.id)),
        Ambiguity(source.id, "note", here.id, (here.id, there.id)),
    ]


def test_a_same_note_link_creates_no_edge():
    source = note("x.md", "Jump to [[#Deploying]] or [[#^block]].")
    graph = LinkGraph.build([source])
    assert graph.outgoing(source.id) == []
    assert len(graph.to_node_list()) == 1


def test_edges_carry_relation_context_heading_block_embed_and_origin():
    target = note("runbook.md")
    source = note("x.md", "This depends on [[runbook#Locking|locks]]. Also ![[runbook#^lock-key]].")
    first, second = LinkGraph.build([target, source]).outgoing(source.id)
    assert (first.relation, first.heading, first.block, first.embed, first.origin) == (
        "depends_on", "Locking", None, False, "body",
    )
    assert "depends on [[runbook#Locking|locks]]" in first.context
    assert (second.relation, second.heading, second.block, second.embed) == ("embeds", None, "lock-key", True)
    assert first.written == "runbook" and first.start == source.body.index("[[runbook#Locking")


def test_two_links_between_the_same_memories_are_two_edges_and_nodes_carry_their_kind():
    target, source = note("t.md"), note("s.md", "[[t]] and again replaces [[t]]")
    graph = LinkGraph.build([target, source])
    assert sorted(e.relation for e in graph.outgoing(source.id) if e.target == target.id) == ["links_to", "supersedes"]
    assert dict(dict(graph.to_node_list())[target.id])["kind"] == "memory"


# -- ghosts -------------------------------------------------------------------------------


def test_targets_that_name_no_memory_become_ghost_nodes():
    source = note("x.md", "Fixed in [[src/app.py]]; see ![[diagram.png]] and [[Not Written Yet]].")
    graph = LinkGraph.build([source])
    assert targets(graph, source) == ["ghost:src/app.py", "ghost:diagram.png", "ghost:not written yet"]
    assert dict(dict(graph.to_node_list())["ghost:src/app.py"]) == {"kind": "ghost", "target": "src/app.py"}
    assert graph.ghosts() == {"diagram.png": [source.id], "not written yet": [source.id], "src/app.py": [source.id]}


def test_links_to_one_ghost_from_several_memories_share_its_node():
    one, two = note("one.md", "[[src/app.py]]"), note("two.md", "[[SRC/App.py]] [[./src/app.py]]")
    assert LinkGraph.build([one, two]).ghosts() == {"src/app.py": [one.id, two.id]}


def test_a_ghost_disappears_when_nothing_links_to_it_any_more():
    graph = LinkGraph.build([note("x.md", "[[src/app.py]]")])
    graph.upsert(note("x.md", "no links now"))
    assert graph.ghosts() == {}
    assert "ghost:src/app.py" not in dict(graph.to_node_list())


def test_linking_to_finds_the_memories_linking_to_a_file_by_its_path():
    one = note("one.md", "Parser: [[src/tidewater/ingest/parser.py]]")
    two = note("two.md", "Short form [[ingest/parser.py]]")
    other = note("three.md", "[[src/other/parser.py]]")
    graph = LinkGraph.build([one, two, other])
    assert [e.source for e in graph.linking_to("src/tidewater/ingest/parser.py")] == [one.id, two.id]
    assert [e.source for e in graph.linking_to("ghost:src/tidewater/ingest/parser.py")] == [one.id, two.id]
    assert graph.linking_to("nothing/links/here.py") == []


def test_linking_to_finds_the_links_to_a_memory_named_by_path_or_stem():
    target, source = note("patterns/locks.md"), note("x.md", "[[locks]]")
    graph = LinkGraph.build([target, source])
    assert [e.source for e in graph.linking_to("patterns/locks.md")] == [source.id]
    assert [e.source for e in graph.linking_to("LOCKS")] == [source.id]


def test_linking_to_a_bare_stem_covers_every_memory_with_that_stem():
    first, second = note("a/note.md"), note("b/note.md")
    near_first, near_second = note("a/s.md", "[[note]]"), note("b/s.md", "[[note]]")
    graph = LinkGraph.build([first, second, near_first, near_second])
    assert {(e.source, e.target) for e in graph.linking_to("note")} == {
        (near_first.id, first.id), (near_second.id, second.id),
    }
    assert [e.source for e in graph.linking_to("b/note.md")] == [near_second.id]


# -- frontmatter --------------------------------------------------------------------------


def test_frontmatter_supersedes_links_and_bare_ids_create_supersedes_edges():
    v1, v2 = note("v1.md", id="m-1234abcd"), note("v2.md")
    v3 = note("v3.md", front='supersedes: ["[[v2]]", m-1234abcd]\n')
    edges = LinkGraph.build([v1, v2, v3]).outgoing(v3.id)
    assert {(e.target, e.relation, e.origin, e.context) for e in edges} == {
        (v2.id, "supersedes", "frontmatter:supersedes", "supersedes: [[v2]]"),
        ("m-1234abcd", "supersedes", "frontmatter:supersedes", "supersedes: m-1234abcd"),
    }


def test_a_single_supersedes_value_works_like_a_list_of_one():
    v1, v2 = note("v1.md"), note("v2.md", front='supersedes: "[[v1]]"\n')
    assert LinkGraph.build([v1, v2]).successor(v1.id) == v2.id


def test_quoted_links_under_other_frontmatter_keys_link_to_their_targets():
    target = note("dana.md")
    source = note("x.md", "body", front='owner: "[[dana]]"\nsee_also:\n  - "[[src/app.py]]"\n  - plain\n')
    edges = LinkGraph.build([target, source]).outgoing(source.id)
    assert [(e.target, e.relation, e.origin, e.start) for e in edges] == [
        (target.id, "links_to", "frontmatter:owner", -1),
        ("ghost:src/app.py", "links_to", "frontmatter:see_also", -1),
    ]


def test_unquoted_links_in_frontmatter_are_not_links():
    # YAML reads [[dana]] as a nested list; Obsidian does not show it as a link either.
    source = note("x.md", front="owner: [[dana]]\n")
    assert LinkGraph.build([note("dana.md"), source]).outgoing(source.id) == []


def test_frontmatter_links_come_before_body_links_in_outgoing():
    source = note("x.md", "[[b]]", front='related: "[[a]]"\n')
    assert [e.written for e in LinkGraph.build([source]).outgoing(source.id)] == ["a", "b"]


# -- supersedes chains --------------------------------------------------------------------


def chain_of_three() -> list[Memory]:
    return [
        note("v1.md", front="created_at: 2026-01-01T00:00:00Z\n"),
        note("v2.md", "This replaces [[v1]].", front="created_at: 2026-02-01T00:00:00Z\n"),
        note("v3.md", front='created_at: 2026-03-01T00:00:00Z\nsupersedes: ["[[v2]]"]\n'),
    ]


def test_successor_follows_the_chain_to_the_newest_memory():
    v1, v2, v3 = chain_of_three()
    graph = LinkGraph.build([v1, v2, v3])
    assert graph.successor(v1.id) == v3.id
    assert graph.successor(v2.id) == v3.id
    assert graph.successor(v3.id) is None


def test_the_supersedes_chain_lists_every_member_newest_first_from_any_member():
    memories = chain_of_three()
    graph = LinkGraph.build(memories)
    newest_first = [m.id for m in reversed(memories)]
    assert all(graph.supersedes_chain(m.id) == newest_first for m in memories)


def test_a_memory_outside_any_chain_is_its_own_chain_and_has_no_successor():
    lone = note("lone.md", "Links to [[src/app.py]]")
    graph = LinkGraph.build([lone])
    assert graph.supersedes_chain(lone.id) == [lone.id]
    assert graph.successor(lone.id) is None


def test_a_supersedes_cycle_ends_instead_of_looping():
    a, b = note("a.md", "This supersedes [[b]]."), note("b.md", "This supersedes [[a]].")
    graph = LinkGraph.build([a, b])
    assert graph.successor(a.id) == b.id
    assert graph.successor(b.id) == a.id
    assert sorted(graph.supersedes_chain(a.id)) == sorted([a.id, b.id])


def test_a_memory_superseding_itself_is_ignored_by_the_chain():
    selfish = note("self.md", "This supersedes [[self]].")
    graph = LinkGraph.build([selfish])
    assert graph.successor(selfish.id) is None
    assert graph.superseded_ids() == set()


def test_when_two_memories_supersede_one_the_newest_is_its_successor():
    old = note("old.md", front="created_at: 2026-01-01T00:00:00Z\n")
    early = note("early.md", "Replaces [[old]].", front="created_at: 2026-02-01T00:00:00Z\n")
    late = note("late.md", "Replaces [[old]].", front="created_at: 2026-03-01T00:00:00Z\n")
    graph = LinkGraph.build([old, late, early])
    assert graph.successor(old.id) == late.id
    assert graph.supersedes_chain(old.id) == [late.id, early.id, old.id]


def test_superseded_ids_are_the_memories_something_supersedes():
    v1, v2, v3 = chain_of_three()
    ghostly = note("g.md", "This replaces [[never-written]].")
    assert LinkGraph.build([v1, v2, v3, ghostly]).superseded_ids() == {v1.id, v2.id}


# -- queries ------------------------------------------------------------------------------


def test_outgoing_and_backlinks_filter_by_relation():
    a, b = note("a.md"), note("b.md")
    source = note("s.md", "Depends on [[a]]. See [[b]] and [[a]].")
    graph = LinkGraph.build([a, b, source])
    assert [e.target for e in graph.outgoing(source.id, "depends_on")] == [a.id]
    assert [e.target for e in graph.outgoing(source.id, "links_to")] == [b.id, a.id]
    assert [e.relation for e in graph.backlinks(a.id)] == ["depends_on", "links_to"]
    assert graph.backlinks(a.id, "contradicts") == []


def test_queries_about_an_unknown_memory_are_empty():
    graph = LinkGraph.build([note("a.md")])
    assert graph.outgoing("m-unknown") == [] and graph.backlinks("m-unknown") == []
    assert graph.successor("m-unknown") is None and graph.supersedes_chain("m-unknown") == []
    assert graph.neighbours("m-unknown") == set() and graph.relationships("m-unknown") == {}
    assert "m-unknown" not in graph and "A" in graph


def test_neighbours_are_memories_one_link_away_either_way_without_ghosts_or_itself():
    a, b, c = note("a.md", "[[b]] [[src/x.py]] [[a]]"), note("b.md"), note("c.md", "requires [[a]]")
    assert LinkGraph.build([a, b, c]).neighbours(a.id) == {b.id, c.id}


def test_relationships_group_links_out_and_in_by_relation():
    a = note("a.md", "This contradicts [[b]]. See [[src/x.py]].")
    b = note("b.md", "Depends on [[a]].")
    result = LinkGraph.build([a, b]).relationships(a.id)
    assert sorted(result) == ["contradicts", "depends_on", "links_to"]
    assert [e.target for e in result["contradicts"]["outgoing"]] == [b.id]
    assert [e.source for e in result["depends_on"]["incoming"]] == [b.id]
    assert result["links_to"]["incoming"] == []
    assert result["contradicts"]["outgoing"][0].as_dict()["relation"] == "contradicts"


def test_the_edge_list_is_sorted_and_made_of_edges():
    graph = LinkGraph.build([note("b.md", "[[a]] [[z]]"), note("a.md", "[[b]]")])
    edges = graph.to_edge_list()
    assert all(isinstance(e, Edge) for e in edges)
    assert [(e.source, e.target) for e in edges] == [("a", "b"), ("b", "a"), ("b", "ghost:z")]


# -- incremental updates ------------------------------------------------------------------


def test_a_ghost_link_resolves_when_its_target_memory_appears():
    source = note("s.md", "See [[later]].")
    graph = LinkGraph.build([source])
    later = note("notes/later.md")
    graph.upsert(later)
    assert targets(graph, source) == [later.id]
    assert graph.ghosts() == {}
    assert_same_graph(graph, [source, later])


def test_links_to_a_removed_memory_become_ghosts():
    target, source = note("t.md"), note("s.md", "This replaces [[t]].")
    graph = LinkGraph.build([target, source])
    assert graph.remove(target.id) is True
    assert targets(graph, source) == ["ghost:t"]
    assert graph.superseded_ids() == set()
    assert_same_graph(graph, [source])


def test_renaming_a_memory_moves_the_links_that_follow_its_name():
    old = note("a/old-name.md", id="m-1")
    by_old, by_new, by_id = note("x.md", "[[old-name]]"), note("y.md", "[[new-name]]"), note("z.md", "[[m-1]]")
    graph = LinkGraph.build([old, by_old, by_new, by_id])
    renamed = note("b/new-name.md", id="m-1")
    graph.upsert(renamed)
    assert targets(graph, by_old) == ["ghost:old-name"]
    assert targets(graph, by_new) == ["m-1"]
    assert targets(graph, by_id) == ["m-1"]
    assert dict(dict(graph.to_node_list())["m-1"])["path"] == "b/new-name.md"
    assert_same_graph(graph, [renamed, by_old, by_new, by_id])


def test_a_new_memory_can_make_a_link_ambiguous_and_its_removal_clears_that():
    there, source = note("a/note.md"), note("b/source.md", "[[note]]")
    graph = LinkGraph.build([there, source])
    here = note("b/note.md")
    graph.upsert(here)
    assert targets(graph, source) == [here.id]
    assert [a.chosen for a in graph.ambiguous_links()] == [here.id]
    graph.remove(here.id)
    assert targets(graph, source) == [there.id]
    assert graph.ambiguous_links() == []


def test_editing_a_memory_without_moving_it_resolves_only_its_own_links(monkeypatch: pytest.MonkeyPatch):
    hub = note("hub.md", "[[a]]")
    spokes = [note(f"s{i}.md", "[[hub]]") for i in range(20)]
    graph = LinkGraph.build([hub, note("a.md"), *spokes])
    resolved: list[str] = []
    original = LinkGraph._resolve

    def spy(self: LinkGraph, key: str, fresh: bool = False) -> None:
        resolved.append(key)
        original(self, key, fresh)

    monkeypatch.setattr(LinkGraph, "_resolve", spy)
    graph.upsert(note("hub.md", "now [[b]] instead"))
    assert resolved == ["hub"]
    graph.upsert(note("new.md", "[[hub]]"))
    assert resolved == ["hub", "new"]  # a name nobody asked for re-resolves nothing else


def test_removing_an_unknown_memory_changes_nothing():
    graph = LinkGraph.build([note("a.md", "[[b]]")])
    before = graph.to_edge_list()
    assert graph.remove("m-unknown") is False
    assert graph.to_edge_list() == before


def test_changing_only_the_case_of_an_id_replaces_the_node():
    source, target = note("s.md", "[[t]]"), note("t.md", id="m-abc")
    graph = LinkGraph.build([source, target])
    recased = note("t.md", id="M-ABC")
    graph.upsert(recased)
    assert targets(graph, source) == ["M-ABC"]
    assert "m-abc" not in dict(graph.to_node_list())
    assert_same_graph(graph, [source, recased])


IDS = ["m-a", "m-b", "m-c", "m-d", "m-e"]
PATHS = ["note.md", "a/note.md", "b/note.md", "a/other.md", "b/Other.md", "a/sub/note.md", "third.md"]
LINK_TARGETS = [
    "note", "note.md", "a/note", "A/Note", "other", "./note", "../note", "sub/note", "./sub/note",
    "third", "m-a", "M-C", "missing", "src/app.py", "#Heading",
]
PHRASES = ["See", "This replaces", "Depends on", "It contradicts", "!"]
links = st.lists(st.tuples(st.sampled_from(PHRASES), st.sampled_from(LINK_TARGETS)), max_size=4)
memories = st.builds(
    lambda memory_id, path, body_links, supersedes: note(
        path,
        " ".join(f"{p} [[{t}]]." if p != "!" else f"![[{t}]]" for p, t in body_links),
        id=memory_id,
        front=f"supersedes: [{', '.join(supersedes)}]\n" if supersedes else "",
    ),
    st.sampled_from(IDS),
    st.sampled_from(PATHS),
    links,
    st.lists(st.sampled_from(['"[[note]]"', '"[[a/other]]"', "m-b", "m-e", '"[[missing]]"']), max_size=2),
)
operations = st.lists(st.one_of(memories, st.sampled_from(IDS)), min_size=1, max_size=20)


@settings(max_examples=120, deadline=None)
@given(operations)
def test_any_sequence_of_upserts_and_removes_gives_the_graph_a_rebuild_gives(steps: list[Memory | str]):
    for graph, current in applied(steps):
        assert_same_graph(graph, current)


def applied(steps: list[Memory | str]) -> Iterator[tuple[LinkGraph, list[Memory]]]:
    """The graph after each step (an upsert, or the remove of an id) and the memories it then holds."""
    graph = LinkGraph()
    current: dict[str, Memory] = {}
    for step in steps:
        if isinstance(step, str):
            graph.remove(step)
            current.pop(step, None)
        else:
            graph.upsert(step)
            current[step.id] = step
        yield graph, list(current.values())


# -- the example vault --------------------------------------------------------------------


def test_the_example_vault_supersedes_chain_runs_from_v1_to_v3(example):
    graph, by_path = example
    v1, v2, v3 = (by_path[f"patterns/job-locking-v{n}-{name}.md"] for n, name in (
        (1, "redis-setnx"), (2, "redis-lock-extend"), (3, "postgres-advisory-locks"),
    ))
    assert graph.successor(v1.id) == v3.id
    assert graph.successor(v2.id) == v3.id
    assert graph.supersedes_chain(v1.id) == [v3.id, v2.id, v1.id]
    assert graph.superseded_ids() == {v1.id, v2.id}
    replaces = graph.outgoing(v2.id, "supersedes")
    assert [(e.target, e.origin) for e in replaces] == [(v1.id, "body")]
    assert "replaces [[job-locking-v1-redis-setnx]]" in replaces[0].context
    assert {(e.target, e.origin) for e in graph.outgoing(v3.id, "supersedes")} == {
        (v2.id, "frontmatter:supersedes"), (v2.id, "body"),
    }


def test_the_example_vault_has_a_contradicts_edge_between_the_merge_preferences(example):
    graph, by_path = example
    rebase = by_path["history/keep-migration-commits-unsquashed.md"]
    squash = by_path["memory_bank/prefer-squash-merges.md"]
    assert [e.target for e in graph.outgoing(rebase.id, "contradicts")] == [squash.id]
    assert [e.source for e in graph.relationships(squash.id)["contradicts"]["incoming"]] == [rebase.id]


def test_the_example_vault_ghosts_are_project_files_and_the_missing_diagram(example):
    graph, by_path = example
    ghosts = graph.ghosts()
    parser_links = {by_path[p].id for p in (
        "patterns/timezone-bug-statement-dates.md", "history/ofx-cp1252-encoding-fix.md",
        "memory_bank/statement-file-size-limit.md", "memory_bank/tidewater-project-context.md",
    )}
    assert set(ghosts["src/tidewater/ingest/parser.py"]) == parser_links
    assert {e.source for e in graph.linking_to("src/tidewater/ingest/parser.py")} == parser_links
    diagram = graph.linking_to("architecture-diagram.png")
    assert {(e.relation, e.embed) for e in diagram} == {("embeds", True)}
    assert {e.source for e in diagram} == {
        by_path["memory_bank/tidewater-project-context.md"].id, by_path["books/tidewater-operations-runbook.md"].id,
    }
    assert {"fly.toml", "pyproject.toml", "docs/runbook", "src/tidewater/ledger/queries.py"} <= set(ghosts)
    # Every other link in the example vault names one of its memories.
    assert all("/" in name or "." in name for name in ghosts)


def test_every_link_form_in_the_example_vault_resolves_to_its_memory(example):
    graph, by_path = example
    style = by_path["memory_bank/code-style-preferences.md"]
    assert set(targets(graph, style)) >= {
        by_path["memory_bank/python-311-only.md"].id,  # [[memory_bank/python-311-only]]
        by_path["patterns/decimal-for-money.md"].id,  # [[decimal-for-money.md]]
    }
    v3 = by_path["patterns/job-locking-v3-postgres-advisory-locks.md"]
    schema = by_path["books/ledger-schema-reference.md"]
    constraints = [e for e in graph.outgoing(v3.id) if e.target == schema.id]
    assert [(e.heading, e.relation) for e in constraints] == [("Constraints and indexes", "depends_on")]
    block = [e for e in graph.outgoing(schema.id) if e.block]
    assert [(e.target, e.block) for e in block] == [(by_path["patterns/timezone-bug-statement-dates.md"].id, "tz-rule")]
    runbook = by_path["books/tidewater-operations-runbook.md"]
    assert runbook.id not in {e.target for e in graph.outgoing(runbook.id)}  # [[#Deploying]] makes no edge
    # Files without an id and without frontmatter are linked like any other memory.
    for path in (
        "patterns/dependency-bump-checklist.md",
        "memory_bank/ledger-glossary.md",
        "books/postgres-cheatsheet.md",
    ):
        assert graph.backlinks(by_path[path].id), path
    assert graph.ambiguous_links() == []


def test_the_example_vault_graph_built_one_memory_at_a_time_equals_the_rebuild(example):
    _, by_path = example
    graph = LinkGraph()
    for memory in sorted(by_path.values(), key=lambda m: m.path, reverse=True):
        graph.upsert(memory)
    assert_same_graph(graph, list(by_path.values()))


# -- speed --------------------------------------------------------------------------------


def synthetic_memories(count: int) -> list[Memory]:
    """Memories of about 100 words and two links each, made directly (parsing is not measured)."""
    words = "the ledger import lock retry statement money check balance entry account worker".split()
    memories = []
    for i in range(count):
        prose = [" ".join(words[(i + j + k) % len(words)] for k in range(11)).capitalize() + "." for j in range(8)]
        prose[2] = f"This depends on [[note-{(i * 7) % count}]] and `code`."
        prose[5] = f"See [[folder{i % 20}/note-{(i * 13) % count}]] for more."
        memories.append(
            Memory(id=f"m-{i:08x}", path=f"folder{i % 20}/note-{i}.md", collection="patterns",
                   type="learning", title=f"note {i}", body=" ".join(prose))
        )
    return memories


@pytest.mark.slow
def test_a_graph_of_ten_thousand_memories_holds_every_link_and_an_upsert_changes_nothing_else():
    """Its build time is a benchmark figure (bench/speed.py builds it with every index); a timed assert here
    failed on a loaded machine (2.02 s against 2.0) without anything being wrong."""
    memories = synthetic_memories(10_000)
    graph = LinkGraph.build(memories)
    assert len(graph.to_edge_list()) == 20_000
    edges = graph.to_edge_list()
    for memory in memories[:100]:
        graph.upsert(memory)
    assert graph.to_edge_list() == edges


def test_relation_keys_in_frontmatter_type_their_ids_and_links():
    plan = note("plan.md", id="m-00000001")
    research = note("research.md", id="m-00000002")
    old = note("old.md", id="m-00000003")
    impl = note("impl.md", id="m-00000004", front='depends_on: [m-00000001, "[[research]]"]\ncontradicts: m-00000003\n'
                                                 "derives_from: [[memory:m-00000002]]\n")
    graph = LinkGraph.build([plan, research, old, impl])
    typed = {(e.target, e.relation) for e in graph.outgoing(impl.id)}
    assert typed == {("m-00000001", "depends_on"), ("m-00000002", "depends_on"), ("m-00000003", "contradicts"),
                     ("m-00000002", "derives_from")}
    assert graph.successor(old.id) is None, "contradicting is not superseding"
