"""Every write path, every field: a shared file never receives a private memory's text (one shown in this
session) nor its id. The tool and command lists come from the registry and the click group, so a new
write path without a case here fails the first tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.cli.commands import cli
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service.memory_service import MemoryService

from ..conftest import memory_text, write
from mcp_server.service import operations as ops

pytestmark = pytest.mark.anyio
PRIVATE_TEXT = "Dana is relocating to Berlin in December 2026 and will hand over tidewater to Priya Raman."
PRIVATE_TITLE = "Dana relocation"
SHARED, OTHER = "m-5ea0c201", "m-5ea0c202"
PID = "<private id>"  # replaced by the private memory's id in each case

# tool -> cases: (arguments, the field the refusal must name). A refused write changes no file.
REFUSED: dict[str, list[tuple[dict[str, Any], str]]] = {
    "update_memory": [
        ({"id": SHARED, "content": "Dana is relocating to Berlin soon."}, "content"),
        ({"id": SHARED, "fields": {"title": "Dana Okafor (moving to Berlin)"}}, "title"),
        ({"id": SHARED, "fields": {"tags": ["berlin-move"]}}, "tags"),
        ({"id": SHARED, "fields": {"aliases": ["Berlin handover"]}}, "aliases"),
        ({"id": SHARED, "fields": {"summary": "relocating to Berlin in December"}}, "summary"),
        ({"id": SHARED, "fields": {"handover": {"to": "Priya Raman"}}}, "handover.to"),
        ({"id": SHARED, "fields": {"berlin_move": True}}, "the key berlin_move"),
        ({"id": SHARED, "fields": {"supersedes": [PID]}}, "supersedes"),
        ({"id": SHARED, "fields": {"depends_on": [PRIVATE_TITLE]}}, "depends_on"),
        ({"id": SHARED, "content": f"Context: [[{PID}]]"}, "content"),
    ],
    "append_memory": [({"id": SHARED, "content": "From December Dana works from Berlin."}, "appended text"),
                      ({"id": SHARED, "content": f"See {PID}."}, "appended text")],
    "merge_memories": [
        ({"ids": [SHARED, OTHER], "title": "Handover before Berlin", "content": "Reviews rotate weekly."}, "title"),
        ({"ids": [SHARED, OTHER], "title": "Handover", "content": "Priya Raman takes tidewater."}, "merged text"),
    ],
    "link_memories": [({"source": SHARED, "target": PID, "relation": r}, r)
                      for r in ("depends_on", "supersedes", "contradicts", "derives_from")],
    "ingest_document": [({"path": "handbook.md", "title": "Berlin handbook"}, "title"),
                        ({"path": "handbook.md", "tags": ["tidewater-handover", "priya"]}, "tags")],
}
# tool -> cases: arguments. A new memory that would carry a private memory is stored in the user vault.
KEPT_PRIVATE: dict[str, list[dict[str, Any]]] = {
    "add_to_memory_bank": [{"content": "Plan the handover to Priya Raman."},
                           {"content": "Plan the handover.", "title": "Handover before Berlin"},
                           {"content": "Plan the handover.", "tags": ["berlin"]},
                           {"content": f"Plan the handover, see [[{PID}]]."}],
    "record_response": [{"key_takeaway": "Dana is relocating to Berlin in December."},
                        {"key_takeaway": f"The handover follows {PID}."}],
}
# Write tools that store no text or reference the caller chose, with why.
NO_CALLER_TEXT = {
    "delete_memory": "moves a file to .trash/",
    "verify_memory": "writes anchors of cited project files",
    "score_memories": "writes counters and outcomes",
}
# Parameters that name the memory written to (not stored into it) or a project file (its text is the project's).
NOT_STORED = {"id", "ids", "source", "path", "relation", "allow_secret", "privacy", "type", "importance",
              "confidence", "always_inject", "initial_score"}


@pytest.fixture
def service(hashing_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_USER_VAULT", str(tmp_path / "user-vault"))
    write(hashing_root, "patterns/handover.md", memory_text(
        SHARED, "Team handover notes", "Who covers which service during holidays.", collection="patterns"))
    write(hashing_root, "patterns/review-rota.md", memory_text(
        OTHER, "Review rota", "Reviews rotate weekly between the backend developers.", collection="patterns"))
    (hashing_root.parent / "handbook.md").write_text("# Handbook\n\nHow the team ships.\n")
    app = App(hashing_root)
    yield MemoryService(app)
    app.close()


def add_private(service: MemoryService) -> str:
    return service.add(ops.Add(content=PRIVATE_TEXT, title=PRIVATE_TITLE, type="fact", privacy="private")).memory.id


def with_id(value: Any, private_id: str) -> Any:
    if isinstance(value, str):
        return value.replace(PID, private_id)
    if isinstance(value, list):
        return [with_id(v, private_id) for v in value]
    if isinstance(value, dict):
        return {k: with_id(v, private_id) for k, v in value.items()}
    return value


def project_files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(errors="replace") for p in root.rglob("*.md")}


async def write_tools(service: MemoryService) -> dict[str, Any]:
    async with Client(tools.build(service)) as client:
        return {t.name: t for t in (await client.list_tools()).tools if not t.annotations.read_only_hint}


async def test_every_write_tool_has_privacy_cases_for_every_field_it_stores(service):
    listed = await write_tools(service)
    assert set(listed) == set(REFUSED) | set(KEPT_PRIVATE) | set(NO_CALLER_TEXT)
    for name, tool in listed.items():
        if name in NO_CALLER_TEXT:
            continue
        stored = set(tool.input_schema["properties"]) - NOT_STORED
        covered = {key for args in [a for a, _ in REFUSED.get(name, [])] + KEPT_PRIVATE.get(name, []) for key in args
                   if args[key] not in ([], None)}
        assert stored <= covered, (name, stored - covered)


def test_every_cli_command_is_classified_as_reading_guarded_or_storing_no_caller_text():
    # They call the same service operations as the tools (ui: its inbox's merge, supersede and verify forms; hook: its
    # Stop's capture, kept private when it repeats a private memory, service/capture.py).
    guarded = {"add", "link", "ingest", "merge", "ui", "hook"}
    no_caller_text = {"init", "merge-driver", "reindex", "score", "gc", "delete", "verify", "review", "restore",
                      "serve", "stop", "mcp"}
    reading = {"show", "list", "doctor", "search", "log", "links", "stats", "books", "suggest-merges", "status"}
    assert set(cli.commands) == guarded | no_caller_text | reading


@pytest.mark.parametrize("tool,args,field", [(t, a, f) for t, cases in REFUSED.items() for a, f in cases])
async def test_a_write_into_a_shared_file_carrying_a_private_memory_is_refused_naming_the_field(
        service, hashing_root, tool, args, field):
    private_id = add_private(service)
    before = project_files(hashing_root)
    async with Client(tools.build(service)) as client:
        await client.call_tool("search_memory", {"id": private_id})  # shown in this session
        result = await client.call_tool(tool, with_id(args, private_id))
    message = result.content[0].text
    assert result.is_error, message
    assert f"{field} " in message and "private memory" in message and "privacy=private" in message
    assert project_files(hashing_root) == before


@pytest.mark.parametrize("tool,args", [(t, a) for t, cases in KEPT_PRIVATE.items() for a in cases])
async def test_a_new_memory_carrying_a_private_memory_is_stored_privately(service, hashing_root, tool, args):
    private_id = add_private(service)
    before = project_files(hashing_root)
    async with Client(tools.build(service)) as client:
        await client.call_tool("search_memory", {"id": private_id})
        result = await client.call_tool(tool, with_id(args, private_id))
    memory = result.structured_content.get("memory", result.structured_content)
    assert memory["source"] == "user" and "private memory" in memory["kept_private"]
    assert project_files(hashing_root) == before


async def test_the_same_writes_without_private_text_go_to_the_shared_files(service, hashing_root):
    add_private(service)
    async with Client(tools.build(service)) as client:
        for tool, args in [("update_memory", {"id": SHARED, "fields": {"tags": ["handover"], "summary": "who covers"}}),
                           ("append_memory", {"id": SHARED, "content": "Tom covers billing in December."}),
                           ("link_memories", {"source": SHARED, "target": OTHER}),
                           ("add_to_memory_bank", {"content": "Reviews rotate weekly.", "tags": ["review"]})]:
            result = await client.call_tool(tool, args)
            assert not result.is_error, result.content[0].text
    assert "Tom covers billing" in project_files(hashing_root)["patterns/handover.md"]


def test_a_private_target_is_refused_even_when_not_shown_and_a_private_source_may_link_a_shared_one(service):
    private_id = add_private(service)
    with pytest.raises(Exception, match="depends_on names private memory"):
        service.link(ops.Link(source=SHARED, target=private_id))
    assert service.link(ops.Link(source=private_id, target=SHARED)).changed is True


def test_an_exchange_naming_a_private_memory_is_captured_privately(service, hashing_root):
    private_id = add_private(service)
    handler = HookHandler(service)
    handler.prompt({"session_id": "t", "prompt": "what does the handover depend on?"})
    stored = handler.stop({"session_id": "t", "last_assistant_message": f"It depends on [[{private_id}]]."})
    assert service.find(stored["stored"]).source == "user"
    assert private_id not in "".join(project_files(hashing_root).values())


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_the_cli_write_commands_keep_private_ids_out_of_shared_files(service, hashing_root):
    private_id = add_private(service)
    service.app.close()  # the commands open the vault themselves
    vault = ["--vault", str(hashing_root)]
    before = project_files(hashing_root)
    linked = run("link", SHARED, private_id, *vault)
    assert linked.exit_code != 0 and "depends_on names private memory" in linked.output
    merged = run("merge", SHARED, OTHER, "--into", f"Handover ({private_id})", *vault)
    assert merged.exit_code != 0 and "title names private memory" in merged.output
    ingested = run("ingest", str(hashing_root.parent / "handbook.md"), "--title", PRIVATE_TITLE, *vault)
    assert ingested.exit_code != 0 and "title names private memory" in ingested.output
    assert project_files(hashing_root) == before
    added = run("add", f"The handover waits on {private_id}.", *vault)
    assert added.exit_code == 0 and "stored as a private memory" in added.stderr
    assert project_files(hashing_root) == before
