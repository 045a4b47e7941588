"""What a search reads of the link graph, as the generation stores it: each linking memory's links to memories.

A search asks three things of the links: which memories are superseded, a hit's successor, and the memories one link
away from its strongest hits. The full graph (graph.py) answers them after resolving every memory's links against
every memory's names, which a cold open paid for every memory: ~27 µs a memory, 2.65 s at 100k
(bench/results/first-answer.md, issue 32 item 5). The generation keeps, for each memory with a link to another memory,
its creation time and the (target id, relation) pairs its links resolved to; the index rewrites the rows of the memories
whose links resolved differently in each sync, in the manifest's transaction, so the table always equals what a
rebuild's graph would give. A reader answers from it; the full graph is built when something asks for more (an edge's
context, ghosts, a change).
"""

from __future__ import annotations

from typing import Iterable

from vault.ids import identity_key

from .links import SUPERSEDES

LinkRow = tuple[str, str, tuple[tuple[str, str], ...]]  # (source id, its created time, sorted (target id, relation))


class LinkTable:
    """superseded_ids, successor and neighbours as the full graph answers them, from the stored rows."""

    def __init__(self, rows: Iterable[LinkRow]) -> None:
        self._out: dict[str, tuple[tuple[str, str], ...]] = {}
        self._in: dict[str, list[tuple[str, str]]] = {}  # target -> (source, relation)
        self._created: dict[str, str] = {}
        self._nodes: dict[str, str] = {}  # identity key -> the node as the graph names it
        superseded: set[str] = set()
        for source, created, targets in rows:
            self._out[source] = targets
            self._created[source] = created
            self._nodes[identity_key(source)] = source
            for target, relation in targets:
                self._in.setdefault(target, []).append((source, relation))
                self._nodes.setdefault(identity_key(target), target)
                if relation == SUPERSEDES and target != source:
                    superseded.add(target)
        self._superseded = superseded

    def superseded_ids(self) -> set[str]:
        """Ids of the memories another memory supersedes."""
        return set(self._superseded)

    def successor(self, memory_id: str) -> str | None:
        """The newest memory superseding this one, following the chain; None if nothing does (as LinkGraph)."""
        node = self._nodes.get(identity_key(memory_id))
        if node is None:
            return None
        seen = {node}
        current = node
        while newer := [s for s in self._superseders(current) if s not in seen]:
            current = max(newer, key=lambda n: (self._created[n], n))
            seen.add(current)
        return None if current == node else current

    def neighbours(self, memory_id: str) -> set[str]:
        """Memory ids one link away in either direction, the memory itself excluded (as LinkGraph)."""
        node = self._nodes.get(identity_key(memory_id))
        if node is None:
            return set()
        near = {t for t, _ in self._out.get(node, ())} | {s for s, _ in self._in.get(node, ())}
        near.discard(node)
        return near

    def _superseders(self, node: str) -> set[str]:
        return {s for s, relation in self._in.get(node, ()) if relation == SUPERSEDES and s != node}
