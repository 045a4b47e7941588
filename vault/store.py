"""A vault on disk: find, read, create, change and trash memories, with no index involved."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from . import atomic, markdown
from . import frontmatter as fm
from .anchors import KEY as anchor_key
from .anchors import Anchors, anchor_problems, parse_anchors
from .errors import ConflictError, NotFoundError, ParseError, ValidationError
from .ids import check_id, identity_key, new_id, slug
from .model import COLLECTIONS, DEFAULT_TYPE, PRIVACY, SCORED_COLLECTIONS, TYPES, Memory
from .parse import parse
from .paths import Skipped, relative, resolve_inside, walk
from .settings import VaultSettings
from .write import Change, Writer, utc_now

GITIGNORE = """# memdir: derived indices and server state are rebuilt from the files
.memdir/
# working memories are ephemeral; promoted ones move to history/ and are committed
working/
# deleted memories wait here for a local restore; git history already keeps every committed version
.trash/
# Obsidian per-device state
.obsidian/workspace.json
.obsidian/workspaces.json
"""


@dataclass(frozen=True, slots=True)
class Problem:
    """A file that is not (or not usable as) a memory: what `memdir doctor` reports."""

    path: str
    line: int | None
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Scan:
    memories: tuple[Memory, ...]
    problems: tuple[Problem, ...] = field(default=())

    def by_id(self) -> dict[str, Memory]:
        return {identity_key(m.id): m for m in self.memories}


class Vault:
    """One vault folder. All changes go through its Writer."""

    def __init__(self, root: Path, settings: VaultSettings | None = None, *, source: str = "project") -> None:
        self.root = Path(root).absolute()
        self.settings = settings or VaultSettings()
        self.source = source
        # The user vault lives outside any project: its memories cite no project files.
        self.anchors = Anchors(self.root) if source == "project" else None
        self.writer = Writer(self.root, max_bytes=self.settings.max_file_bytes, source=source,
                             scan_secrets=self.settings.scan_secrets, anchors=self.anchors)

    # -- reading ------------------------------------------------------------------------

    def load(self, relative_path: str) -> Memory:
        data = atomic.read_bytes(self.root / relative_path)
        if data is None:
            raise NotFoundError(f"{relative_path} does not exist")
        return parse(data, relative_path, max_bytes=self.settings.max_file_bytes, source=self.source)

    def load_file(self, path: Path) -> Memory:
        return self.load(relative(self.root, path))

    def scan(self, paths: Iterable[Path | Skipped] | None = None) -> Scan:
        """Read every memory; bad files become Problems and never stop the rest."""
        memories: list[Memory] = []
        problems: list[Problem] = []
        for item in walk(self.root) if paths is None else paths:
            if isinstance(item, Skipped):
                problems.append(Problem(item.path, None, item.reason))
                continue
            try:
                memories.append(self.load_file(item))
            except NotFoundError:
                continue  # removed since the walk listed it (the lifecycle, git, a person): not a memory now
            except ParseError as exc:
                problems.append(Problem(exc.path, exc.line, exc.reason))
            except OSError as exc:
                problems.append(Problem(relative(self.root, item), None, f"cannot read: {exc.strerror}"))
        kept, duplicates = resolve_duplicate_ids(memories)
        return Scan(tuple(kept), tuple(problems + duplicates))

    def find(self, memory_id: str) -> Memory:
        """Look a memory up by id by reading the vault (the indexer offers a faster map)."""
        check_id(memory_id)
        wanted = identity_key(memory_id)
        for memory in self.scan().memories:
            if identity_key(memory.id) == wanted:
                return memory
        raise NotFoundError(f"no memory with id {memory_id!r}")

    def resolve(self, user_path: str) -> Path:
        return resolve_inside(self.root, user_path)

    # -- writing ------------------------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        title: str | None = None,
        type: str | None = None,
        collection: str = "memory_bank",
        tags: Iterable[str] = (),
        extra: Mapping[str, Any] | None = None,
        now: datetime | None = None,
        allow_secrets: bool = False,
    ) -> Memory:
        """Write a new memory into its collection's folder and return it (SecretError for credentials)."""
        fields = new_memory_fields(
            content, title=title, type=type, collection=collection, tags=tags, extra=extra, now=now,
            max_chars=self.settings.max_content_chars,
        )
        return self.create_new(collection, fields, content.strip() + "\n", allow_secrets=allow_secrets)

    def create_new(self, collection: str, fields: Mapping[str, Any], body: str, *,
                   allow_secrets: bool = False, named: str | None = None) -> Memory:
        """Write a new memory at `<collection>/<slug of its title (or of `named`)>.md`, made unique with its id
        when that name is taken.

        A name taken between the look and the write (two sessions capturing the same prompt at once) moves the
        write on to the next name: the create itself is the check, so a new memory is never lost to a race."""
        base = slug(named if named is not None else str(fields["title"]))
        for name in (f"{base}.md", f"{base}-{fields['id']}.md"):
            if (self.root / collection / name).exists():
                continue
            try:
                return self.writer.create(f"{collection}/{name}", fields, body, allow_secrets=allow_secrets)
            except ConflictError:
                continue  # taken between the look and the write
        # Raises ConflictError when even this is taken: the id itself is, and that is not a name to step around.
        return self.writer.create(f"{collection}/{fields['id']}.md", fields, body, allow_secrets=allow_secrets)

    def edit(self, memory: Memory, change: Change, *, allow_secrets: bool = False) -> Memory:
        return self.writer.update(memory, change, allow_secrets=allow_secrets)

    def edit_all(self, edits: Sequence[tuple[Memory, Change]]) -> list[Memory]:
        """Several counter or field changes as one: all applied or none (Writer.update_all)."""
        return self.writer.update_all(edits)

    def verify(self, memory: Memory) -> Memory:
        """Re-anchor a memory to its cited files as they are now (someone confirmed it still holds)."""
        if self.anchors is None:
            return memory
        fields, remove = self.anchors.fields_for(memory.body, memory.frontmatter, fresh=True)
        return self.writer.update(memory, Change(fields=fields, remove=remove))

    def stale(self, memory: Memory) -> list[dict[str, Any]]:
        """The cited files that changed under a memory since it was anchored ([] when fresh)."""
        if self.anchors is None or memory.source != self.source:
            return []
        return [s.as_dict() for s in self.anchors.stale(memory)]

    def anchor_problems(self, memories: Iterable[Memory]) -> list[Problem]:
        """A hand-edited anchor key that cannot be read, with its file line: the memory itself is still served."""
        problems = []
        for memory in memories:
            if memory.frontmatter.get(anchor_key) is None or not parse_anchors(memory.frontmatter[anchor_key])[1]:
                continue
            data = atomic.read_bytes(self.root / memory.path) or b""
            try:
                lines = fm.load(fm.split(data.decode("utf-8")).frontmatter or "").lines
            except (fm.FrontmatterError, UnicodeDecodeError):
                lines = {}
            problems += [Problem(memory.path, line, reason) for line, reason in anchor_problems(memory.frontmatter, lines)]
        return problems

    def trash(self, memory: Memory) -> str:
        return self.writer.trash(memory)

    def restore(self, trash_path: str, relative_path: str) -> Memory:
        return self.writer.restore(trash_path, relative_path)


def new_memory_fields(
    content: str,
    *,
    title: str | None,
    type: str | None,
    collection: str,
    tags: Iterable[str] = (),
    extra: Mapping[str, Any] | None = None,
    now: datetime | None = None,
    max_chars: int = 20_000,
) -> dict[str, Any]:
    """The frontmatter of a new memory, validated; shared by the CLI, tools and hooks."""
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("content is empty")
    if len(content) > max_chars:
        raise ValidationError(f"content is {len(content):,} characters; the limit is {max_chars:,}")
    if collection not in COLLECTIONS:
        raise ValidationError(f"unknown collection {collection!r}; expected one of: {', '.join(COLLECTIONS)}")
    memory_type = type or DEFAULT_TYPE[collection]
    if memory_type not in TYPES:
        raise ValidationError(f"unknown type {memory_type!r}; expected one of: {', '.join(TYPES)}")
    clean_tags = [t.strip().lstrip("#") for t in tags if t and t.strip().lstrip("#")]
    fields: dict[str, Any] = {
        "id": new_id(),
        "collection": collection,
        "type": memory_type,
        "title": (title or _title_from(content)).strip()[:200],
        "tags": clean_tags,
        "created_at": now or utc_now(),
    }
    if collection in SCORED_COLLECTIONS:
        fields.update(score=0.5, uses=0, success_count=0.0, outcomes=[])
    for key, value in (extra or {}).items():
        if key in fields and key not in ("score",):
            raise ValidationError(f"'{key}' is set by memdir and cannot be given as an extra field")
        fields[key] = value
    if fields.get("privacy", "shared") not in PRIVACY:
        raise ValidationError(f"privacy must be one of: {', '.join(PRIVACY)}")
    return fields


def _title_from(content: str) -> str:
    """The first line of prose (a heading's text without its marks); a fence line is never a title, and
    text that is all code is titled by its first line of code."""
    lines = list(markdown.fenced(content.splitlines()))
    prose = (line for line, in_code in lines if not in_code and line.strip())
    code = (line for line, in_code in lines  # fence lines (opening or closing) hold no words
            if in_code and markdown.opening_fence(line) is None and line.strip().strip("`~"))
    first = next(prose, None) or next(code, None) or "memory"
    first = first.strip(" #\t")
    return first if len(first) <= 80 else first[:77].rstrip() + "…"


def id_precedence(memory: Memory) -> tuple[bool, float, int, str]:
    """Which of two files claiming one id keeps it: the oldest, then the shortest path (the file and the
    index apply the same rule, so a scan and an incrementally updated index agree)."""
    created = memory.created_at.timestamp() if memory.created_at else 0.0
    return (memory.created_at is None, created, len(memory.path), memory.path)


_DUPLICATE_ID = "duplicate id"


def duplicate_id_reason(memory_id: str, holder: str) -> str:
    return f"{_DUPLICATE_ID} {memory_id!r} (also in {holder}); give this file a new id"


def is_duplicate_id_reason(reason: str | None) -> bool:
    """The problem of a file that lost its id to another file (it waits to take the id over)."""
    return (reason or "").startswith(_DUPLICATE_ID)


def resolve_duplicate_ids(memories: list[Memory]) -> tuple[list[Memory], list[Problem]]:
    """Two files with one id: the oldest (then the shortest path) keeps it; the others are reported."""
    groups: dict[str, list[Memory]] = {}
    for memory in memories:
        groups.setdefault(identity_key(memory.id), []).append(memory)
    kept: list[Memory] = []
    problems: list[Problem] = []
    for group in groups.values():
        group.sort(key=id_precedence)
        kept.append(group[0])
        problems.extend(Problem(other.path, other.id_line, duplicate_id_reason(other.id, group[0].path))
                        for other in group[1:])
    kept.sort(key=lambda m: m.path)
    return kept, problems


def init_vault(root: Path, config_text: str) -> list[str]:
    """Create the folders, .gitignore and memdir.toml that are missing; returns what was created."""
    created: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    for name in COLLECTIONS:
        if not (root / name).exists():
            (root / name).mkdir()
            created.append(f"{name}/")
    for name, text in ((".gitignore", GITIGNORE), ("memdir.toml", config_text)):
        try:
            atomic.create_file(root / name, text.encode())
            created.append(name)
        except ConflictError:
            pass  # never touch a file the user already has
    return created
