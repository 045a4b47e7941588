"""Which memory owns each unit (a vector) or chunk (a keyword document), held as int columns.

A dict from id to a (memory id, label) tuple cost about 100 bytes per unit (the dict slot, the int,
the tuple); a vault of 100k memories has over 600k units. Here an id costs 16 bytes: sorted int64
ids, and int32 codes into two string tables (memory ids; roles or headings), each string held once.

Changes are buffered (a dict of rows added, a set of ids removed) and folded into the columns when
the buffer grows past a share of the table, so a sync that changes a few memories never rewrites
the columns, and a load that adds every row folds them a bounded number of times.
"""

from __future__ import annotations

from array import array
from typing import Iterable, Iterator, Sequence

import numpy as np

from .arrays import sorted_contains

FOLD_AT = 4096  # buffered changes folded into the columns past this many (or an eighth of the table)


class Owners:
    def __init__(self) -> None:
        self._ids = np.zeros(0, dtype=np.int64)
        self._owner = np.zeros(0, dtype=np.int32)
        self._label = np.zeros(0, dtype=np.int32)
        self._names: list[str] = []
        self._name_code: dict[str, int] = {}
        self._labels: list[str] = []
        self._label_code: dict[str, int] = {}
        self._added: dict[int, tuple[str, str]] = {}
        self._removed: set[int] = set()  # ids that may still be in the columns

    @classmethod
    def of(cls, rows: Iterable[tuple[int, tuple[str, str]]]) -> Owners:
        """A table of these rows (a later row of an id replaces an earlier one, as `update`), made in one pass into
        the columns: a load's every row went through the buffer's dict first (600k rows at 100k memories)."""
        table = cls()
        ids, owner, label = array("q"), array("i"), array("i")
        names, name_code, labels, label_code = table._names, table._name_code, table._labels, table._label_code
        last_name: str | None = None
        last_code = -1
        for item_id, (name, text) in rows:
            if name is not last_name:  # a memory's rows come together: its code is looked up once
                last_name, last_code = name, cls._code(names, name_code, name)
            code = label_code.get(text)  # most labels are known: one dict lookup, not a call, per row
            ids.append(item_id)
            owner.append(last_code)
            label.append(cls._code(labels, label_code, text) if code is None else code)
        return cls.of_columns(np.frombuffer(ids, dtype=np.int64), np.frombuffer(owner, dtype=np.int32), names,
                              np.frombuffer(label, dtype=np.int32), labels)

    @classmethod
    def of_columns(cls, ids: np.ndarray, owner: np.ndarray, names: list[str], label: np.ndarray,
                   labels: list[str]) -> Owners:
        """A table of rows given as columns: ids, and codes into `names` and `labels` (a cold open makes them from the
        manifest's columns without a Python tuple a row). A later row of an id replaces an earlier one."""
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        # The code tables, whose sizes tell a string given two codes (a set of the 100k names besides cost as much).
        name_code, label_code = dict(zip(names, range(len(names)))), dict(zip(labels, range(len(labels))))
        again = len(name_code) != len(names) or len(label_code) != len(labels)
        if again or (len(sorted_ids) > 1 and bool(np.any(sorted_ids[1:] == sorted_ids[:-1]))):  # or an id twice
            table = cls()
            table.update((int(i), (names[o], labels[r])) for i, o, r in zip(ids.tolist(), owner.tolist(), label.tolist()))
            table._fold()
            return table
        table = cls()
        table._ids, table._owner, table._label = sorted_ids, owner[order], label[order]
        table._names, table._labels = list(names), list(labels)
        table._name_code, table._label_code = name_code, label_code
        return table

    def __setitem__(self, item_id: int, owner: tuple[str, str]) -> None:
        self._added[item_id] = owner
        self._removed.discard(item_id)
        self._maybe_fold()

    def update(self, rows: Iterable[tuple[int, tuple[str, str]]]) -> None:
        """Set many rows, folded once (a load sets every row: one by one it would fold every few thousand)."""
        for item_id, owner in rows:
            self._added[item_id] = owner
            if self._removed:
                self._removed.discard(item_id)
        self._maybe_fold()

    def pop(self, item_id: int, default: None = None) -> tuple[str, str] | None:
        found = self.get(item_id)
        if found is not None:
            self._added.pop(item_id, None)
            self._removed.add(item_id)
            self._maybe_fold()
        return found

    def get(self, item_id: int) -> tuple[str, str] | None:
        found = self._added.get(item_id)
        if found is not None or item_id in self._removed:
            return found
        row = self._row(item_id)
        if row is None:
            return None
        return self._names[self._owner[row]], self._labels[self._label[row]]

    def get_many(self, item_ids: Sequence[int]) -> list[tuple[str, str] | None]:
        """`get` of each id, the columns searched once for all of them: a search asks for hundreds (a scalar
        searchsorted each cost it 2.7 ms at 100k memories)."""
        if not len(item_ids):
            return []
        asked = np.asarray(item_ids, dtype=np.int64)
        found: list[tuple[str, str] | None] = [None] * len(asked)
        if len(self._ids):
            place = np.minimum(np.searchsorted(self._ids, asked), len(self._ids) - 1)
            rows = np.flatnonzero(self._ids[place] == asked)
            names, labels = self._names, self._labels
            for row, name, label in zip(rows.tolist(), self._owner[place[rows]].tolist(), self._label[place[rows]].tolist()):
                found[row] = names[name], labels[label]
        if self._added or self._removed:  # the buffer overrides the columns
            for row, item_id in enumerate(asked.tolist()):
                if item_id in self._added:
                    found[row] = self._added[item_id]
                elif item_id in self._removed:
                    found[row] = None
        return found

    def __contains__(self, item_id: object) -> bool:
        return isinstance(item_id, (int, np.integer)) and self.get(int(item_id)) is not None

    def __len__(self) -> int:
        self._fold()
        return len(self._ids)

    def __iter__(self) -> Iterator[int]:
        self._fold()
        return iter(self._ids.tolist())

    def items(self) -> list[tuple[int, tuple[str, str]]]:
        """Every (id, (memory id, label)), ids ascending."""
        self._fold()
        names, labels = self._names, self._labels
        return [(i, (names[o], labels[r])) for i, o, r in
                zip(self._ids.tolist(), self._owner.tolist(), self._label.tolist())]

    def columns(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The ids (sorted), the code of each one's memory, and the memory ids the codes index."""
        self._fold()
        return self._ids, self._owner, self._names

    def ids_of(self, names: Iterable[str], label: str) -> np.ndarray:
        """The ids (sorted) with this label whose memory is one of `names`, the buffer read as it is: a search asks this
        after every change, and folding the buffer first re-sorted 600k rows (20-90 ms at 100k memories)."""
        wanted = set(names)
        found = np.zeros(0, dtype=np.int64)
        code = self._label_code.get(label)
        codes = [self._name_code[name] for name in wanted if name in self._name_code]
        if code is not None and codes and len(self._ids):
            found = self._ids[(self._label == code) & np.isin(self._owner, np.array(codes, dtype=np.int32))]
        if self._added or self._removed:  # the buffer overrides the columns
            stale = self._removed | self._added.keys()
            if stale and len(found):
                found = found[~np.isin(found, np.fromiter(stale, dtype=np.int64, count=len(stale)))]
            extra = [item_id for item_id, (name, text) in self._added.items() if text == label and name in wanted]
            if extra:
                found = np.union1d(found, np.array(extra, dtype=np.int64))
        return found

    # -- internals ---------------------------------------------------------------------

    def _row(self, item_id: int) -> int | None:
        place = int(np.searchsorted(self._ids, item_id))
        return place if place < len(self._ids) and self._ids[place] == item_id else None

    def _maybe_fold(self) -> None:
        if len(self._added) + len(self._removed) > max(FOLD_AT, len(self._ids) // 8):
            self._fold()

    def _fold(self) -> None:
        if not self._added and not self._removed:
            return
        drop = set(self._removed) | self._added.keys()  # an added id replaces its old row
        if drop and len(self._ids):
            keep = ~sorted_contains(np.sort(np.fromiter(drop, dtype=np.int64, count=len(drop))), self._ids)
            ids, owner, label = self._ids[keep], self._owner[keep], self._label[keep]
        else:
            ids, owner, label = self._ids, self._owner, self._label
        if self._added:
            new_ids = np.fromiter(self._added.keys(), dtype=np.int64, count=len(self._added))
            new_owner = np.fromiter((self._code(self._names, self._name_code, name) for name, _ in self._added.values()),
                                    dtype=np.int32, count=len(self._added))
            new_label = np.fromiter((self._code(self._labels, self._label_code, lab) for _, lab in self._added.values()),
                                    dtype=np.int32, count=len(self._added))
            ids, owner, label = (np.concatenate((ids, new_ids)), np.concatenate((owner, new_owner)),
                                 np.concatenate((label, new_label)))
            order = np.argsort(ids, kind="stable")
            ids, owner, label = ids[order], owner[order], label[order]
        self._ids, self._owner, self._label = ids, owner, label
        self._added, self._removed = {}, set()
        # Each row names one memory and one label, so tables longer than the rows hold strings of rows gone.
        if len(self._names) > len(ids) + FOLD_AT:
            self._owner, self._names, self._name_code = _compact(self._owner, self._names)
        if len(self._labels) > len(ids) + FOLD_AT:
            self._label, self._labels, self._label_code = _compact(self._label, self._labels)

    @staticmethod
    def _code(table: list[str], codes: dict[str, int], text: str) -> int:
        code = codes.get(text)
        if code is None:
            code = codes[text] = len(table)
            table.append(text)
        return code


def _compact(codes: np.ndarray, table: list[str]) -> tuple[np.ndarray, list[str], dict[str, int]]:
    used, remapped = np.unique(codes, return_inverse=True)
    kept = [table[c] for c in used.tolist()]
    return remapped.astype(np.int32), kept, {text: i for i, text in enumerate(kept)}
