"""Private memories and the user vault: where they are written, who sees them, and what never leaks."""

from __future__ import annotations

import json

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from mcp import Client
from mcp_server.tools import mcp_tools as tools
from mcp_server.service.app import App
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service.memory_service import MemoryService
from mcp_server.views.view import MemoryView
from vault import Vault, init_vault
from vault.errors import NotFoundError

from ..conftest import HASHING_TOML, memory_text, write
from mcp_server.service import operations as ops

pytestmark = pytest.mark.anyio
SECRET = "Dana's therapist appointment is every Tuesday at noon"


@pytest.fixture
def user_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "user-vault"
    monkeypatch.setenv("MEMDIR_USER_VAULT", str(root))
    return root


@pytest.fixture
def project(hashing_root: Path, user_root: Path) -> Path:
    write(hashing_root, "patterns/celery-retries.md", memory_text(
        "m-5ea0c001", "Celery retries need idempotent tasks", "Make celery tasks idempotent before adding retries.",
        collection="patterns"))
    write(hashing_root, "history/deploy-friday.md", memory_text(
        "m-5ea0c002", "Deploys on Friday", "We stopped deploying on Friday afternoons after the ledger outage."))
    return hashing_root


@pytest.fixture
def service(project: Path):
    app = App(project)
    yield MemoryService(app)
    app.close()


def project_texts(root: Path) -> str:
    """Every byte under the project vault, index and caches included."""
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file())


def add_private(service: MemoryService, content: str = SECRET, **fields) -> MemoryView:
    return service.add(ops.Add(content=content, type="fact", tags=["personal"], privacy="private", **fields)).memory


async def test_a_private_add_lands_in_the_user_vault_and_never_in_the_project_files_or_git(service, project, user_root):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(project)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "vault"], check=True)
    async with Client(tools.build(service)) as client:
        result = await client.call_tool("add_to_memory_bank", {"content": SECRET, "type": "fact", "privacy": "private"})
    memory = result.structured_content["memory"]
    assert memory["source"] == "user" and memory["privacy"] == "private"
    assert (user_root / memory["path"]).read_text().count("privacy: private") == 1
    assert "Tuesday" not in project_texts(project)
    assert subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True, check=True).stdout == ""


async def test_a_project_search_finds_a_private_memory_labelled_as_the_users(service):
    memory = add_private(service)
    async with Client(tools.build(service)) as client:
        result = await client.call_tool("search_memory", {"query": "therapist appointment tuesday"})
    first = result.structured_content["results"][0]
    assert first["id"] == memory.id and first["where"] == "memory_bank · user"
    assert "(memory_bank · user," in result.content[0].text
    assert service.search(ops.Search(query="therapist appointment tuesday", include_private=False)).results == [] or all(
        r.source == "project" for r in service.search(ops.Search(query="therapist appointment tuesday",
                                                           include_private=False)).results)


def test_results_from_both_vaults_are_merged_in_one_ranking(service):
    add_private(service, "Celery workers on my laptop need the retries flag turned off")
    results = service.search(ops.Search(query="celery retries")).results
    assert {r.source for r in results} == {"project", "user"}
    assert [r.final_score for r in results] == sorted((r.final_score for r in results), reverse=True)


def test_project_stats_do_not_count_private_memories(service):
    before = service.stats(ops.Stats()).memories
    add_private(service)
    stats = service.stats(ops.Stats())
    assert stats.memories == before
    assert stats.private and stats.private["user_memories"] == 1
    from mcp_server.views import render
    assert "user vault (private, not counted above): 1 memory in " in render.stats(stats)  # not "1 memories"
    assert service.stats(ops.Stats(include_private=False)).private is None


def test_a_caller_not_entitled_to_private_memories_cannot_read_or_list_them(service):
    memory = add_private(service)
    assert service.read(ops.Read(ref=memory.id)).source == "user"
    with pytest.raises(NotFoundError):
        service.read(ops.Read(ref=memory.id, include_private=False))
    with pytest.raises(NotFoundError):
        service.search(ops.Search(id=memory.id, include_private=False))
    assert memory.id in {m.id for m in service.list(ops.List())}
    assert memory.id not in {m.id for m in service.list(ops.List(include_private=False))}


def test_a_private_takeaway_is_recorded_in_the_user_vault(service, project, user_root):
    recorded = service.record_response(ops.RecordResponse(key_takeaway="My own shell alias gco means git checkout", initial_score="worked", privacy="private"))
    assert recorded.source == "user" and recorded.collection == "working"
    assert (user_root / recorded.path).is_file() and not (project / recorded.path).exists()


def test_merging_a_private_with_a_shared_memory_writes_the_result_into_the_user_vault(service, project, user_root):
    private = add_private(service, "Celery on my laptop: run the worker with --pool=solo", collection="memory_bank")
    merged = service.merge(ops.Merge(ids=["m-5ea0c001", private.id], title="Celery retries and my laptop worker"))
    assert merged.source == "user" and merged.privacy == "private"
    assert (user_root / merged.path).is_file()
    assert not (project / "patterns/celery-retries.md").exists()  # the shared source moved out and was merged
    assert "pool=solo" not in project_texts(project)
    assert service.find("m-5ea0c001") is None  # superseded sources go to .trash/ as in any merge


def test_merging_shared_memories_stays_in_the_project_vault(service, project, user_root):
    merged = service.merge(ops.Merge(ids=["m-5ea0c001", "m-5ea0c002"], title="Release habits"))
    assert merged.source == "project" and (project / merged.path).is_file()
    assert not user_root.exists()


def test_making_a_project_memory_private_moves_it_with_its_id_and_counters(service, project, user_root):
    service.score(ops.Score(memory_scores={"m-5ea0c001": "worked"}))
    moved = service.update(ops.Update(memory_id="m-5ea0c001", fields={"privacy": "private"}))
    assert moved.id == "m-5ea0c001" and moved.source == "user" and moved.uses == 1
    assert (user_root / moved.path).is_file() and not (project / "patterns/celery-retries.md").exists()
    assert service.read(ops.Read(ref="m-5ea0c001")).source == "user"


def test_lifecycle_promotion_keeps_a_user_vault_memory_in_the_user_vault(project, user_root):
    init_vault(user_root, HASHING_TOML)
    write(user_root, "working/laptop-proxy.md", memory_text(
        "m-0de7a001", "Laptop proxy", "My laptop needs the corporate proxy for pip.", collection="working",
        extra="score: 0.85\nuses: 3\nsuccess_count: 3.0\nprivacy: private\n"))
    app = App(project)
    try:
        decisions = MemoryService(app).gc(ops.Gc())
    finally:
        app.close()
    promoted = [d for d in decisions if d.id == "m-0de7a001"]
    assert promoted and promoted[0].action == "promote" and promoted[0].source == "user"
    assert (user_root / promoted[0].result).is_file()
    assert not (project / promoted[0].result).exists()


async def test_scoring_a_user_vault_memory_through_the_tool_updates_the_user_vault_file(service, user_root):
    memory = service.record_response(ops.RecordResponse(key_takeaway="My laptop needs the corporate proxy for pip", privacy="private"))
    async with Client(tools.build(service)) as client:
        result = await client.call_tool("score_memories", {"outcome": "unknown", "memory_scores": {memory.id: "worked"}})
    assert not result.is_error, result.content[0].text
    written = Vault(user_root, source="user").find(memory.id)
    assert written.uses == 1 and written.outcomes == ("worked",)


def test_the_prompt_hook_labels_a_user_vault_memory_private(service):
    memory = add_private(service)
    context = HookHandler(service).prompt({"session_id": "s-1", "prompt": "when is the therapist appointment"})
    line = next(line for line in context["additionalContext"].splitlines() if memory.id in line)
    assert "Tuesday" in line and line.endswith("private)")
    assert memory.id in context["shown"]


def test_a_shared_memorys_neighbours_and_graph_never_reveal_a_private_project_file(service, project):
    # A human wrote a private note inside the project vault, linked both ways with a shared one.
    write(project, "history/note-7.md", memory_text(
        "m-5ea0c0ff", "Salary note", "My salary negotiation after the ledger outage; see [[deploy-friday]].",
        extra="privacy: private\nprevious: m-5ea0c002\n"))
    write(project, "history/deploy-friday.md", memory_text(
        "m-5ea0c002", "Deploys on Friday", "We stopped deploying on Friday after the ledger outage; [[note-7]]."))
    service.index.sync()
    assert "m-5ea0c0ff" in {h.id for h in service.search(ops.Search(query="ledger outage salary")).results}  # the owner's view
    hits = service.search(ops.Search(query="deploying friday ledger outage salary", include_private=False)).results
    assert hits and "m-5ea0c0ff" not in {h.id for h in hits}
    assert not any("salary" in str(h).lower() for h in hits)
    relations = service.relationships(ops.Relationships(memory_id="m-5ea0c002", include_private=False))
    assert "salary" not in str(relations).lower() and "m-5ea0c0ff" not in str(relations)
    assert "salary" not in str(service.linked(ops.Linked(target="deploy-friday", include_private=False))).lower()
    assert service.stats(ops.Stats(include_private=False)).memories == 2
    assert any("privacy: private" in w["reason"] for w in service.doctor(ops.Doctor()).warnings)


def test_a_user_vault_memory_that_links_a_project_memory_is_not_in_the_project_graph(service):
    add_private(service, "My notes on [[celery-retries]]: I keep forgetting the retries flag")
    assert service.relationships(ops.Relationships(memory_id="m-5ea0c001")).backlinks == []


def test_without_a_user_vault_setting_a_private_add_is_refused_clearly(project, monkeypatch):
    monkeypatch.setenv("MEMDIR_USER_VAULT", "")
    app = App(project)
    try:
        with pytest.raises(Exception, match="user vault"):
            MemoryService(app).add(ops.Add(content=SECRET, privacy="private"))
    finally:
        app.close()
    assert "Tuesday" not in project_texts(project)


def test_two_projects_share_one_user_vault_one_owning_its_index_and_one_reading_it(service, tmp_path, user_root):
    other_root = tmp_path / "other-project"
    init_vault(other_root, HASHING_TOML)
    memory = add_private(service)  # the first project's process created the user vault and owns its index
    other_app = App(other_root)
    try:
        other = MemoryService(other_app)
        assert other_app.user is not None and not other_app.user.index.writable
        assert other.search(ops.Search(query="therapist appointment tuesday")).results[0].id == memory.id
        other.score(ops.Score(memory_scores={memory.id: "worked"}))  # a reader writes the file; the owner's watcher indexes it
        assert Vault(user_root, source="user").find(memory.id).uses == 1
        service.app.user.index.sync()
        assert other.read(ops.Read(ref=memory.id)).uses == 1
        service.app.close()  # the owner exits: the reader takes its place
        assert other_app.user_side() is not None and other_app.user.index.writable
    finally:
        other_app.close()


def test_an_exchange_built_on_a_private_memory_is_captured_into_the_user_vault(service, project, user_root):
    private = add_private(service, "Dana's therapist appointment is every Tuesday at noon; no meetings then")
    handler = HookHandler(service)
    handler.prompt({"session_id": "s", "prompt": "can we schedule the ledger review on Tuesday at noon?"})
    assert private.id in service.sessions.load("s").turn_shown
    stored = handler.stop({"session_id": "s", "last_assistant_message": "Not at noon: Dana has an appointment."})
    exchange = service.find(stored["stored"])
    assert exchange.source == "user" and exchange.privacy == "private"
    assert "appointment" not in project_texts(project)
    handler.prompt({"session_id": "s", "prompt": "how do we make celery retries safe"})
    plain = handler.stop({"session_id": "s", "last_assistant_message": "Idempotent tasks first."})
    assert service.find(plain["stored"]).source == "project"  # a turn without private memories stays shared


def test_show_and_list_without_a_server_read_the_user_vault_too(service, project):
    from click.testing import CliRunner

    from mcp_server.cli.commands import cli

    memory = add_private(service)
    shown = CliRunner().invoke(cli, ["show", memory.id, "--json", "--vault", str(project)])
    assert shown.exit_code == 0, shown.output
    assert '"source": "user"' in shown.output and "Tuesday" in shown.output
    listed = CliRunner().invoke(cli, ["list", "--vault", str(project)])
    assert memory.id in listed.output and "m-5ea0c001" in listed.output
    missing = CliRunner().invoke(cli, ["show", "m-00000000", "--vault", str(project)])
    assert missing.exit_code == 1 and "m-00000000" in missing.output


def test_a_note_without_created_at_is_placed_in_a_timeline_by_its_files_mtime(hashing_root: Path):
    two_days_ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2 * 86400))
    write(hashing_root, "history/dated.md",
          f"---\nid: m-da7ed001\ntype: learning\ntitle: Dated\ncreated_at: {two_days_ago}\n---\nDated two days ago.\n")
    undated = write(hashing_root, "history/undated.md", "---\nid: m-0da7ed01\ntitle: Undated\n---\nWritten by hand today.\n")
    os.utime(undated, (time.time() - 3600, time.time() - 3600))  # an hour ago: newer than the dated one
    app = App(hashing_root)
    try:
        results = MemoryService(app).search(ops.Search(days_back=5)).results
    finally:
        app.close()
    assert [r.id for r in results] == ["m-0da7ed01", "m-da7ed001"]


def test_a_prompt_that_repeats_a_private_memory_shown_with_it_is_withheld_from_the_project_turn_log(service, project):
    private = add_private(service, "Dana's therapist appointment is every Tuesday at noon; no meetings then")
    HookHandler(service).prompt({"session_id": "s", "prompt": "is Dana's therapist appointment every Tuesday at noon?"})
    [logged] = [json.loads(line) for line in (project / ".memdir" / "turns.jsonl").read_text().splitlines()
                if json.loads(line)["kind"] == "prompt"]
    assert [s["id"] for s in logged["shown"]] == [private.id]
    assert "therapist" not in logged["prompt"] and private.id in logged["prompt"]
