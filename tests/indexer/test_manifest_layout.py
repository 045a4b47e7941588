"""A manifest row holds a memory's values without its field names (a cold open decodes every row), and rows
written in an older form or an older field list still read back as the memory that was written."""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import date, datetime, timezone
from pathlib import Path
from types import MappingProxyType

import pytest

from indexer import manifest as manifest_module
from indexer.manifest import LAYOUT_KEY, Entry, Manifest, _tag, encode_memory
from vault import Memory

MEMORY = Memory(
    id="m-1", path="notes/a.md", collection="notes", type="pattern", title="A", body="Body text.\n",
    tags=("db",), supersedes=("m-0",), created_at=datetime(2026, 10, 1, 12, tzinfo=timezone.utc), uses=3,
    status="superseded",
    frontmatter=MappingProxyType({"id": "m-1", "title": "A", "tags": ["db"], "due": date(2026, 11, 2),
                                  "nested": {"a": [1, {"b": datetime(2026, 1, 1)}], "$dt": "not a tag"}}),
    content_hash="ab" * 32, body_hash="cd" * 32,
)


def written(tmp_path: Path, memory: Memory = MEMORY) -> Manifest:
    manifest = Manifest(tmp_path / "manifest.sqlite")
    manifest.write([Entry(memory.path, 11, 22, memory.content_hash, memory.id, (7,), memory=memory)], [])
    return manifest


def set_memory_text(manifest: Manifest, text: str) -> None:
    manifest._db.execute("UPDATE files SET memory = ?", (text,))


def read_back(manifest: Manifest) -> Memory:
    (entry,) = list(manifest.entries())
    assert entry.memory is not None
    return entry.memory


def test_a_row_written_now_names_no_field_and_reads_back_as_the_memory(tmp_path):
    manifest = written(tmp_path)
    (text,) = manifest._db.execute("SELECT memory FROM files").fetchone()
    assert text.startswith('["') and '"body_hash"' not in text and '"created_at"' not in text
    decoded = read_back(manifest)
    assert decoded == MEMORY and dict(decoded.frontmatter) == dict(MEMORY.frontmatter)
    assert isinstance(decoded.supersedes, tuple) and isinstance(decoded.frontmatter["due"], date)


def test_a_row_written_in_the_named_map_form_still_reads_back(tmp_path):
    manifest = written(tmp_path)
    data = {f.name: getattr(MEMORY, f.name) for f in fields(Memory)}
    data["frontmatter"] = dict(MEMORY.frontmatter)
    set_memory_text(manifest, json.dumps(_tag(data), ensure_ascii=False))  # how rows were written before
    assert read_back(manifest) == MEMORY


def test_a_row_written_with_an_older_field_list_reads_back_by_the_names_its_manifest_kept(tmp_path):
    manifest = written(tmp_path)
    older = tuple(reversed(manifest_module._FIELDS))  # another order: decoding by position alone would fail
    values = [_tag(dict(MEMORY.frontmatter) if name == "frontmatter" else getattr(MEMORY, name)) for name in older]
    set_memory_text(manifest, json.dumps(["0ld1ay0ut000"] + values))
    manifest.set_meta({LAYOUT_KEY + "0ld1ay0ut000": json.dumps(older)})
    assert read_back(manifest) == MEMORY


def test_a_row_in_a_layout_its_manifest_does_not_name_is_refused_with_a_reason(tmp_path):
    manifest = written(tmp_path)
    set_memory_text(manifest, encode_memory(MEMORY).replace(manifest_module._LAYOUT, "unkn0wn00000", 1))
    with pytest.raises(ValueError, match="unkn0wn00000"):
        read_back(manifest)


def test_the_manifest_names_the_layout_its_rows_are_written_in(tmp_path):
    manifest = written(tmp_path)
    assert manifest._layouts()[manifest_module._LAYOUT] == tuple(f.name for f in fields(Memory))
