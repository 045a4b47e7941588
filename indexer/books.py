"""Ingesting reference documents into the books collection, and listing what was ingested.

One source file becomes one Markdown memory in `books/`, with `source_path` and `source_sha256`
in its frontmatter. Re-ingesting an unchanged source writes nothing; a changed one replaces the
body in place through the vault's writer (same id, same file, every other frontmatter key kept,
including a human's). Each file is its own step: one bad file is reported and the rest go in.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from vault import Change, Memory
from vault.errors import VaultError
from vault.store import new_memory_fields

from .convert import SUFFIXES, convert
from .curator import Curator

SOURCE_PATH, SOURCE_HASH = "source_path", "source_sha256"


@dataclass(frozen=True)
class Ingested:
    source: str
    status: str  # created | updated | unchanged | error (with --dry-run: would-create, would-update)
    id: str | None = None
    path: str | None = None
    title: str | None = None
    kind: str | None = None
    parts: int = 0  # pages of a PDF, sections otherwise
    reason: str = ""


def sources(paths: Iterable[Path]) -> list[Path]:
    """The files named, with folders expanded to the supported documents inside them (sorted)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                            and not any(part.startswith(".") for part in p.relative_to(path).parts))
        else:
            found.append(path)
    return found


def ingest(curator: Curator, paths: Sequence[Path], *, project: Path, title: str | None = None,
           tags: Sequence[str] = (), dry_run: bool = False, max_bytes: int = 20 * 1024 * 1024) -> list[Ingested]:
    results = []
    for path in sources(paths):
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
    existing = next((m for m in curator.index.memories.values()
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
    memory = curator.vault.writer.create(curator.vault.free_path("books", fields["title"], fields["id"]), fields,
                                         document.markdown)
    if curator.index.writable:
        curator.index.sync([memory.path])
    return Ingested(key, "created", memory.id, memory.path, memory.title, document.kind, document.parts)


def _source_key(path: Path, project: Path) -> str:
    """The source as written into frontmatter: relative to the project when inside it (so the
    file means the same in every clone), else absolute."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(project.resolve()).as_posix()
    except ValueError:
        return os.fspath(resolved)
