"""What `--json` prints and what the MCP tools answer stay byte for byte as they were while the service's
answers change from dicts to the typed result models: pinned against tests/fixtures/pinned_outputs.json.

Only what a run cannot repeat is masked: the temporary vault's path and the ages (they grow with the clock).
Regenerate the pins (after a change meant to alter an output) with PIN_OUTPUTS_WRITE=1.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp import Client
from mcp_server.cli.commands import cli
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from mcp_server.tools import mcp_tools
from tests.conftest import EXAMPLE_VAULT

EXAMPLE = EXAMPLE_VAULT  # the ids a new memory's random one is told from
PINS = Path(__file__).parent / "fixtures" / "pinned_outputs.json"
WRITE = os.environ.get("PIN_OUTPUTS_WRITE") == "1"

CLI_RUNS = {
    "search": ["search", "celery retries", "--limit", "3", "--json"],
    "search-window": ["search", "--days-back", "100000", "--limit", "2", "--json"],
    "show": ["show", "m-1b6e2d90", "--json"],
    "list": ["list", "--json"],
    "doctor": ["doctor", "--json"],
    "links": ["links", "m-1b6e2d90", "--json"],
    "stats": ["stats", "--json"],
    "review": ["review", "--json"],
    "books": ["books", "--json"],
    "suggest-merges": ["suggest-merges", "--json"],
}
TOOL_CALLS = {
    "get_context_insights": {"query": "how do we lock statement imports"},
    "search_memory": {"query": "celery retries", "limit": 3},
    "read_memory": {"id": "m-1b6e2d90"},
    "get_memory_relationships": {"id": "m-1b6e2d90"},
    "search_linked_memories": {"target": "m-1b6e2d90"},
    "get_review_queue": {},
    "suggest_memory_merges": {},
    "get_memory_stats": {},
    "add_to_memory_bank": {"content": "The pinned outputs test adds this fact.", "type": "fact"},
}


def masked(text: str, root: Path) -> str:
    text = text.replace(str(root), "<vault>").replace(str(root.parent), "<tmp>")
    text = re.sub(r'("age": )"[^"]*"', r'\1"<age>"', text)
    known = {m for path in EXAMPLE.rglob("*.md") for m in re.findall(r"^id: (m-[0-9a-f]{8})$", path.read_text(), re.M)}
    text = re.sub(r"\bm-[0-9a-f]{8}\b", lambda m: m[0] if m[0] in known else "<new id>", text)
    return re.sub(r'("(?:created_at|updated_at|last_used_at|start|end)": )"\d{4}-[^"]*"', r'\1"<when>"', text)


def pinned(outputs: dict[str, str], part: str) -> None:
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    if WRITE:
        pins[part] = outputs
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert outputs == pins[part]


def test_the_cli_json_outputs_are_as_pinned(hashing_example: Path):
    outputs = {}
    for name, args in CLI_RUNS.items():
        done = CliRunner().invoke(cli, [*args, "--vault", str(hashing_example)], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        outputs[name] = masked(done.stdout, hashing_example)
    pinned(outputs, "cli")


@pytest.mark.anyio
async def test_the_mcp_tool_outputs_are_as_pinned(hashing_example: Path):
    app = App(hashing_example)
    try:
        async with Client(mcp_tools.build(MemoryService(app))) as client:
            outputs = {}
            for name, arguments in TOOL_CALLS.items():
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                answer = {"text": [block.text for block in result.content], "data": result.structured_content}
                outputs[name] = masked(json.dumps(answer, indent=1, ensure_ascii=False), hashing_example)
    finally:
        app.close()
    pinned(outputs, "mcp")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
