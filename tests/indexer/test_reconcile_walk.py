"""A reconcile of the whole vault (the watcher asks for one when a pull creates a folder) walks the vault before it
takes the index lock, and under the lock looks again only at the files that walk found changed, new or gone: at
100k memories walking and comparing every file a second time under the lock kept searches waiting for tens of
seconds (issue 32 item 4). The result equals a rebuild."""

from __future__ import annotations

import os
import time
from pathlib import Path

from indexer.embed import HashingEmbedder
from indexer.index import Index
from vault import Vault

from .helpers import rebuilt_state, state


def settled(root: Path) -> None:
    """Every file saved an hour ago: none is within the file system clock's tick of a read (Index._recheck)."""
    hour_ago = time.time() - 3600
    for path in root.rglob("*.md"):
        os.utime(path, (hour_ago, hour_ago))


def test_a_whole_vault_reconcile_looks_again_under_the_lock_only_at_what_changed(hashing_example: Path,
                                                                                 tmp_path: Path):
    settled(hashing_example)
    index = Index.open(Vault(hashing_example), HashingEmbedder())
    looked_at: list[str] = []
    real_observe = index._observe

    def observe(rel, *rest):  # type: ignore[no-untyped-def]
        looked_at.append(rel)
        return real_observe(rel, *rest)

    index._observe = observe  # type: ignore[method-assign]
    try:
        every = sorted(str(p.relative_to(hashing_example)) for p in hashing_example.rglob("*.md")
                       if not any(part.startswith(".") for part in p.relative_to(hashing_example).parts))
        count = index.memory_count()  # one file deleted, one added
        changed = hashing_example / every[0]
        changed.write_text(changed.read_text() + "\nA wallaby line added by a teammate.\n")
        (hashing_example / every[1]).unlink()
        (hashing_example / "memory_bank" / "pulled").mkdir()
        (hashing_example / "memory_bank" / "pulled" / "new.md").write_text(
            "---\nid: m-new00001\ncollection: memory_bank\ntype: fact\ntitle: New\n---\nThe numbat service.\n")
        index.sync()
        assert sorted(looked_at) == sorted([every[0], every[1], "memory_bank/pulled/new.md"])
        assert index.memory("m-new00001") is not None and index.memory_count() == count
        after = {k: v for k, v in state(index).items() if k != "vectors"}
        looked_at.clear()
        index.sync(deep=True)  # deep reads and hashes every file, before the lock
        # Under the lock: at most the two files written just now, whose mtime cannot vouch for them yet (RACY_NS).
        assert set(looked_at) <= {every[0], "memory_bank/pulled/new.md"}
    finally:
        index.close()
    assert after == rebuilt_state(hashing_example, tmp_path)
