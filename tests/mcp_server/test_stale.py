"""Stale memories, end to end: search results, read_memory, KNOWN CONTEXT, ranking, verify and doctor."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.cli.commands import cli
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service.memory_service import MemoryService
from mcp_server.views.view import MemoryView
from tests.conftest import HASHING_TOML, memory_text, write
from tests.vault.test_anchors import git
from vault import init_vault
from mcp_server.service import operations as ops

AUTH = "TTL_MINUTES = 15\n\ndef issue_token(user):\n    return sign(user, TTL_MINUTES)\n"
SESSION = "TTL_MINUTES = 15\n\ndef open_session(user):\n    return remember(user, TTL_MINUTES)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "services/auth.py", AUTH)
    write(root, "services/session.py", SESSION)
    init_vault(root / ".memories", HASHING_TOML)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code")
    return root


@pytest.fixture
def service(project: Path):
    app = App(project / ".memories")
    yield MemoryService(app)
    app.close()


def add_twins(service: MemoryService) -> tuple[str, str]:
    """Two memories equally relevant to 'token lifetime minutes', citing different files."""
    a = service.add(ops.Add(content="Token lifetime is fifteen minutes, set in `services/auth.py`.", type="fact")).memory.id
    b = service.add(ops.Add(content="Token lifetime is fifteen minutes, set in `services/session.py`.", type="fact")).memory.id
    return a, b


def ranked(service: MemoryService) -> list[MemoryView]:
    return service.search(ops.Search(query="token lifetime fifteen minutes")).results


def test_a_stale_memory_is_flagged_in_search_and_ranks_below_an_equally_relevant_fresh_one(service, project):
    a, b = add_twins(service)
    before = ranked(service)
    assert all(r.stale is None for r in before)
    first, second = before[0].id, before[1].id
    assert {first, second} == {a, b}
    cited = "services/auth.py" if first == a else "services/session.py"
    write(project, cited, (AUTH if first == a else SESSION).replace("15", "30"))

    after = ranked(service)
    assert [r.id for r in after[:2]] == [second, first]
    stale = after[1].stale or []
    assert [(s.path, s.reason) for s in stale] == [(cited, "changed")] and stale[0].since
    assert after[0].stale is None
    assert after[1].relevance == before[0].relevance  # as relevant as before; only the order moved


def test_read_memory_search_memory_and_verify_memory_through_the_mcp_client(service, project):
    a, _ = add_twins(service)
    os.remove(project / "services/auth.py")
    async def run():
        async with Client(tools.build(service)) as client:
            read = await client.call_tool("read_memory", {"id": a})
            found = await client.call_tool("search_memory", {"query": "token lifetime fifteen minutes"})
            write(project, "services/auth.py", AUTH.replace("15", "30"))
            verified = await client.call_tool("verify_memory", {"ids": [a]})
            reread = await client.call_tool("read_memory", {"id": a})
        return read, found, verified, reread

    import anyio
    read, found, verified, reread = anyio.run(run)
    assert read.structured_content["stale"][0]["reason"] == "deleted"
    assert "cites services/auth.py, deleted" in read.content[0].text and ": verify" in read.content[0].text
    hit = next(r for r in found.structured_content["results"] if r["id"] == a)
    assert hit["stale"][0]["path"] == "services/auth.py"
    assert "[cites services/auth.py, deleted" in found.content[0].text
    done = verified.structured_content["verified"][0]
    assert done["was_stale"][0]["reason"] == "changed" and done["anchors"][0].startswith("services/auth.py@")
    assert not reread.structured_content.get("stale")


def test_known_context_labels_a_stale_memory_and_a_fresh_one_stays_unlabelled(service, project):
    a, b = add_twins(service)
    write(project, "services/auth.py", AUTH.replace("15", "30"))
    context = HookHandler(service).prompt({"session_id": "s-1", "prompt": "token lifetime fifteen minutes"})
    lines = {line.split("[id:")[1][:10]: line for line in context["additionalContext"].splitlines() if "[id:" in line}
    assert "cites services/auth.py, changed since" in lines[a] and lines[a].rstrip(")").endswith(": verify")
    assert "cites" not in lines[b]


def test_memdir_verify_and_search_json_on_the_command_line(service, project):
    a, _ = add_twins(service)
    service.app.close()
    write(project, "services/auth.py", AUTH.replace("issue_token", "mint_token"))
    vault = str(project / ".memories")
    runner = CliRunner()
    stale = json.loads(runner.invoke(cli, ["search", "token lifetime", "--json", "--vault", vault],
                                     catch_exceptions=False).output)
    flagged = {r["id"]: r.get("stale") for r in stale["results"]}
    assert flagged[a][0]["reason"] == "changed"
    shown = runner.invoke(cli, ["show", a, "--vault", vault], catch_exceptions=False).output
    assert "cites services/auth.py, changed since" in shown
    result = runner.invoke(cli, ["verify", a, "--vault", vault], catch_exceptions=False)
    assert result.exit_code == 0 and f"verified [id:{a}]" in result.output and "was: cites services/auth.py, changed" in result.output
    fresh = json.loads(runner.invoke(cli, ["search", "token lifetime", "--json", "--vault", vault]).output)
    assert all("stale" not in r for r in fresh["results"])
    missing = runner.invoke(cli, ["verify", "m-00000000", "--vault", vault])
    assert missing.exit_code != 0 and "m-00000000" in missing.output


def test_a_nonsense_anchor_key_is_a_doctor_error_with_file_and_line_and_the_memory_is_still_served(project):
    root = project / ".memories"
    write(root, "history/broken.md", memory_text(
        "m-0bad0bad", "Deploy notes", "Deploys run from tools/deploy.sh every Friday.",
        extra="anchors: [not an anchor, 42, services/auth.py@zzzz]\n"))
    app = App(root)
    try:
        service = MemoryService(app)
        report = service.doctor(ops.Doctor())
        errors = [e for e in report.errors if e["path"] == "history/broken.md"]
        assert [e["line"] for e in errors] == [7, 7, 7]
        assert "not an anchor" in errors[0]["reason"] and "still served" in errors[0]["reason"]
        assert service.read(ops.Read(ref="m-0bad0bad")).title == "Deploy notes"
        assert any(r.id == "m-0bad0bad" for r in service.search(ops.Search(query="deploys friday")).results)
    finally:
        app.close()
    result = CliRunner().invoke(cli, ["doctor", "--vault", str(root)])
    assert result.exit_code == 1 and "history/broken.md" in result.output and ":7" in result.output


def test_scoring_a_stale_memory_worked_suggests_verifying_it(service, project):
    stale = service.add(ops.Add(content="Token lifetime lives in `services/auth.py`.", collection="patterns", type="learning")).memory.id
    fresh = service.add(ops.Add(content="Sessions open in `services/session.py`.", collection="patterns", type="learning")).memory.id
    write(project, "services/auth.py", AUTH.replace("15", "30"))
    answer = service.score(ops.Score(memory_scores={stale: "worked", fresh: "worked"}))
    assert answer.verify == [stale]
    from mcp_server.views import render
    assert f'verify_memory(ids=["{stale}"])' in render.score_answer(answer)
    assert service.score(ops.Score(memory_scores={stale: "failed"})).verify == []


def test_verify_does_not_make_a_memory_citing_a_vanished_symbol_look_fresh(service, project):
    cited = service.add(ops.Add(content="Tokens are signed in `services/auth.py::issue_token`.", type="fact")).memory.id
    write(project, "services/auth.py", "TTL_MINUTES = 15\n\ndef mint_token(user):\n    return sign(user, TTL_MINUTES)\n")
    assert [s.reason for s in service.read(ops.Read(ref=cited)).stale or []] == ["symbol-missing"]
    answer = service.verify(ops.Verify(ids=[cited]))  # the cited symbol is gone: verify must not make the memory look fresh
    assert [s.reason for s in service.read(ops.Read(ref=cited)).stale or []] == ["symbol-missing"]
    assert [s.reason for s in answer.verified[0].still_stale] == ["symbol-missing"]


@pytest.mark.anyio
async def test_the_verify_tool_and_command_do_not_say_verified_while_the_cited_symbol_is_gone(service, project):
    cited = service.add(ops.Add(content="Tokens are signed in `services/auth.py::issue_token`.", type="fact")).memory.id
    fresh = service.add(ops.Add(content="Sessions open in `services/session.py::open_session`.", type="fact")).memory.id
    write(project, "services/auth.py", "TTL_MINUTES = 15\n\ndef mint_token(user):\n    return sign(user, TTL_MINUTES)\n")
    async with Client(tools.build(service)) as client:
        result = await client.call_tool("verify_memory", {"ids": [cited, fresh]})
    gone, kept = result.content[0].text.splitlines()
    assert gone.startswith(f"NOT verified [id:{cited}]") and "symbol missing" in gone
    assert kept.startswith(f"verified [id:{fresh}]")
    assert result.structured_content["verified"][0]["still_stale"][0]["reason"] == "symbol-missing"
    service.app.close()
    command = CliRunner().invoke(cli, ["verify", cited, "--vault", str(project / ".memories")])
    assert "NOT verified" in command.output and not command.output.startswith("verified")


def test_the_web_views_verify_button_reports_a_refusal_while_the_cited_symbol_is_gone(service, project):
    from mcp_server.web import pages
    from vault import ValidationError

    cited = service.add(ops.Add(content="Tokens are signed in `services/auth.py::issue_token`.", type="fact")).memory.id
    write(project, "services/auth.py", "TTL_MINUTES = 15\n\ndef mint_token(user):\n    return sign(user, TTL_MINUTES)\n")
    with pytest.raises(ValidationError, match="NOT verified: services/auth.py symbol-missing"):  # a red note, not "verified"
        pages.act(service, "verify", {"ids": cited})
    assert [s.reason for s in service.read(ops.Read(ref=cited)).stale or []] == ["symbol-missing"]
    write(project, "services/auth.py", AUTH.replace("15", "30"))  # the symbol is back, only its value changed
    assert pages.act(service, "verify", {"ids": cited}).startswith("verified: ")


def test_verify_with_one_unknown_id_refuses_before_changing_any_file(service, project):
    from vault import NotFoundError

    cited = service.add(ops.Add(content="Tokens are signed in `services/auth.py`.", type="fact")).memory.id
    write(project, "services/auth.py", "TTL_MINUTES = 30\n")
    before = (project / ".memories" / service.read(ops.Read(ref=cited)).path).read_text()
    with pytest.raises(NotFoundError):
        service.verify(ops.Verify(ids=[cited, "m-00000bad"]))
    assert (project / ".memories" / service.read(ops.Read(ref=cited)).path).read_text() == before
