"""Ingesting reference documents into the books collection, and listing what was ingested.

One source file becomes one Markdown memory in `books/`, with `source_path` and `source_sha256`
in its frontmatter. Re-ingesting an unchanged source writes nothing; a changed one replaces the
body in place through the vault's writer (same id, same file, every other frontmatter key kept,
including a human's). Each file is its own step: one bad file is reported and the rest go in.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from vault import Change, Memory
from vault.errors import VaultError
from vault.paths import resolved_within
from vault.store import new_memory_fields

from .convert import SUFFIXES, convert
from .curator import Curator

SOURCE_PATH, SOURCE_HASH = "source_path", "source_sha256"


@dataclass(frozen=True)
class Ingested:
    source: str
    status: str  # created | updated | unchanged | error | skipped (with --dry-run: would-create, would-update)
    id: str | None = None
    path: str | None = None
    title: str | None = None
    kind: str | None = None
    parts: int = 0  # pages of a PDF, sections otherwise
    reason: str = ""


PRIVATE_FILE = "a file of your user vault: private memories are never copied into the shared books; not read"
GIT_IGNORED = ("a file the project's git ignores (kept out of the repository, and books/ is committed); not read: "
               "`memdir ingest` takes it if the user means to share it")
GIT_SECONDS = 10.0


def sources(paths: Iterable[Path], *, project: Path, vault_root: Path, private: Path | None = None,
            shared_only: bool = False) -> tuple[list[Path], list[Ingested]]:
    """The files named, with folders expanded to the supported documents inside them (sorted), and the
    files a folder walk passed over, each with its reason.

    A walk reads only what lies, once resolved, inside the folder walked or the project: a symlink in a cloned repository
    (`docs/x.txt -> ~/.ssh/config`) must not copy a file from elsewhere into books/, ready to be
    committed. Folder symlinks are not descended, dot-folders are skipped, and the vault's own files
    are never documents to ingest (`memdir ingest .` from a project whose vault folder has no dot).
    A file named on its own is taken as named: the caller decided (the MCP tool checks it is inside
    the project before it gets here), unless it is in the user vault (`private`): named or walked, a
    private memory's file never becomes a shared book (a user vault can sit inside the project folder,
    e.g. a project in the home folder). With `shared_only` (the model's ingest_document), a file the project's git
    ignores is not read either, named or walked: the book would be committed, and an instruction in a page or a file
    the model read ("ingest notes/private.md") moved a file the user keeps out of the repository into it.
    """
    project, vault_root = project.resolve(), vault_root.resolve()
    private = private.resolve() if private is not None else None
    found: list[Path] = []
    skipped: list[Ingested] = []
    for path in paths:
        if private is not None and path.resolve().is_relative_to(private):
            skipped.append(Ingested(_source_key(path, project, resolve=False), "skipped", reason=PRIVATE_FILE))
            continue
        if not path.is_dir():
            found.append(path)
            continue
        bounds = (path.resolve(), project)
        for folder, dirs, files in os.walk(path, followlinks=False):
            here = Path(folder)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                             and not _passed_over(here / d, project, vault_root, skipped, private))
            for name in sorted(files):
                file = here / name
                if name.startswith(".") or file.suffix.lower() not in SUFFIXES:
                    continue
                reason = _unreadable(file, bounds, vault_root, private)
                if reason:
                    skipped.append(Ingested(_source_key(file, project, resolve=False), "skipped", reason=reason))
                else:
                    found.append(file)
    if shared_only and found:
        ignored = _git_ignored(found, project)
        skipped += [Ingested(_source_key(f, project, resolve=False), "skipped", reason=GIT_IGNORED)
                    for f in found if f in ignored]
        found = [f for f in found if f not in ignored]
    return found, skipped


def _git_ignored(files: list[Path], project: Path) -> set[Path]:
    """Those of `files` the project's git ignores (none without git or a repository). A git that does not answer in
    time counts every file as ignored: the caller is the model's tool, which may share only what git would."""
    try:
        asked = subprocess.run(["git", "check-ignore", "-z", "--stdin"], cwd=project, capture_output=True,
                               timeout=GIT_SECONDS, check=False,
                               input=b"\0".join(os.fsencode(f) for f in files) + b"\0")
    except subprocess.TimeoutExpired:
        return set(files)
    except OSError:
        return set()
    if asked.returncode not in (0, 1):  # 128: no repository (or git failed): nothing is ignored
        return set()
    named = {os.fsencode(f): f for f in files}
    return {named[name] for name in asked.stdout.split(b"\0") if name in named}


def _passed_over(folder: Path, project: Path, vault_root: Path, skipped: list[Ingested],
                 private: Path | None = None) -> bool:
    """Whether a walk leaves this folder out: a folder symlink (said), the user vault (said), or the vault itself."""
    if folder.is_symlink():
        skipped.append(Ingested(_source_key(folder, project, resolve=False), "skipped",
                                reason="a folder symlink; not followed"))
        return True
    if private is not None and folder.resolve() == private:
        skipped.append(Ingested(_source_key(folder, project, resolve=False), "skipped", reason=PRIVATE_FILE))
        return True
    return folder.resolve() == vault_root


def _unreadable(file: Path, bounds: tuple[Path, ...], vault_root: Path, private: Path | None = None) -> str:
    """Why a file found by a walk is not read, or "" to read it."""
    if not os.path.exists(file):  # follows the link: False for a dangling or looping one
        return "a dangling or looping symlink; not read"
    resolved = resolved_within(file, *bounds)
    if resolved is None:
        return "a symlink to a file outside the folder and the project; not read"
    if private is not None and resolved.is_relative_to(private):
        return PRIVATE_FILE
    if resolved.is_relative_to(vault_root):
        return "a file of this memdir vault; not ingested again"
    if not resolved.is_file():
        return "not a regular file; not read"
    return ""


def ingest(curator: Curator, paths: Sequence[Path], *, project: Path, title: str | None = None,
           tags: Sequence[str] = (), dry_run: bool = False, max_bytes: int = 20 * 1024 * 1024,
           private: Path | None = None, shared_only: bool = False) -> list[Ingested]:
    found, results = sources(paths, project=project, vault_root=curator.vault.root, private=private,
                             shared_only=shared_only)
    for path in found:
        key = _source_key(path, project)
        try:
            results.append(_one(curator, path, key, title, tags, dry_run, max_bytes))
        except (VaultError, OSError) as exc:
            results.append(Ingested(key, "error", reason=str(exc)))
    return results


def books(memories: Iterable[Memory]) -> list[Memory]:
    """The books collection, ingested documents and hand-written references alike, by title."""
    return sorted((m for m in memories if m.collection == "books"), key=lambda m: (m.title.lower(), m.id))


def _one(curator: Curator, path: Path, key: str, title: str | None, tags: Sequence[str], dry_run: bool,
         max_bytes: int) -> Ingested:
    if not path.is_file():
        raise VaultError(f"{key}: no such file")
    size = path.stat().st_size
    if size > max_bytes:
        raise VaultError(f"{key}: {size / 1e6:.1f} MB is over the {max_bytes / 1e6:.0f} MB limit "
                         f"([vault] max_document_mb in memdir.toml)")
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    existing = next((m for m in curator.index.all_memories()
                     if m.collection == "books" and m.frontmatter.get(SOURCE_PATH) == key), None)
    if existing is not None and existing.frontmatter.get(SOURCE_HASH) == digest:
        return Ingested(key, "unchanged", existing.id, existing.path, existing.title)
    document = convert(Path(key), data)  # errors name the source as the user wrote it
    if dry_run:
        status = "would-update" if existing else "would-create"
        return Ingested(key, status, existing.id if existing else None, existing.path if existing else None,
                        title or document.title, document.kind, document.parts)
    if existing is not None:
        written = curator.vault.edit(existing, Change(fields={SOURCE_HASH: digest}, body=document.markdown))
        if curator.index.writable:
            curator.index.sync([written.path])
        return Ingested(key, "updated", written.id, written.path, written.title, document.kind, document.parts)
    fields = new_memory_fields(document.markdown, title=title or document.title, type="fact", collection="books",
                               tags=tags, extra={SOURCE_PATH: key, SOURCE_HASH: digest, "source_kind": document.kind},
                               max_chars=max(curator.max_content_chars, len(document.markdown) + 1))
    memory = curator.vault.create_new("books", fields, document.markdown)
    if curator.index.writable:
        curator.index.sync([memory.path])
    return Ingested(key, "created", memory.id, memory.path, memory.title, document.kind, document.parts)


def _source_key(path: Path, project: Path, *, resolve: bool = True) -> str:
    """The source as written into frontmatter: relative to the project when inside it (so the
    file means the same in every clone), else absolute."""
    resolved = path.resolve() if resolve else path.absolute()
    try:
        return resolved.relative_to(project.resolve()).as_posix()
    except ValueError:
        return os.fspath(resolved)
