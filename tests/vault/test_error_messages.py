"""Errors speak the file's language: dates in ISO 8601, values cut short, never a Python repr of a date."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.conftest import memory_text, write
from vault import Vault
from vault.errors import ConflictError
from vault.write import Change


def test_a_conflict_on_a_date_names_the_date_in_iso_8601(tmp_path: Path):
    root = tmp_path / "v"
    write(root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha", extra="due: 2026-12-01T09:00:00Z\n"))
    vault = Vault(root)
    base = vault.writer.read("history/a.md")
    text = (root / "history/a.md").read_text().replace("2026-12-01T09:00:00Z", "2026-12-24T18:30:00Z")
    (root / "history/a.md").write_text(text)  # a person moved the date meanwhile
    with pytest.raises(ConflictError) as refused:
        vault.writer.update(base, Change(fields={"due": datetime(2027, 1, 5, tzinfo=timezone.utc)}))
    assert "2026-12-24T18:30:00Z" in str(refused.value) and "datetime" not in str(refused.value)

