"""The tool descriptions explain every label the tools' results really carry, and teach nothing they never show."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.tools.descriptions import OVERVIEW, SEARCH
from mcp_server.service.memory_service import MemoryService

from ..conftest import write
from mcp_server.service import operations as ops

pytestmark = pytest.mark.anyio
FACTS = re.compile(r"^\d+\. \[id:[^\]]+\] \((.*?)\) «", re.M)
TRACK = re.compile(r"^(\w+)(?:: (\d+ uses?|importance \d\.\d)( \[[YN~?]+\])?)?$")
AGE = re.compile(r"^\d+(m|h|d|w|mo|y)$")


@pytest.fixture
def service(hashing_example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_USER_VAULT", str(tmp_path / "user-vault"))
    write(hashing_example, "working/fresh.md", "---\nid: m-fe5a0001\ntitle: Fresh note about ledger locks\n---\n"
          "Ledger imports take an advisory lock.\n")
    app = App(hashing_example)
    service = MemoryService(app)
    service.add(ops.Add(content="I review ledger pull requests before lunch.", type="preference", privacy="private", confidence=0.3))
    yield service
    app.close()


async def results_text(service: MemoryService) -> tuple[str, list[dict]]:
    texts, structured = [], []
    async with Client(tools.build(service)) as client:
        for query in ("ledger locks postgres advisory", "money decimal", "deploy migrations", "force push main",
                      "review pull requests", "statement dates timezone", "retry celery tasks"):
            for tool, args in (("search_memory", {"query": query, "limit": 20}),
                               ("get_context_insights", {"query": query})):
                result = await client.call_tool(tool, args)
                texts.append(result.content[0].text)
                data = result.structured_content
                structured += [hit for key in ("results", "always", "facts", "memories") for hit in data.get(key, [])]
    return "\n".join(texts), structured


@pytest.mark.parametrize("description", [SEARCH, OVERVIEW], ids=["search_memory", "get_context_insights"])
async def test_every_label_a_real_result_contains_is_explained_in_the_description(service, description):
    text, structured = await results_text(service)
    seen: set[str] = set()
    for facts in FACTS.findall(text):
        where, _type, *rest = facts.split(", ")
        if "·" in where:
            seen.add("· " + where.split("· ")[1])
        for part in rest:
            if AGE.match(part):
                seen.add("4mo" if part.endswith("mo") else "40m" if part.endswith("m") else f"{part[-1]},")
            elif part.startswith("relevance "):
                seen.add("relevance 0..1")
            else:
                track = TRACK.match(part)
                assert track, f"an unexplained part {part!r} in {facts!r}"
                seen.add(track.group(1))
                if track.group(2):
                    seen.add(track.group(2).split()[0] if "importance" in track.group(2) else "uses")
                if track.group(3):
                    seen.update(f"{mark} {word}" for mark, word in (("Y", "worked"), ("~", "partial"), ("N", "failed"))
                                if mark in track.group(3))
    # The example vault yields every kind: the test proves nothing if the result holds few of them.
    assert {"proven", "established", "unproven", "stated", "uncertain", "reference", "· user", "uses",
            "importance", "relevance 0..1", "Y worked"} <= seen, seen
    assert [label for label in sorted(seen) if label not in description] == []
    keys = {key for hit in structured for key in hit}
    assert [key for key in sorted(keys) if key not in description] == []


def test_no_description_teaches_a_label_the_results_never_show():
    for description in (SEARCH, OVERVIEW):
        assert not re.search(r"\bs:\s?\d|s:score", description)


def test_the_descriptions_say_to_hedge_on_weak_labels_and_not_to_narrate_them():
    for description in (SEARCH, OVERVIEW):
        assert "hedge" in description.lower() and "narrate" in description
