from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import write
from vault import Change, ConflictError, Vault, ValidationError, atomic
from vault import write as vault_write
from vault.write import Writer

MEMORY = """---
id: m-1234abcd
collection: history
type: learning
title: Use advisory locks for the nightly import
tags: [postgres]   # keep short
created_at: 2026-11-01T08:00:00Z
score: 0.6
uses: 2
success_count: 1.5
outcomes: [worked, partial]
---
Take pg_advisory_xact_lock(42) before importing; see [[nightly-import]].
"""


def bump(memory):
    return {"uses": memory.uses + 1}


@pytest.fixture
def stored(vault: Vault) -> Path:
    return write(vault.root, "history/locks.md", MEMORY)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_changing_one_counter_changes_exactly_one_line_in_git_diff(vault: Vault, stored: Path):
    git(vault.root, "init", "-q")
    git(vault.root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(vault.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    vault.edit(vault.load("history/locks.md"), Change(derive=bump))
    diff = git(vault.root, "diff", "--unified=0", "--no-color")
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ["-uses: 2", "+uses: 3"]


def test_a_no_op_change_leaves_the_bytes_alone(vault: Vault, stored: Path):
    before = stored.read_bytes()
    vault.edit(vault.load("history/locks.md"), Change())
    assert stored.read_bytes() == before


def test_a_human_edit_made_between_read_and_write_survives_and_the_change_is_reapplied(vault: Vault, stored: Path):
    base = vault.load("history/locks.md")
    stored.write_text(MEMORY.replace("uses: 2", "uses: 5").replace("Take pg_", "Always take pg_"))
    result = vault.edit(base, Change(derive=bump))
    text = stored.read_text()
    assert result.uses == 6 and "uses: 6" in text and "Always take pg_advisory" in text


def test_an_edit_racing_the_rename_is_detected_and_the_change_reapplied(vault: Vault, stored: Path, monkeypatch):
    base = vault.load("history/locks.md")
    original_write_temp = atomic._write_temp
    calls = []

    def human_saves_during_our_write(folder, data, mode):
        temp = original_write_temp(folder, data, mode)
        if not calls:
            calls.append(1)
            stored.write_text(stored.read_text().replace("Take pg_", "Human: take pg_"))
        return temp

    monkeypatch.setattr(atomic, "_write_temp", human_saves_during_our_write)
    result = vault.edit(base, Change(derive=bump))
    assert result.uses == 3 and "Human: take pg_" in stored.read_text()
    assert not [p for p in stored.parent.iterdir() if p.name.startswith(atomic.TEMP_PREFIX)]


def test_a_change_for_one_memory_never_lands_in_another_memory_moved_over_its_file(vault: Vault, stored: Path):
    base = vault.load("history/locks.md")
    other = MEMORY.replace("m-1234abcd", "m-5678ef01").replace("advisory locks", "a retry budget")
    stored.write_text(other)  # a human renamed another memory's file over this path (or git checked it out)
    with pytest.raises(ConflictError, match="now holds memory m-5678ef01"):
        vault.edit(base, Change(derive=bump))
    assert stored.read_text() == other


def test_setting_a_key_the_human_changed_differently_is_a_conflict_and_their_file_is_kept(vault: Vault, stored: Path):
    base = vault.load("history/locks.md")
    human = MEMORY.replace("Use advisory locks", "Use Postgres advisory locks")
    stored.write_text(human)
    with pytest.raises(ConflictError, match="'title' was changed"):
        vault.edit(base, Change(fields={"title": "Advisory locks"}))
    assert stored.read_text() == human


def test_replacing_a_body_the_human_edited_is_a_conflict(vault: Vault, stored: Path):
    base = vault.load("history/locks.md")
    stored.write_text(MEMORY.replace("before importing", "before importing (and after restore)"))
    with pytest.raises(ConflictError, match="body was edited"):
        vault.edit(base, Change(body="Something else."))


def test_appending_is_reapplied_on_top_of_a_human_body_edit(vault: Vault, stored: Path):
    base = vault.load("history/locks.md")
    stored.write_text(MEMORY.replace("before importing", "before importing (edited)"))
    result = vault.edit(base, Change(append="Also holds for the weekly export."))
    assert "(edited)" in result.body and result.body.endswith("Also holds for the weekly export.\n")


def test_a_file_that_no_longer_parses_is_never_rewritten(vault: Vault, stored: Path, monkeypatch):
    base = vault.load("history/locks.md")
    broken = MEMORY.replace("score: 0.6", "score: [")
    stored.write_text(broken)
    pauses: list[float] = []
    monkeypatch.setattr(vault_write, "pause", pauses.append)
    with pytest.raises(ConflictError, match="never rewrites a file it cannot parse"):
        vault.edit(base, Change(derive=bump))
    assert stored.read_text() == broken and len(pauses) == vault_write.MID_SAVE_LOOKS - 1


HUMAN_SAVE = MEMORY.replace("Take pg_", "Human: take pg_")


@pytest.mark.parametrize("mid_save", [b"", MEMORY.encode()[:40]], ids=["truncated", "half-written frontmatter"])
def test_a_counter_change_waits_for_an_editor_saving_in_place_and_keeps_the_save(
        vault: Vault, stored: Path, monkeypatch, mid_save: bytes):
    base = vault.load("history/locks.md")
    stored.write_bytes(mid_save)  # the editor has truncated the file (and written part of it)
    monkeypatch.setattr(vault_write, "pause", lambda seconds: stored.write_text(HUMAN_SAVE))  # ... and finishes
    result = vault.edit(base, Change(derive=bump))
    assert result.uses == 3 and stored.read_text() == HUMAN_SAVE.replace("uses: 2", "uses: 3")


def test_a_file_emptied_for_good_is_never_written_into(vault: Vault, stored: Path, monkeypatch):
    base = vault.load("history/locks.md")
    stored.write_text("")
    monkeypatch.setattr(vault_write, "pause", lambda seconds: None)
    with pytest.raises(ConflictError, match="now holds memory p-"):
        vault.edit(base, Change(derive=bump))
    assert stored.read_text() == ""


def test_a_change_that_would_make_the_file_invalid_is_refused(vault: Vault, stored: Path):
    with pytest.raises(ValidationError, match="out of range"):
        vault.edit(vault.load("history/locks.md"), Change(fields={"score": 7}))
    assert stored.read_text() == MEMORY


def test_file_mode_is_preserved(vault: Vault, stored: Path):
    os.chmod(stored, 0o640)
    vault.edit(vault.load("history/locks.md"), Change(derive=bump))
    assert stat.S_IMODE(os.stat(stored).st_mode) == 0o640


def test_writing_a_symlinked_memory_updates_its_target_and_keeps_the_link(vault: Vault, stored: Path):
    link = vault.root / "patterns" / "locks-link.md"
    os.symlink(stored, link)
    vault.edit(vault.load("patterns/locks-link.md"), Change(derive=bump))
    assert link.is_symlink() and "uses: 3" in stored.read_text()


def test_bom_and_crlf_are_kept_when_a_counter_changes(vault: Vault):
    path = write(vault.root, "history/crlf.md", b"\xef\xbb\xbf" + MEMORY.replace("\n", "\r\n").encode())
    vault.edit(vault.load("history/crlf.md"), Change(derive=bump, append="more"))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"uses: 3\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_the_first_write_pins_a_path_derived_id(vault: Vault):
    write(vault.root, "notes/idea.md", "---\ntitle: Idea\n---\nbody\n")
    memory = vault.load("notes/idea.md")
    result = vault.edit(memory, Change(fields={"tags": ["x"]}))
    assert not result.id_derived and result.id == memory.id


def test_deleting_moves_the_file_to_trash_with_a_timestamp(vault: Vault, stored: Path):
    destination = vault.trash(vault.load("history/locks.md"))
    assert not stored.exists()
    assert destination.startswith(".trash/history/locks.") and (vault.root / destination).read_text() == MEMORY


def test_create_never_overwrites_an_existing_file(vault: Vault, stored: Path):
    writer = Writer(vault.root)
    with pytest.raises(ConflictError, match="already exists"):
        writer.create("history/locks.md", {"title": "x"}, "y")
    assert stored.read_text() == MEMORY


def test_promotion_rewrites_the_collection_and_moves_the_file(vault: Vault, stored: Path):
    result = vault.edit(
        vault.load("history/locks.md"), Change(fields={"collection": "patterns"}, move_to="patterns/locks.md")
    )
    assert result.path == "patterns/locks.md" and result.collection == "patterns" and not stored.exists()


def test_a_full_disk_leaves_the_old_file_intact_with_a_clear_error(vault: Vault, stored: Path, monkeypatch):
    def disk_full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "write", disk_full)
    with pytest.raises(Exception, match="disk is full; the existing file was left unchanged"):
        vault.edit(vault.load("history/locks.md"), Change(derive=bump))
    monkeypatch.undo()
    assert stored.read_text() == MEMORY
    assert not [p for p in stored.parent.iterdir() if p.name.startswith(atomic.TEMP_PREFIX)]


def test_a_memory_added_with_a_leading_code_fence_is_titled_by_its_first_line_of_prose(vault: Vault):
    memory = vault.add("```python\n# pin the version here\nAPI = 3\n```\nThe API version is 3.")
    assert memory.title == "The API version is 3."
