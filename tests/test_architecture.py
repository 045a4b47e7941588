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


# -- import circles and rooms ------------------------------------------------------------------------------
# Every import counts, also those inside functions: the project imports heavy or late pieces lazily (hooks,
# `memdir mcp` and --help must start light), but a lazy import in a circle still ties two modules to each
# other, and each of the circles this test was written against ran through one.
LAYERS = ("vault", "indexer", "mcp_server")


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {module_name(path): path for layer in LAYERS for path in (REPO / layer).rglob("*.py")}


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports: `from p import m` names module p.m when there is one, else p."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` names a.b.c; an attribute names its module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_no_two_modules_import_each_other_even_through_a_circle():
    assert circles(import_graph()) == []


def room_of(module: str) -> str:
    """mcp_server's rooms are its sub-packages; its top-level modules (entry, client, config...) stand alone."""
    parts = module.split(".")
    return ".".join(parts[:2]) if (REPO.joinpath(*parts[:2]) / "__init__.py").exists() else module


def test_the_rooms_of_mcp_server_point_one_way():
    rooms: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        if module.startswith("mcp_server."):
            rooms.setdefault(room_of(module), set()).update(
                room_of(t) for t in targets if t.startswith("mcp_server.") and room_of(t) != room_of(module))
    assert circles(rooms) == []


def test_a_circle_is_found_when_there_is_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_package_opens_with_one_line_saying_what_the_room_is():
    unexplained = []
    for layer in LAYERS:
        for init in sorted((REPO / layer).rglob("__init__.py")):
            tree = ast.parse(init.read_text())
            doc = ast.get_docstring(tree, clean=False)
            first = init.read_text().splitlines()[:1]
            if not (doc and "\n" not in doc.strip() or first and first[0].startswith("# ")):
                unexplained.append(str(init.relative_to(REPO)))
    assert unexplained == []
