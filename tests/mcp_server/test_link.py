"""Linking two memories with a typed relation writes it into the source's frontmatter, where Obsidian and git see it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.cli.commands import cli
from mcp_server.service.memory_service import MemoryService
from vault import NotFoundError, ValidationError
from vault.errors import ConflictError

from ..conftest import memory_text, write
from mcp_server.service import operations as ops

pytestmark = pytest.mark.anyio


@pytest.fixture
def service(hashing_root: Path):
    write(hashing_root, "patterns/plan.md", memory_text("m-00000a01", "Import lock plan", "Lock imports per statement.",
                                                        collection="patterns"))
    write(hashing_root, "patterns/impl.md", memory_text("m-00000a02", "Import lock code", "pg_advisory_xact_lock in imports.",
                                                        collection="patterns"))
    app = App(hashing_root)
    yield MemoryService(app)
    app.close()


def test_a_link_lands_in_the_source_frontmatter_and_in_its_relations(service: MemoryService, hashing_root: Path):
    report = service.link(ops.Link(source="m-00000a02", target="m-00000a01", relation="depends_on"))
    assert report.changed and [(e["id"], e["relation"]) for e in report.outgoing] == [("m-00000a01", "depends_on")]
    assert "depends_on: [m-00000a01]" in (hashing_root / "patterns/impl.md").read_text()
    assert not service.link(ops.Link(source="m-00000a02", target="m-00000a01", relation="depends_on")).changed, "linking twice changes nothing"
    backlinks = service.relationships(ops.Relationships(memory_id="m-00000a01")).backlinks
    assert [(e["id"], e["relation"]) for e in backlinks] == [("m-00000a02", "depends_on")]


def test_a_supersedes_link_hides_the_older_memory_behind_its_successor(service: MemoryService):
    service.link(ops.Link(source="m-00000a02", target="m-00000a01", relation="supersedes"))
    assert "m-00000a01" not in [r.id for r in service.search(ops.Search(query="import lock")).results]
    assert service.relationships(ops.Relationships(memory_id="m-00000a01")).successor == "m-00000a02"


def test_a_supersedes_link_that_would_close_a_cycle_is_refused_also_from_two_tabs_at_once(service: MemoryService,
                                                                                          hashing_root: Path):
    # Two tabs of the web view deciding one inbox pair in opposite directions recorded both links: each memory was
    # superseded by the other, and both were hidden from every search and prompt.
    import threading

    write(hashing_root, "patterns/third.md", memory_text("m-00000a03", "Import lock notes", "Lock notes.",
                                                         collection="patterns"))
    service.app.index.sync(["patterns/third.md"])
    service.link(ops.Link(source="m-00000a02", target="m-00000a01", relation="supersedes"))
    service.link(ops.Link(source="m-00000a03", target="m-00000a02", relation="supersedes"))
    with pytest.raises(ConflictError, match="would make a cycle") as chained:
        service.link(ops.Link(source="m-00000a01", target="m-00000a03", relation="supersedes"))  # through the chain
    # m-00000a03 names only m-00000a02: the advice is to cut the chain, not to edit a supersedes that lacks the id
    assert "remove m-00000a01 from m-00000a03's supersedes" not in str(chained.value)
    assert "remove a supersedes link of that chain first (memdir links m-00000a03 shows it)" in str(chained.value)
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def tab(source: str, target: str) -> None:
        start.wait()
        try:
            service.link(ops.Link(source=source, target=target, relation="supersedes"))
            outcomes.append("recorded")
        except ConflictError:
            outcomes.append("refused")

    fresh = [("m-00000a04", "Deploy tag rule"), ("m-00000a05", "Deploy tag rule, newer")]
    for memory_id, title in fresh:
        write(hashing_root, f"patterns/{memory_id}.md", memory_text(memory_id, title, f"{title}.", collection="patterns"))
    service.app.index.sync([f"patterns/{memory_id}.md" for memory_id, _ in fresh])
    tabs = [threading.Thread(target=tab, args=pair) for pair in (("m-00000a04", "m-00000a05"), ("m-00000a05", "m-00000a04"))]
    for thread in tabs:
        thread.start()
    for thread in tabs:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["recorded", "refused"]
    assert len(set(service.app.index.link_view.superseded_ids()) & {"m-00000a04", "m-00000a05"}) == 1


@pytest.mark.parametrize("written", ["m-00000a02", "[[m-00000a02]]", "[[impl]]", "[[patterns/impl]]"])
def test_an_update_that_would_close_a_supersedes_cycle_is_refused(service: MemoryService, hashing_root: Path,
                                                                  written: str):
    # The update tool sets `supersedes` too (by id or [[link]]): setting it on the memory its successor supersedes
    # recorded the cycle, and both memories were hidden from every search and prompt (review of session 19).
    service.link(ops.Link(source="m-00000a02", target="m-00000a01", relation="supersedes"))
    with pytest.raises(ConflictError, match="would make a cycle"):
        service.update(ops.Update(memory_id="m-00000a01", fields={"supersedes": [written]}))
    assert "supersedes" not in (hashing_root / "patterns/plan.md").read_text()
    assert "m-00000a02" in [r.id for r in service.search(ops.Search(query="import lock")).results]


def test_an_update_of_supersedes_that_closes_no_cycle_is_written(service: MemoryService, hashing_root: Path):
    write(hashing_root, "patterns/third.md", memory_text("m-00000a03", "Import lock notes", "Lock notes.",
                                                         collection="patterns"))
    service.app.index.sync(["patterns/third.md"])
    service.link(ops.Link(source="m-00000a02", target="m-00000a01", relation="supersedes"))
    service.update(ops.Update(memory_id="m-00000a03", fields={"supersedes": ["[[impl]]", "m-0000dead"]}))
    assert service.relationships(ops.Relationships(memory_id="m-00000a01")).successor == "m-00000a03"
    service.update(ops.Update(memory_id="m-00000a01", fields={"supersedes": ["m-00000a01"], "title": "Plan"}))
    assert "m-00000a03" in [r.id for r in service.search(ops.Search(query="import lock")).results]


@pytest.mark.parametrize("source, target, relation, error, message", [
    ("m-00000a02", "m-0000dead", "depends_on", NotFoundError, "no memory with id 'm-0000dead' to link"),
    ("m-00000a02", "m-00000a02", "depends_on", ValidationError, "cannot be linked to itself"),
    ("m-00000a02", "m-00000a01", "likes", ValidationError,
     "argument `relation` should be 'supersedes', 'depends_on', 'contradicts' or 'derives_from' \\(got 'likes'\\)"),
])
def test_a_bad_link_is_refused_with_the_reason(service: MemoryService, source, target, relation, error, message):
    with pytest.raises(error, match=message):
        service.link(ops.Link(source=source, target=target, relation=relation))


async def test_the_link_memories_tool_and_the_cli_record_a_relation(service: MemoryService, hashing_root: Path):
    async with Client(tools.build(service)) as client:
        result = await client.call_tool("link_memories", {"source": "m-00000a02", "target": "m-00000a01",
                                                          "relation": "derives_from"})
        unknown = await client.call_tool("link_memories", {"source": "m-00000a02", "target": "m-0000dead"})
    assert not result.is_error and result.structured_content["outgoing"][0]["relation"] == "derives_from"
    assert unknown.is_error and "no memory with id 'm-0000dead'" in unknown.content[0].text
    service.app.close()
    printed = CliRunner().invoke(cli, ["link", "m-00000a01", "m-00000a02", "--as", "contradicts",
                                       "--vault", str(hashing_root)], catch_exceptions=False)
    assert printed.exit_code == 0 and "contradicts" in printed.output
    assert "contradicts: [m-00000a02]" in (hashing_root / "patterns/plan.md").read_text()
