"""Layers point one way: vault <- indexer <- mcp_server."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FORBIDDEN = {"vault": {"indexer", "mcp_server"}, "indexer": {"mcp_server"}}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_lower_layer_imports_nothing_from_the_layers_above_it(layer: str):
    offenders = {
        str(path.relative_to(REPO)): sorted(imported_packages(path) & FORBIDDEN[layer])
        for path in (REPO / layer).rglob("*.py")
        if imported_packages(path) & FORBIDDEN[layer]
    }
    assert offenders == {}


def test_the_lower_layers_read_no_settings_from_the_environment():
    """Config is read once at the entry points; vault/ and indexer/ only set process-level knobs."""
    readers = [
        f"{path.relative_to(REPO)}: {line.strip()}"
        for layer in ("vault", "indexer")
        for path in (REPO / layer).rglob("*.py")
        for line in path.read_text().splitlines()
        if ("os.environ" in line or "getenv" in line) and "setdefault" not in line
    ]
    assert readers == []
