"""A memory's embed hash, one digest per unit: which of its vectors a re-chunk leaves as they are.

When exchange N+1 is captured, exchange N is chunked again: it gains a `next` unit, and its other units read what they
read before. One hash over all its units told only that something changed, so every unit of N was removed from FAISS
and added back (from the embedding cache), and removing a whole-chunk unit is a scan of FAISS's searched part
(vectors.py: 170 ms at 100k memories, even for one id). With a digest per unit (its id and text), a re-chunk replaces
the units whose text changed and keeps the others: a kept unit's vector is the one a rebuild would embed again.

The hash is "u:" and the units' 8-byte digests in unit order, base64: 66 characters for six units, about the 64 of
the sha256 over all of them it replaces. Entries written before it (a sha256 in hex) are still read: an unchanged memory
keeps every unit, a changed one replaces them all, as before.
"""

from __future__ import annotations

import base64
import hashlib
import binascii
from typing import Sequence

from vault.parse import sha256

from .chunking import Unit

PREFIX = "u:"
DIGEST_BYTES = 8


def embed_hash(units: Sequence[Unit]) -> str:
    """The hash of a memory's embedded texts (equal: nothing to embed again), its units' digests in order."""
    return PREFIX + base64.b64encode(b"".join(_digest(u) for u in units)).decode("ascii")


def kept_units(old_hash: str, old_units: Sequence[int], units: Sequence[Unit]) -> set[int]:
    """The ids of `units` whose vectors, indexed under `old_hash` for `old_units` (the entry's unit ids in order),
    read the same text: left as they are. All or none for a hash written before the digests (`_legacy`)."""
    if not old_hash.startswith(PREFIX):
        return {u.unit_id for u in units} if old_hash and old_hash == _legacy(units) else set()
    old = _unit_digests(old_hash, old_units)
    return {u.unit_id for u in units if old.get(u.unit_id) == _digest(u)}


def reads(embed_hash: str, unit_ids: Sequence[int], unit_id: int, text: str) -> bool:
    """Whether unit `unit_id` of an entry (its hash and unit ids in order) reads `text`. The backfill asks it of the
    vectors it made while a sync re-chunked their memory: a unit the re-chunk kept gets them. False for a hash
    written before the digests (one hash for every text: the caller compares it whole)."""
    return _unit_digests(embed_hash, unit_ids).get(unit_id) == _text_digest(unit_id, text)


def _unit_digests(embed_hash: str, unit_ids: Sequence[int]) -> dict[int, bytes]:
    """Each unit's digest in a digests hash written for `unit_ids` (in order); none for a hash written before the
    digests, or one that is not of these units (cannot happen unless the row was edited): nothing is kept."""
    if not embed_hash.startswith(PREFIX):
        return {}
    try:
        packed = base64.b64decode(embed_hash[len(PREFIX):], validate=True)
    except binascii.Error:
        return {}
    if len(packed) != DIGEST_BYTES * len(unit_ids):
        return {}
    return {unit: packed[i * DIGEST_BYTES:(i + 1) * DIGEST_BYTES] for i, unit in enumerate(unit_ids)}


def _digest(unit: Unit) -> bytes:
    return _text_digest(unit.unit_id, unit.text)


def _text_digest(unit_id: int, text: str) -> bytes:
    """A unit's id and text: an id whose case changed gets new unit ids, and new digests, for the same texts."""
    return hashlib.blake2b(f"{unit_id}\x1e{text}".encode(), digest_size=DIGEST_BYTES).digest()


def _legacy(units: Sequence[Unit]) -> str:
    """The hash an entry was written with before the digests: one sha256 over every unit's id and text."""
    return sha256("\x1f".join(f"{u.unit_id}\x1e{u.text}" for u in units))
