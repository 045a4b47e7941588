"""A memory's place in the link graph, as one report: relations out and in, chain, ghost targets."""

from __future__ import annotations

from typing import Any

from .graph import GHOST, Edge
from .index import Index


def relations_of(index: Index, memory_id: str, relation: str | None = None) -> dict[str, Any]:
    """Everything `memdir links` and the relationship tools show about one memory."""
    memory = index.get(memory_id)
    graph = index.links

    def describe(edge: Edge, other: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"relation": edge.relation, "context": edge.context, "origin": edge.origin}
        if other.startswith(GHOST):
            entry.update(ghost=other[len(GHOST):], written=edge.written)
        else:
            linked = index.memory(other)
            entry.update(id=other, title=linked.title if linked else other, path=linked.path if linked else None)
        if edge.heading:
            entry["heading"] = edge.heading
        return entry

    outgoing = _merged([describe(e, e.target) for e in graph.outgoing(memory.id, relation)])
    incoming = _merged([describe(e, e.source) for e in graph.backlinks(memory.id, relation)])
    chain = graph.supersedes_chain(memory.id)
    return {
        "id": memory.id,
        "title": memory.title,
        "path": memory.path,
        "successor": graph.successor(memory.id),
        "supersedes_chain": [{"id": i, "title": index.memory(i).title if i in index else i} for i in chain],
        "outgoing": [e for e in outgoing if "id" in e],
        "backlinks": incoming,
        "ghosts": [e for e in outgoing if "ghost" in e],
    }


def _merged(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (relation, target): a link written in the body and in frontmatter is one relation."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in entries:
        key = (entry["relation"], entry.get("id") or entry.get("ghost", ""))
        if key in seen:
            seen[key]["origin"] += ", " + entry["origin"]
        else:
            seen[key] = entry
    return list(seen.values())
