"""The server's read paths (search, the prompt hook's KNOWN CONTEXT) leave out memories the lifecycle removes."""

from __future__ import annotations

from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service import operations as ops

STALE_WORKING = "m-3c8e1b75"  # working/next-session-todo.md: days old, never promoted


def test_a_working_memory_waiting_for_removal_is_not_searched_or_injected_but_shown_with_all(service):
    query = "fly status tidewater-staging count beat machines scale"
    assert STALE_WORKING not in [r.id for r in service.search(ops.Search(query=query)).results]
    assert STALE_WORKING in [r.id for r in service.search(ops.Search(query=query, include_superseded=True)).results]
    output = HookHandler(service).prompt({"session_id": "s-expiry", "prompt": query,
                                                    "hook_event_name": "UserPromptSubmit"})
    assert STALE_WORKING not in str(output)


def test_with_the_schedule_off_reads_show_everything_until_a_manual_gc(hashing_example):
    from mcp_server.service.app import App
    from mcp_server.service.memory_service import MemoryService

    toml = hashing_example / "memdir.toml"
    toml.write_text(toml.read_text() + '\n[lifecycle]\nevery = "off"\n')
    app = App(hashing_example)
    try:
        found = MemoryService(app).search(ops.Search(query="fly status tidewater-staging count beat machines scale"))
        assert STALE_WORKING in [r.id for r in found.results]
    finally:
        app.close()
