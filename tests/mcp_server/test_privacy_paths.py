"""Paths by which a private memory's text, title, tag, alias or file name could reach a shared file, tried as an
outsider would (session 17). Each case is one path; a write that would carry the private memory is refused (or
kept private) and no project file changes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mcp_server.service import operations as ops
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from vault import ValidationError
from vault.errors import ConfigError, ConflictError

from ..conftest import memory_text, write
from .test_write_privacy import OTHER, SHARED
from .test_write_privacy import service as two_vaults  # noqa: F401  (a fixture)

PRIVATE_TEXT = "Dana is relocating to Berlin in December 2026 and will hand over tidewater to Priya Raman."
HAND_PRIVATE = "m-5ea0c303"


@pytest.fixture
def service(two_vaults: MemoryService, hashing_root: Path) -> MemoryService:
    """test_write_privacy's two vaults (the user vault inside the project folder), and a file someone marked private
    by hand inside the project vault: still a project file, read by the whole team."""
    write(hashing_root, "memory_bank/my-notes.md", memory_text(
        HAND_PRIVATE, "My notes", "Things I keep for myself.", collection="memory_bank", type="fact",
        extra="privacy: private\n"))
    two_vaults.index.sync(["memory_bank/my-notes.md"])
    return two_vaults


def add_private(service: MemoryService, **fields) -> str:
    """A private memory in the user vault, shown to session "s"."""
    memory_id = service.add(ops.Add(content=PRIVATE_TEXT, title="Dana relocation", type="fact", privacy="private",
                                    **fields)).memory.id
    service.search(ops.Search(id=memory_id, session="s"))
    return memory_id


def project_files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(errors="replace") for p in root.rglob("*.md")}


def test_a_project_file_marked_private_takes_no_text_of_a_user_vault_memory(service, hashing_root):
    # The hand-marked file is private in name only: everyone with the repository reads it.
    add_private(service)
    before = project_files(hashing_root)
    with pytest.raises(ValidationError, match="repeats text of private memory"):
        service.update(ops.Update(memory_id=HAND_PRIVATE, content="Dana is relocating to Berlin in December.",
                                  session="s"))
    with pytest.raises(ValidationError, match="repeats text of private memory"):
        service.append(ops.Append(memory_id=HAND_PRIVATE, content="Priya Raman takes tidewater.", session="s"))
    with pytest.raises(ValidationError, match="repeats text of private memory"):
        service.update(ops.Update(memory_id=HAND_PRIVATE, content="Dana is relocating to Berlin in December.",
                                  fields={"privacy": "shared"}, session="s"))
    assert project_files(hashing_root) == before


def test_a_project_file_marked_private_may_not_link_a_user_vault_memory(service, hashing_root):
    private_id = add_private(service)
    before = project_files(hashing_root)
    with pytest.raises(ValidationError, match="names private memory"):
        service.link(ops.Link(source=HAND_PRIVATE, target=private_id))
    assert project_files(hashing_root) == before


def test_a_project_file_marked_private_may_still_be_edited_with_its_own_words(service, hashing_root):
    service.search(ops.Search(id=HAND_PRIVATE, session="s"))
    edited = service.update(ops.Update(memory_id=HAND_PRIVATE, content="Things I keep for myself, and a list.",
                                       session="s"))
    assert "a list" in edited.content


def test_a_wikilink_by_a_private_memorys_file_name_or_alias_is_refused_even_when_not_shown(service, hashing_root):
    private_id = add_private(service)
    service.update(ops.Update(memory_id=private_id, fields={"aliases": ["Tidewater exit plan"]}))
    stem = Path(service.find(private_id).path).stem
    before = project_files(hashing_root)
    for text in (f"See [[{stem}]] first.", "See [[Tidewater exit plan]] first.", "See [[tidewater exit plan|the plan]].",
                 f"Details in user-vault/memory_bank/{stem}.md."):
        with pytest.raises(ValidationError, match="names private memory"):
            service.append(ops.Append(memory_id=SHARED, content=text))  # no session: nothing was shown
    with pytest.raises(ValidationError, match="names private memory"):
        service.update(ops.Update(memory_id=SHARED, fields={"depends_on": [stem]}))
    assert project_files(hashing_root) == before


def test_a_private_memorys_tag_is_not_copied_onto_a_shared_memory(service, hashing_root):
    add_private(service, tags=["dana-leaving"])
    before = project_files(hashing_root)
    with pytest.raises(ValidationError, match="repeats text of private memory"):
        service.update(ops.Update(memory_id=SHARED, fields={"tags": ["dana-leaving"]}, session="s"))
    assert project_files(hashing_root) == before


def test_restoring_a_memory_made_private_never_brings_it_back_into_the_project(service, hashing_root):
    moved = service.update(ops.Update(memory_id=OTHER, fields={"privacy": "private"}))
    assert moved.source == "user"
    with pytest.raises(ConflictError, match="is not deleted"):
        service.restore(ops.Restore(memory_id=OTHER))  # the project's trashed copy is what the move left behind
    assert "patterns/review-rota.md" not in project_files(hashing_root)
    service.delete(ops.Delete(memory_id=OTHER))  # deleted from the user vault, later restored: back there
    assert service.restore(ops.Restore(memory_id=OTHER)).restored_to.startswith("patterns/")
    assert service.find(OTHER).source == "user"
    assert "patterns/review-rota.md" not in project_files(hashing_root)


def test_a_user_vault_inside_the_project_vault_is_refused(hashing_root, monkeypatch):
    # memdir.toml is committed: a user_vault inside the project vault would put every private memory in the repository.
    monkeypatch.setenv("MEMDIR_USER_VAULT", str(hashing_root / "memory_bank" / "mine"))
    with pytest.raises(ConfigError, match="inside the project vault"):
        App(hashing_root)
    assert not (hashing_root / "memory_bank" / "mine").exists()


def test_the_lifecycle_never_promotes_a_private_working_memory_into_a_committed_folder(hashing_root, monkeypatch):
    # With no user vault, a captured exchange that repeats a private memory stays in working/ (git-ignored), marked
    # private; promoted to history/ it would be committed with the project.
    monkeypatch.setenv("MEMDIR_USER_VAULT", "")
    old = (datetime.now(timezone.utc) - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write(hashing_root, "working/private-exchange.md",
          f"---\nid: m-5ea0c304\ncollection: working\ntype: history\ntitle: Exchange\ncreated_at: {old}\n"
          "privacy: private\nscore: 0.9\nuses: 3\nsuccess_count: 3\n---\nUser: when does Dana move?\n\nAssistant: December.\n")
    app = App(hashing_root)
    try:
        service = MemoryService(app)
        service.gc(ops.Gc())
        assert not any(p.startswith("history/") for p in project_files(hashing_root))
    finally:
        app.close()


def test_a_private_memory_contradicting_a_shared_one_is_flagged_in_the_users_own_inbox_only(service, hashing_root):
    from mcp_server.web import pages

    shared = service.add(ops.Add(content="Never deploy the billing service on Fridays.", type="decision")).memory.id
    mine = service.add(ops.Add(content="Always deploy the billing service on Fridays.", type="decision",
                               privacy="private")).memory.id
    before = project_files(hashing_root)
    items = service.review(ops.Review()).items
    [item] = [i for i in items if set(i.ids) == {shared, mine}]
    assert item.kind == "contradiction" and item.source == "user"
    assert "private «Always deploy" in item.reason and f"memdir delete {mine}" in item.action
    assert not any("Always deploy" in i.reason for i in items if i.source == "project")
    html = pages._item(service, item, "csrf")
    assert "/ui/act/supersede" not in html  # a shared memory cannot point at a private one
    assert f'name="id" value="{mine}"' in html  # the page's way out: delete the private one
    service.review(ops.Review(dismiss=[item.key]))
    assert not any(set(i.ids) == {shared, mine} for i in service.review(ops.Review()).items)
    dismissed = hashing_root / ".memdir" / "review-dismissed.json"  # the dismissal is the user vault's state
    assert not dismissed.exists() or item.key not in dismissed.read_text()
    assert project_files(hashing_root) == before


def test_a_user_vault_file_is_never_ingested_as_a_shared_book_named_or_walked(service, hashing_root):
    # The user vault can sit inside the project folder (a project in the home folder holds ~/.local/share/memdir;
    # here it is <project>/user-vault): ingest_document takes any path inside the project.
    private_id = add_private(service)
    private_file = Path("user-vault") / service.find(private_id).path
    before = project_files(hashing_root)
    [named] = service.ingest_document(ops.IngestDocument(path=str(private_file)))
    assert named.status == "skipped" and "user vault" in named.reason
    walked = service.ingest_document(ops.IngestDocument(path="."))
    assert any(r.status == "skipped" and "user vault" in (r.reason or "") for r in walked)
    assert not any("Berlin" in text for text in project_files(hashing_root).values())
    assert {k: v for k, v in project_files(hashing_root).items() if not k.startswith("books/")} == before


def test_a_shared_exchange_does_not_name_the_private_exchange_before_it(hashing_root, monkeypatch):
    # No user vault: an exchange that repeats a private memory stays in working/, marked private. The next, shared,
    # exchange linked it as `previous:`, a private memory's id in a file the lifecycle may commit.
    from mcp_server.clients.hooks_server import HookHandler

    monkeypatch.setenv("MEMDIR_USER_VAULT", "")
    write(hashing_root, "memory_bank/my-notes.md", memory_text(
        HAND_PRIVATE, "My notes", "Dana relocates to Berlin in December.", collection="memory_bank", type="fact",
        extra="privacy: private\n"))
    app = App(hashing_root)
    try:
        service = MemoryService(app)
        handler = HookHandler(service)
        handler.prompt({"session_id": "t", "prompt": "when does Dana relocate to Berlin?"})
        service.search(ops.Search(id=HAND_PRIVATE, session="t"))
        first = handler.stop({"session_id": "t", "last_assistant_message": "Dana relocates to Berlin in December."})
        assert service.find(first["stored"]).privacy == "private"
        handler.prompt({"session_id": "t", "prompt": "how do reviews rotate?"})
        second = handler.stop({"session_id": "t", "last_assistant_message": "Weekly, between the backend developers."})
        shared = service.find(second["stored"])
        assert shared.privacy == "shared" and first["stored"] not in str(dict(shared.frontmatter))
    finally:
        app.close()


def test_doctor_warns_of_a_user_vault_the_projects_git_would_commit(service, hashing_root):
    # Outside the vault folder but inside the repository (here <project>/user-vault): not indexed as project memories,
    # yet `git add -A` would commit them.
    import subprocess

    project = hashing_root.parent
    add_private(service)
    assert not any("git does not ignore" in w["reason"] for w in service.doctor(ops.Doctor()).warnings), "no repository yet"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    [warning] = [w for w in service.doctor(ops.Doctor()).warnings if "git does not ignore" in w["reason"]]
    assert "commits every private memory" in warning["reason"] and warning["path"].endswith("user-vault")
    (project / ".gitignore").write_text("user-vault/\n")
    assert not any("git does not ignore" in w["reason"] for w in service.doctor(ops.Doctor()).warnings)


def test_a_private_memorys_tag_that_the_team_uses_too_is_a_topic_not_a_leak(service, hashing_root):
    add_private(service, tags=["code-review"])
    service.update(ops.Update(memory_id=OTHER, fields={"tags": ["code-review"]}))  # the team's tag already
    tagged = service.update(ops.Update(memory_id=SHARED, fields={"tags": ["code-review"]}, session="s"))
    assert tagged.tags == ["code-review"]
