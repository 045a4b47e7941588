"""What a cold open reads of each manifest row, kept as numbers in a table beside the files table.

An open made the index's owner tables from every row's columns: chunk -> (memory, heading) from the chunk ids (a hash
of each row's id to tell a whole memory's one chunk from a section's), the whole units from the units' JSON, and a
first search found the rows naming a speaker, an author or a mark by scanning every row's text. At 100k memories that
was ~1.1 of a reader's ~3.8 CPU s to its first answer (bench/results/s20-open20.md, issue 32 item 5). Each row's
answers are three numbers, written with the row (Manifest.write) as one text, "chunk whole marks":

- chunk: the row's one chunk id when that chunk is its whole memory (the empty key, no heading), else NONE;
- whole: its one whole unit's id when it has exactly one, else NONE;
- marks: a bit for each of WORDS its stored memory text holds (the test `Memories.facet_rows` makes of the text).

A row with NONE (a book's sections, a long memory, an error) is read from its columns as before. An open reads the
table as one text (SQLite joins the rows' texts in path order, numpy parses it), trusted under the files table's stamp
as the facts and link tables are (Manifest._stamped), under a key that names WORDS: other words, another table.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, Sequence

import numpy as np

from .chunking import WHOLE, chunk_id

# The quoted keys whose rows an open or a first search reads (Index._remember_rows, Index._built_facets).
WORDS = ('"speaker"', '"author"', '"always_inject"', '"privacy"', '"previous"')
NONE = -1  # no such number: read the row's columns (ids are hashes masked to 63 bits, never negative)
KEY = "open_columns:" + hashlib.sha256(" ".join(WORDS).encode()).hexdigest()[:12]
NUMBERS = 3  # chunk, whole, marks
CHUNK, WHOLE_UNIT, MARKS = range(NUMBERS)


def numbers(memory_id: str | None, chunk_ids: Sequence[int], units: Iterable[Sequence[Any]], memory: str | None) -> str:
    """A row's "chunk whole marks", from its memory id, chunk ids, (unit, chunk, role) units and stored memory text."""
    if not memory_id or not memory:
        return f"{NONE} {NONE} 0"
    chunk = chunk_ids[0] if len(chunk_ids) == 1 and chunk_ids[0] == chunk_id(memory_id, "") else NONE
    wholes = [unit for unit, _, role in units if role == WHOLE]
    marks = sum(1 << bit for bit, word in enumerate(WORDS) if word in memory)
    return f"{chunk} {wholes[0] if len(wholes) == 1 else NONE} {marks}"


def numbers_of_columns(memory_id: str | None, chunk_ids: str | None, units: str | None, memory: str | None) -> str:
    """`numbers` of a files-table row as stored (the owner's migration of a generation written before the table)."""
    return numbers(memory_id, json.loads(chunk_ids or "[]"), json.loads(units or "[]"), memory)


def parsed(text: str | None, rows: int) -> np.ndarray | None:
    """The table's joined text as a (rows, NUMBERS) array; None when it does not hold `rows` rows."""
    found = np.fromstring(text, dtype=np.int64, sep=" ") if text else np.zeros(0, dtype=np.int64)
    return found.reshape(-1, NUMBERS) if len(found) == rows * NUMBERS else None


def bits(words: Iterable[str]) -> int | None:
    """The marks of these words, None when one of them is not among WORDS."""
    found = 0
    for word in words:
        if word not in WORDS:
            return None
        found |= 1 << WORDS.index(word)
    return found
