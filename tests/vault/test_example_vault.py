"""The bundled example vault is a fixture: if it rots, these fail."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from vault import COLLECTIONS, Change, Vault
from vault import frontmatter as fm
from vault.paths import walk


def test_every_example_file_parses_and_the_vault_covers_the_format(example_root: Path):
    scan = Vault(example_root).scan()
    assert scan.problems == ()
    assert len(scan.memories) >= 30
    assert set(m.collection for m in scan.memories) == set(COLLECTIONS)
    assert len(set(m.type for m in scan.memories)) >= 8
    assert any(not m.has_frontmatter for m in scan.memories)
    assert any(m.id_derived and m.has_frontmatter for m in scan.memories)
    assert any(m.supersedes for m in scan.memories)
    assert max(m.uses for m in scan.memories) >= 8
    assert Counter(m.collection for m in scan.memories)["memory_bank"] >= 4


def test_every_example_file_splits_and_joins_byte_for_byte(example_root: Path):
    for path in walk(example_root):
        data = path.read_bytes()
        assert fm.split(data.decode()).text().encode() == data, path


def test_a_no_op_write_of_every_example_file_leaves_it_byte_for_byte(example_root: Path):
    vault = Vault(example_root)
    for memory in vault.scan().memories:
        if memory.id_derived:
            continue  # the first write of an id-less file pins its id: a deliberate one-line change
        before = (example_root / memory.path).read_bytes()
        vault.edit(memory, Change())
        assert (example_root / memory.path).read_bytes() == before, memory.path


def test_changing_and_restoring_every_counter_gives_back_the_original_bytes(example_root: Path):
    vault = Vault(example_root)
    for memory in vault.scan().memories:
        if memory.id_derived or not memory.has_frontmatter:
            continue
        path = example_root / memory.path
        before = path.read_bytes()
        keys = {k: v for k, v in memory.frontmatter.items() if k in ("uses", "score", "outcomes", "tags", "title")}
        changed = vault.edit(memory, Change(fields={"uses": memory.uses + 7, "tags": ["temporary"]}))
        added = tuple(k for k in ("uses", "tags") if k not in memory.frontmatter)
        vault.edit(changed, Change(fields=keys, remove=added))
        assert path.read_bytes() == before, memory.path
