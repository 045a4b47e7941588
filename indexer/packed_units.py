"""The (unit id, chunk id, role) rows of one memory's vectors, packed in one bytes object.

Every indexed file's entry lists the units it put in FAISS. As a tuple of 3-tuples that cost ~100 bytes a
unit (the tuple, two ints, the slot), ~720 bytes a memory of 7 units; packed it is 17 bytes a unit. Read
as the tuple it replaced: iterating yields (unit, chunk, role) tuples, made as they are read.
"""

from __future__ import annotations

import struct
from typing import Iterable, Iterator, Union

Row = tuple[int, int, str]
_ROLES: list[str] = []  # role code -> role ("whole", "sentence", ...): a handful, held once
_CODES: dict[str, int] = {}


class PackedUnits:
    __slots__ = ("_data",)

    def __init__(self, rows: Iterable[Row] = ()) -> None:
        rows = tuple(rows)
        n = len(rows)
        self._data = struct.pack(f"<{2 * n}q{n}B", *(u for u, _, _ in rows), *(c for _, c, _ in rows),
                                 *(_code(r) for _, _, r in rows)) if n else b""

    def __len__(self) -> int:
        return len(self._data) // 17

    def __iter__(self) -> Iterator[Row]:
        n = len(self)
        if not n:
            return iter(())
        values = struct.unpack(f"<{2 * n}q{n}B", self._data)
        return zip(values[:n], values[n:2 * n], [_ROLES[c] for c in values[2 * n:]])

    def ids(self) -> tuple[int, ...]:
        """The unit ids alone, in order."""
        n = len(self)
        return struct.unpack_from(f"<{n}q", self._data) if n else ()

    def __getitem__(self, item: Union[int, slice]) -> Union[Row, tuple[Row, ...]]:
        return tuple(self)[item]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedUnits):
            return self._data == other._data
        if isinstance(other, (tuple, list)):
            return tuple(self) == tuple(tuple(row) for row in other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._data)

    def __repr__(self) -> str:
        return repr(tuple(self))


def packed(rows: Iterable[Row]) -> PackedUnits:
    return rows if isinstance(rows, PackedUnits) else PackedUnits(rows)


def _code(role: str) -> int:
    code = _CODES.get(role)
    if code is None:
        if len(_ROLES) > 255:
            raise ValueError(f"too many unit roles to pack (a 257th: {role!r})")
        code = _CODES.setdefault(role, len(_ROLES))
        if code == len(_ROLES):
            _ROLES.append(role)
    return code
