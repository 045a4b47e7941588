from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import PathError
from vault.paths import Skipped, resolve_inside, walk, walk_below

ATTACKS = [
    "../secret.md",
    "notes/../../secret.md",
    "/etc/passwd",
    "~/notes.md",
    "..\\secret.md",
    "notes\\..\\..\\x.md",
    "C:evil.md",
    "C:\\Windows\\x.md",
    "%2e%2e%2fsecret.md",
    "notes/%2E%2E/x.md",
    "notes/x\x00.md",
    "CON",
    "notes/aux.md",
    "LPT1.txt",
    "notes/trailing.",
    "notes/trailing ",
    ".memdir/index/x.md",
    ".git/config",
    "notes/stream.md:hidden",
    "",
    "   ",
    "a" * 2000,
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_path_attacks_are_refused_with_a_clear_error(tmp_path: Path, attack: str):
    with pytest.raises(PathError) as caught:
        resolve_inside(tmp_path, attack)
    assert str(caught.value)


def test_symlinks_leading_out_are_refused_even_when_dangling(tmp_path: Path):
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "escape")
    os.symlink(tmp_path / "not-yet-there.md", root / "notes" / "dangling.md")
    for attack in ("escape/x.md", "notes/dangling.md"):
        with pytest.raises(PathError, match="outside the vault"):
            resolve_inside(root, attack)


def test_ordinary_paths_resolve_inside_the_vault(tmp_path: Path):
    assert resolve_inside(tmp_path, "notes/./idea.md") == tmp_path / "notes" / "idea.md"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_no_string_ever_resolves_outside_the_vault(tmp_path_factory, text):
    root = tmp_path_factory.getbasetemp() / "fuzz-root"
    root.mkdir(exist_ok=True)
    try:
        resolved = resolve_inside(root, text)
    except PathError:
        return
    assert os.path.commonpath([os.path.realpath(root), os.path.realpath(resolved)]) == os.path.realpath(root)


def test_walk_skips_dot_folders_and_reports_links_that_leave_the_vault(tmp_path: Path):
    root = tmp_path / "vault"
    for relative in ("a.md", "notes/b.md", ".obsidian/c.md", ".trash/d.md", ".memdir/e.md", "notes/.hidden.md", "x.txt"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("x")
    (tmp_path / "outside.md").write_text("secret")
    os.symlink(tmp_path / "outside.md", root / "notes" / "link.md")
    os.symlink(root / "a.md", root / "notes" / "inner-link.md")
    os.link(tmp_path / "outside.md", root / "hard.md")
    items = list(walk(root))
    paths = sorted(p.relative_to(root).as_posix() for p in items if isinstance(p, Path))
    skipped = {s.path: s.reason for s in items if isinstance(s, Skipped)}
    assert paths == ["a.md", "notes/b.md", "notes/inner-link.md"]
    assert "outside the vault" in skipped["notes/link.md"] and "hard-linked" in skipped["hard.md"]


def test_walking_below_a_folder_finds_what_the_vault_walk_finds_there_and_nothing_a_vault_walk_would_not_enter(
        tmp_path: Path):
    root = tmp_path / "vault"
    for relative in ("a.md", "notes/b.md", "notes/deep/c.md", "notes/.hidden/d.md", ".trash/notes/e.md", "other/f.md"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("x")
    (tmp_path / "private" / "sub").mkdir(parents=True)
    (tmp_path / "private" / "sub" / "secret.md").write_text("secret")
    os.symlink(tmp_path / "private", root / "linked", target_is_directory=True)
    os.symlink(tmp_path / "outside.md", root / "notes" / "deep" / "link.md")

    def below(folder: Path) -> list[Path | Skipped]:
        return list(walk_below(root, folder))

    assert below(root / "notes") == [item for item in walk(root) if
                                     (item.as_posix() if isinstance(item, Path) else str(root / item.path))
                                     .startswith(str(root / "notes") + "/")]
    assert [p.relative_to(root).as_posix() for p in below(root / "notes") if isinstance(p, Path)] == [
        "notes/b.md", "notes/deep/c.md"]
    assert [s.path for s in below(root / "notes" / "deep") if isinstance(s, Skipped)] == ["notes/deep/link.md"]
    for never in (root / "linked", root / "linked" / "sub", root / ".trash" / "notes", root / "notes" / ".hidden",
                  root / "a.md", root / "gone", tmp_path / "private"):
        assert below(never) == [], never


def test_resolved_within_follows_every_symlink_and_answers_only_inside_the_bounds(tmp_path):
    """The one check behind the vault's walk, path arguments and ingest's folder walk."""
    from vault.paths import resolved_within

    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "docs").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (project / "docs" / "guide.md").write_text("x")
    (project / "docs" / "out.txt").symlink_to(outside / "secret.txt")
    (project / "docs" / "gone.txt").symlink_to(outside / "missing.txt")  # dangling, and outside
    (project / "docs" / "in.txt").symlink_to(project / "docs" / "guide.md")
    docs = project / "docs"
    assert resolved_within(docs / "guide.md", docs) == (docs / "guide.md").resolve()
    assert resolved_within(docs / "in.txt", docs) == (docs / "guide.md").resolve()
    assert resolved_within(docs / "out.txt", docs, project) is None
    assert resolved_within(docs / "gone.txt", project) is None
    assert resolved_within(docs / ".." / ".." / "outside" / "secret.txt", project) is None
    assert resolved_within(docs / "out.txt", docs, outside) == (outside / "secret.txt").resolve()
