"""The table of every unit's owner, made from an open's units columns without parsing them as JSON."""

from __future__ import annotations

import json

from indexer.index import ROW_SLICE, _row_unit_owners


def _column(units: list[tuple[int, int, str]]) -> str:
    return json.dumps([list(u) for u in units])  # as manifest._row writes it


def _as_json(rows: list[tuple[str, str]]) -> list[tuple[int, tuple[str, str]]]:
    return sorted((unit, (memory_id, role)) for memory_id, text in rows for unit, _, role in json.loads(text or "[]"))


def test_the_unit_table_read_as_numbers_equals_the_columns_parsed_as_json():
    rows = [(f"m-{n:08x}", _column([(n * 10 + k, -n - 1, role) for k, role in enumerate(
        ("whole", "sentence", "sentence", "previous", "next")[:n % 6])])) for n in range(ROW_SLICE + 7)]
    rows[3] = ("m-big", _column([(2**63 - 1, 2**63 - 2, "whole"), (-(2**63), 5, "next")]))  # the int64 ends
    rows[4] = ("m-none", None)  # type: ignore[assignment]  # a row written without units
    assert _row_unit_owners(rows).items() == _as_json(rows)


def test_a_role_the_reader_does_not_know_is_read_as_json():
    rows = [("m-a", _column([(1, 9, "whole"), (2, 9, "summary")])), ("m-b", _column([(3, 8, "next")]))]
    assert _row_unit_owners(rows).items() == _as_json(rows) == [(1, ("m-a", "whole")), (2, ("m-a", "summary")),
                                                                (3, ("m-b", "next"))]
