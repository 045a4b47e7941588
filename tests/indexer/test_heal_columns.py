"""A heal compares FAISS and Whoosh with the manifest's ids held as flat columns (issue 32 item 5: the sets of Python ints
were +217 MB of peak at 100k memories): what it removes and re-indexes is what a crash left, among rows read at the
open and entries decoded since alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexer.embed import HashingEmbedder
from indexer.index import Index
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index, state
from vault import Vault

STRAY = 4242424242


def test_a_heal_removes_stray_vectors_and_reindexes_exactly_the_files_missing_an_id(hashing_root: Path):
    for n in range(6):
        write(hashing_root, f"history/n{n}.md", memory_text(f"m-0000000{n}", f"Note {n}", f"the heron queue {n} stalled"))
    index = open_index(hashing_root)
    expected = state(index)
    index._vectors.remove(index._entries["history/n1.md"].unit_ids[-1:])  # a unit's vector lost
    index._keyword.delete_chunks(index._entries["history/n4.md"].chunk_ids[:1])  # a chunk's keyword document lost
    index._vectors.add([STRAY], np.ones((1, index._vectors.dim), dtype=np.float32), [True])  # a vector nobody owns
    index._vectors.save(index.generation)
    index.close()
    reopened = Index.open(Vault(hashing_root), HashingEmbedder(), reconcile=False)
    try:
        assert reopened._entries["history/n4.md"].chunk_ids  # decoded since the open: an entry, not a row
        assert reopened.heal() == 2  # n1 and n4, no other
        assert STRAY not in reopened._vectors.ids()
        assert state(reopened) == expected
    finally:
        reopened.close()
