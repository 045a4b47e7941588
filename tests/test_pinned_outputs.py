"""What `--json` prints and what the MCP tools answer stay byte for byte as they were while the service's
answers change from dicts to the typed result models: pinned against tests/fixtures/pinned_outputs.json.

Only what a run cannot repeat is masked: the temporary vault's path and the ages (they grow with the clock).
The vault's own times are moved forward by however long ago the pins were recorded, so that what depends on
a memory's age (gc's plan in the review queue, recency in ranking) is the same on any later day. Regenerate the pins (after a change meant to alter an output) with PIN_OUTPUTS_WRITE=1.
"""

from __future__ import annotations

import json
import os
import re
from datetime import date, datetime, timedelta, timezone
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
_STAMP = re.compile(r"^((?:created_at|updated_at|last_used_at): )(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$", re.M)
_DAY = re.compile(r"^(deadline: )(\d{4}-\d\d-\d\d)$", re.M)

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
    text = re.sub(r"\(this one is \d+ d old\)", "(this one is <n> d old)", text)  # a review reason's age
    # a review item's key hashes the file, whose times were moved
    text = re.sub(r'("key": )"[0-9a-f]{12}"', r'\1"<key>"', text)
    text = re.sub(r"(--dismiss )[0-9a-f]{12}\b", r"\1<key>", text)
    known = {m for path in EXAMPLE.rglob("*.md") for m in re.findall(r"^id: (m-[0-9a-f]{8})$", path.read_text(), re.M)}
    text = re.sub(r"\bm-[0-9a-f]{8}\b", lambda m: m[0] if m[0] in known else "<new id>", text)
    return re.sub(r'("(?:created_at|updated_at|last_used_at|deadline|start|end)": )"\d{4}-[^"]*"', r'\1"<when>"', text)


@pytest.fixture
def example_as_recorded(hashing_example: Path) -> Path:
    """The example vault as it was, relative to its clock, when the pins were recorded."""
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    if WRITE:  # the pins are written now: the vault stays as it is, and the pins say when
        pins["recorded"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    shift = datetime.now(timezone.utc) - datetime.fromisoformat(pins["recorded"])
    for path in hashing_example.rglob("*.md"):
        text = path.read_text()
        moved = _STAMP.sub(lambda m: m[1] + (datetime.strptime(m[2], "%Y-%m-%dT%H:%M:%SZ") + shift).strftime(
            "%Y-%m-%dT%H:%M:%SZ"), text)
        moved = _DAY.sub(lambda m: m[1] + (date.fromisoformat(m[2]) + timedelta(days=shift.days)).isoformat(), moved)
        if moved != text:
            path.write_text(moved)
    return hashing_example


def pinned(outputs: dict[str, str], part: str) -> None:
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    if WRITE:
        pins[part] = outputs
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert outputs == pins[part]


def test_the_cli_json_outputs_are_as_pinned(example_as_recorded: Path):
    outputs = {}
    for name, args in CLI_RUNS.items():
        done = CliRunner().invoke(cli, [*args, "--vault", str(example_as_recorded)], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        outputs[name] = masked(done.stdout, example_as_recorded)
    pinned(outputs, "cli")


@pytest.mark.anyio
async def test_the_mcp_tool_outputs_are_as_pinned(example_as_recorded: Path):
    app = App(example_as_recorded)
    try:
        async with Client(mcp_tools.build(MemoryService(app))) as client:
            outputs = {}
            for name, arguments in TOOL_CALLS.items():
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                answer = {"text": [block.text for block in result.content], "data": result.structured_content}
                outputs[name] = masked(json.dumps(answer, indent=1, ensure_ascii=False), example_as_recorded)
    finally:
        app.close()
    pinned(outputs, "mcp")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
