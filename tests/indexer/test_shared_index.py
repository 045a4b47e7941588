"""One vault's index opened by two processes (two project servers sharing the user vault): one owner, readers."""

from __future__ import annotations

from pathlib import Path

from indexer.curator import Curator
from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.conftest import memory_text, write
from vault import Vault
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings


def open_user_index(root: Path) -> Index:
    return Index.open(Vault(root, source="user"), HashingEmbedder(), writable=True)


def test_a_second_opener_reads_the_index_and_catches_up_when_the_owner_commits(hashing_root: Path):
    write(hashing_root, "memory_bank/a.md", memory_text("m-000000a1", "Editor", "I use helix.", collection="memory_bank"))
    owner = open_user_index(hashing_root)
    reader = open_user_index(hashing_root)  # the flock is taken: this one only reads
    assert owner.writable and not reader.writable and set(reader.memory_ids()) == {"m-000000a1"}
    write(hashing_root, "memory_bank/b.md", memory_text("m-000000b2", "Shell", "I use fish.", collection="memory_bank"))
    owner.sync()
    assert reader.refresh() is False and set(reader.memory_ids()) == {"m-000000a1", "m-000000b2"}
    assert reader.get("m-000000b2").source == "user"
    owner.close()
    reader.close()


def test_a_reader_takes_the_index_over_when_the_owner_goes(hashing_root: Path):
    owner = open_user_index(hashing_root)
    reader = open_user_index(hashing_root)
    owner.close()
    write(hashing_root, "memory_bank/c.md", memory_text("m-000000c3", "Font", "I like Iosevka.", collection="memory_bank"))
    assert reader.refresh() is True and reader.writable
    assert "m-000000c3" in reader  # the new owner reconciled what changed while nobody owned it
    reader.close()


def test_a_reader_writes_files_only_and_the_owner_indexes_them(hashing_root: Path):
    owner = open_user_index(hashing_root)
    reader = open_user_index(hashing_root)
    curator = Curator(reader, ScoringSettings(), LifecycleSettings(), DedupSettings())
    added = curator.add("I review pull requests after lunch.", type="preference")
    assert (hashing_root / added.memory.path).is_file() and added.memory.id not in reader
    owner.sync()  # the owner's watcher does this in a server
    reader.refresh()
    assert added.memory.id in reader
    owner.close()
    reader.close()
