"""A re-chunked memory keeps the vectors whose text did not change (unit_hashes.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from indexer.index import Index
from indexer.unit_hashes import _legacy
from indexer.chunking import chunks_for
from tests.conftest import memory_text, write
from tests.indexer.helpers import fresh_rebuild, open_index, state


def _turn(root: Path, letter: str, body: str, previous: str | None = None, extra: str = "") -> str:
    """A captured exchange `m-0000000<letter>` under working/, naming the one before it."""
    line = (f"previous: m-0000000{previous}\n" if previous else "") + extra
    write(root, f"working/{letter}.md", memory_text(f"m-0000000{letter}", f"\"Exchange: {body[:20]}\"",
                                                    f"User: {body}\n\nAssistant: Done. It works now.", extra=line))
    return f"m-0000000{letter}"


class _FaissCalls:
    """The unit ids a sync removes from and adds to the vector index."""

    def __init__(self, index: Index) -> None:
        self.removed: set[int] = set()
        self.added: set[int] = set()
        vectors = index._vectors
        remove, add = vectors.remove, vectors.add

        def removing(ids):  # type: ignore[no-untyped-def]
            ids = list(ids)
            self.removed.update(ids)
            return remove(ids)

        def adding(ids, found, searched):  # type: ignore[no-untyped-def]
            ids = list(ids)
            self.added.update(ids)
            return add(ids, found, searched)

        vectors.remove, vectors.add = removing, adding  # type: ignore[method-assign]


def _units(index: Index, memory_id: str) -> dict[int, str]:
    """unit id -> role of a memory's vectors."""
    return {unit: role for unit, _, role in index.units_of(memory_id)}


def test_capturing_the_next_exchange_adds_the_earlier_ones_next_unit_and_removes_none_of_its_vectors(hashing_root: Path):
    first = _turn(hashing_root, "a", "Why does the import fail? The lock is taken per statement.")
    index = open_index(hashing_root)
    before = _units(index, first)
    calls = _FaissCalls(index)
    second = _turn(hashing_root, "b", "And the retry? It waits for the lock twice.", previous="a")
    index.sync(["working/b.md"])
    after = _units(index, first)
    new = {unit: role for unit, role in after.items() if unit not in before}
    assert before.items() <= after.items() and list(new.values()) == ["next"]
    assert calls.removed == set()  # on main: every unit of the earlier exchange, added back
    assert calls.added == {*new, *_units(index, second)}
    index.close()


def test_a_chain_of_captures_and_an_edit_in_its_middle_end_equal_to_a_rebuild(hashing_root: Path, tmp_path: Path):
    index = open_index(hashing_root)
    previous = None
    for letter, body in zip("abcde", ("Set up the ledger. It has two tables.", "Add the currency column. Then migrate.",
                                      "Run the migration twice? No, once.", "Deploy to fly. The lock holds.",
                                      "Check the parser. Timezones drift.")):
        _turn(hashing_root, letter, body, previous)
        index.sync([f"working/{letter}.md"])
        previous = letter
    calls = _FaissCalls(index)
    _turn(hashing_root, "c", "Run the migration three times. Then stop.", previous="b")
    index.sync(["working/c.md"])
    # c's own units, b's next and d's previous (the pair texts that read c) changed; a, e and the rest of b and d did not
    for memory_id in ("m-0000000a", "m-0000000e"):
        assert not (calls.removed | calls.added) & set(_units(index, memory_id))
    for memory_id, changed in (("m-0000000b", "next"), ("m-0000000d", "previous")):
        units = _units(index, memory_id)
        assert {unit for unit in calls.added if unit in units} == {u for u, role in units.items() if role == changed}
    incremental = state(index)
    index.close()
    assert state(fresh_rebuild(hashing_root)) == incremental


def test_an_entry_hashed_before_the_unit_digests_keeps_its_vectors_until_a_text_changes(hashing_root: Path):
    read_again = _turn(hashing_root, "a", "Why does the import fail? The lock is taken per statement.")
    earlier = _turn(hashing_root, "x", "Where is the retry set? In the celery config.")
    index = open_index(hashing_root)
    earlier_units = set(_units(index, earlier))
    legacy = {m: _legacy([u for chunk in chunks_for(index.get(m)) for u in chunk.units]) for m in (read_again, earlier)}
    generation = index.generation
    index.close()
    with sqlite3.connect(generation / "manifest.sqlite") as db:  # the rows as a memdir before the digests wrote them
        db.executemany("UPDATE files SET embed_hash = ? WHERE memory_id = ?", [(h, m) for m, h in legacy.items()])
    index = open_index(hashing_root)
    calls = _FaissCalls(index)
    _turn(hashing_root, "a", "Why does the import fail? The lock is taken per statement.", extra="uses: 3\n")
    assert index.sync(["working/a.md"]).updated == 1  # read and chunked again, its texts unchanged
    assert calls.removed == calls.added == set()
    _turn(hashing_root, "b", "And the retry? It waits for the lock twice.", previous="x")
    index.sync(["working/b.md"])
    assert calls.removed == earlier_units  # one hash for all its texts: every unit replaced, as before
    incremental = state(index)
    index.close()
    assert state(fresh_rebuild(hashing_root)) == incremental
