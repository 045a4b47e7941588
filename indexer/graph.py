"""The wikilink graph: which memory links to which, how, and what has superseded what.

Nodes are memory ids (`kind="memory"`) and `ghost:<target>` nodes (`kind="ghost"`) for link
targets that name no memory: project files, missing images, notes not yet written. Edges
go from a memory to a memory or a ghost and carry the relation the prose gives them.

Incremental updates give exactly the graph a rebuild gives. Resolving a link is a pure
function of the link, the linking memory's folder and the name index, so the graph keeps
each memory's parsed links and, per lookup key, the memories whose links asked for it.
When a memory arrives, leaves, moves or changes id, its names (path, stem, id) are the
only index entries that change, and every memory that asked for one of them is resolved
again; nothing else can have changed.

The graph is held in two maps, not a graph library: each linking memory's edges as (target, link) pairs, and per
target the memories linking to it. Every query here is one or two lookups in them; networkx was 12.8 MB of a
vault server's resident memory and 314 modules for these (bench/results/scale.md, issue 32 item 1, branch mem10k-w3s7).
"""

from __future__ import annotations

import logging
import posixpath
import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Iterator

from vault.ids import identity_key
from vault.model import Memory, stem_of

from .holders import let_go
from .interned import shared
from .link_table import LinkRow
from .links import (
    LINKS_TO,
    MAX_LINKS,
    SUPERSEDES,
    TYPED_KEYS,
    Link,
    LinkParts,
    frontmatter_strings,
    links_in_string,
    named_targets,
    parse_links,
)

log = logging.getLogger("memdir.graph")
GHOST = "ghost:"
BODY = "body"
FRONTMATTER = "frontmatter:"


@dataclass(frozen=True, slots=True)
class Edge:
    """One link from a memory to a memory or a ghost, as the graph holds it."""

    source: str  # the linking memory's id
    target: str  # a memory id, or "ghost:<target>"
    relation: str  # links_to, embeds, supersedes, depends_on or contradicts
    context: str
    heading: str | None
    block: str | None
    embed: bool
    origin: str  # "body" or "frontmatter:<key>"
    written: str  # the target as the link spells it, e.g. "decimal-for-money.md" or "./x"
    start: int  # offset in the body; -1 for a frontmatter link

    @property
    def to_ghost(self) -> bool:
        """Whether the link points at something that is not a memory."""
        return self.target.startswith(GHOST)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for a tool result."""
        return asdict(self)


@dataclass(frozen=True, slots=True, order=True)
class Ambiguity:
    """A link whose name fits several memories, and the one it was resolved to."""

    source: str
    written: str
    chosen: str
    candidates: tuple[str, ...]  # most preferred first


@dataclass(frozen=True, slots=True)
class _Pending:
    """A link waiting for resolution: everything an edge needs except its target."""

    written: str
    relation: str
    context: str
    heading: str | None
    block: str | None
    embed: bool
    origin: str
    start: int


@dataclass(frozen=True, slots=True)
class Unlinked:
    """A memory whose text holds no link (no `[[`, no `supersedes`, no typed key), as the graph needs it: its names
    and created time, read from a manifest row's columns without decoding its memory (Memories.link_inputs)."""

    id: str
    path: str
    created: str  # ISO text, as the lifecycle facts store it; "" when none


# "[[" and a character a link target may start with, as JSON writes it in a string (a quote there is escaped). Not the
# JSON's own lists of lists: the manifest stores a memory's frontmatter as [["key", value], ...].
_LINK_IN_JSON = re.compile(r'\[\[[^"\[\]]')


def may_link(text: str) -> bool:
    """Whether a memory's stored text (a manifest row's JSON) may hold a link the graph keeps: a superset test."""
    return "supersedes" in text or any(key in text for key in TYPED_KEYS) or _LINK_IN_JSON.search(text) is not None


def asked_names(memories: Iterable[Memory | Unlinked]) -> set[str]:
    """Every lookup key the links of these memories ask for (LinkGraph._asked's keys, resolved or ghosts): a memory
    taking none of these names, and linking nowhere, changes no edge of the graph (Index._places_without_graph)."""
    asked: set[str] = set()
    for memory in memories:
        if isinstance(memory, Unlinked):
            continue
        folder = _record_folder(memory.path)
        for link in _pending_links(memory):
            lookup, _ = _lookup_key(link.written, folder)
            if lookup:
                asked.add(lookup)
    return asked


def names_if_unlinked(memory: Memory) -> frozenset[str] | None:
    """A memory's names (path, stem, id: what links look it up by), or None if it links somewhere itself."""
    if next(_pending_links(memory), None) is not None:
        return None
    return _record(memory).names


@dataclass(frozen=True, slots=True)
class _Record:
    """What the graph keeps of one memory."""

    node: str
    path: str
    folder: str
    path_key: str
    stem_key: str
    id_key: str
    created: str
    links: tuple[_Pending, ...]

    @property
    def names(self) -> frozenset[str]:
        return frozenset((self.path_key, self.stem_key, self.id_key))


class LinkGraph:
    """A directed multigraph of wikilinks, kept equal to a rebuild under upsert and remove."""

    def __init__(self) -> None:
        # Edges: linking memory -> its links as (target node, link), in resolution order; a memory without links
        # has no entry. Incoming: target node -> the memories with an edge to it. A ghost node exists while some
        # edge points at it, so the ghosts are the incoming map's "ghost:" keys.
        self._out: dict[str, tuple[tuple[str, _Pending], ...]] = {}
        self._in: dict[str, set[str]] = {}
        self._records: dict[str, _Record] = {}  # identity key of the id -> record
        # Name -> record keys, as tuples (holders.py): almost every name is one memory's.
        self._paths: dict[str, tuple[str, ...]] = {}  # identity key of "folder/note" -> record keys
        self._stems: dict[str, tuple[str, ...]] = {}
        self._ids: dict[str, tuple[str, ...]] = {}
        self._asked: dict[str, set[str]] = {}  # lookup key -> records whose links asked for it
        self._asks: dict[str, frozenset[str]] = {}  # record key -> the lookup keys its links asked for
        self._ambiguous: dict[str, tuple[Ambiguity, ...]] = {}
        self._superseded: set[str] | None = None  # cache; any change clears it
        # Nodes whose links were resolved again or that left since `take_changed`: the rows of the generation's
        # link table (link_table.py) to write again.
        self._changed: set[str] = set()

    @classmethod
    def build(cls, memories: Iterable[Memory | Unlinked]) -> LinkGraph:
        """The graph of a set of memories: every name first, then every link resolved once."""
        graph = cls()
        for memory in memories:
            graph._register(memory)
        for key, record in graph._records.items():
            if record.links:
                graph._resolve(key, fresh=True)
            else:  # resolved to nothing (most memories link nowhere): only marked, as _resolve would mark it
                graph._changed.add(record.node)
        return graph

    def take_changed(self) -> set[str]:
        """The nodes whose row in the link table may differ since the last call (see link_row)."""
        changed, self._changed = self._changed, set()
        return changed

    def keep_changed(self, nodes: set[str]) -> None:
        """Nodes taken by `take_changed` whose rows were not written after all."""
        self._changed |= nodes

    def link_row(self, node: str) -> LinkRow | None:
        """A memory's row of the generation's link table: its created time and the (target id, relation) pairs of
        its links to memories; None for a node no longer here or with no link to a memory."""
        record = self._records.get(identity_key(node))
        if record is None or record.node != node:
            return None
        targets = tuple(sorted({(v, link.relation) for v, link in self._out.get(node, ()) if not v.startswith(GHOST)}))
        return (node, record.created, targets) if targets else None

    def link_rows(self) -> list[LinkRow]:
        """Every row of the link table, by source id."""
        return sorted(row for record in self._records.values() if (row := self.link_row(record.node)) is not None)

    # -- changes --------------------------------------------------------------------------

    def upsert(self, memory: Memory) -> None:
        """Add a memory or take in its new version, re-resolving only the links it can affect."""
        key = identity_key(memory.id)
        old = self._records.get(key)
        if old is not None and (old.node, old.path) == (memory.id, memory.path):
            # Same names: other memories' links resolve as before; only this one's links changed.
            self._records[key] = _record(memory)  # the node's attributes are its record's
            self._resolve(key)
            return
        changed = old.names if old is not None else frozenset()
        if old is not None:
            self._unregister(key)
        changed |= self._register(memory).names
        self._resolve(key)
        self._resolve_askers(changed, skip=key)

    def remove(self, memory_id: str) -> bool:
        """Drop a memory; links to it become ghosts or find another memory. False if it was unknown."""
        key = identity_key(memory_id)
        record = self._records.get(key)
        if record is None:
            return False
        self._unregister(key)
        self._resolve_askers(record.names, skip=key)
        return True

    # -- queries --------------------------------------------------------------------------

    def __contains__(self, memory_id: object) -> bool:
        return isinstance(memory_id, str) and identity_key(memory_id) in self._records

    def outgoing(self, memory_id: str, relation: str | None = None) -> list[Edge]:
        """The links a memory makes, frontmatter first, then in the order of the body."""
        node = self._node(memory_id)
        if node is None:
            return []
        return _sorted(_edge(node, v, link) for v, link in self._out.get(node, ())
                       if relation is None or link.relation == relation)

    def backlinks(self, memory_id: str, relation: str | None = None) -> list[Edge]:
        """The links other memories (or this one) make to a memory."""
        node = self._node(memory_id)
        return [] if node is None else self._incoming(node, relation)

    def ghosts(self) -> dict[str, list[str]]:
        """Each ghost target and the ids of the memories linking to it."""
        return {node.removeprefix(GHOST): sorted(sources) for node, sources in sorted(self._in.items())
                if node.startswith(GHOST)}

    def linking_to(self, target: str) -> list[Edge]:
        """Links to a memory or ghost named as text, e.g. "src/app.py"; ghost paths also match by suffix."""
        text = target.strip().removeprefix(GHOST).removeprefix("./")
        lookup, _ = _lookup_key(text, "")
        if not lookup:
            return []
        edges: list[Edge] = []
        for key in self._find(lookup, False, ""):  # a bare stem may fit memories in several folders
            edges += self._incoming(self._records[key].node, None)
        for node in self._in:
            if node.startswith(GHOST) and _same_file(node.removeprefix(GHOST), lookup):
                edges += self._incoming(node, None)
        return _sorted(edges)

    def successor(self, memory_id: str) -> str | None:
        """The newest memory superseding this one, following the chain; None if nothing does."""
        node = self._node(memory_id)
        if node is None:
            return None
        seen = {node}
        current = node
        while newer := [s for s in self._superseders(current) if s not in seen]:
            current = max(newer, key=self._newness)
            seen.add(current)  # a cycle of supersedes links stops here instead of looping
        return None if current == node else current

    def supersedes_chain(self, memory_id: str) -> list[str]:
        """Every memory in this one's supersedes chain, newest first ([id] when there is none)."""
        node = self._node(memory_id)
        if node is None:
            return []
        remaining = self._supersedes_family(node)
        chain: list[str] = []
        while remaining:
            heads = [n for n in remaining if not any(s in remaining for s in self._superseders(n))]
            pick = max(heads or remaining, key=self._newness)  # no head means a cycle: take the newest
            chain.append(pick)
            remaining.discard(pick)
        return chain

    def supersedes(self, newer: str, older: str) -> bool:
        """Whether `newer` supersedes `older`, directly or through a chain of supersedes links."""
        start, goal = self._node(newer), self._node(older)
        if start is None or goal is None:
            return False
        seen, frontier = {start}, [start]
        while frontier:
            for later in self._superseded_by(frontier.pop()):
                if later == goal:
                    return True
                if later not in seen:
                    seen.add(later)
                    frontier.append(later)
        return False

    def named_in_supersedes(self, entries: Iterable[str], path: str) -> set[str]:
        """The memories a `supersedes:` list written in the memory at `path` names, resolved as its links are now
        (an entry that names no memory names none): what a write of that list would supersede."""
        folder = _record_folder(path)
        named = set()
        for entry in entries:
            for parts in _supersedes_parts(entry):
                lookup, relative = _lookup_key(parts.target, folder)
                found = self._find(lookup, relative, folder) if lookup else []
                if found:
                    named.add(self._records[found[0]].node)
        return named

    def superseded_ids(self) -> set[str]:
        """Ids of the memories another memory supersedes."""
        if self._superseded is None:
            self._superseded = {
                v
                for u, links in self._out.items()
                for v, link in links
                if link.relation == SUPERSEDES and u != v and not v.startswith(GHOST)
            }
        return set(self._superseded)

    def neighbours(self, memory_id: str) -> set[str]:
        """Memory ids one link away in either direction; ghosts and the memory itself excluded."""
        node = self._node(memory_id)
        if node is None:
            return set()
        near = {v for v, _ in self._out.get(node, ())} | self._in.get(node, set())
        return {n for n in near if n != node and not n.startswith(GHOST)}

    def relationships(self, memory_id: str) -> dict[str, dict[str, list[Edge]]]:
        """Per relation, the links going out of and coming into a memory."""
        result: dict[str, dict[str, list[Edge]]] = {}
        for direction, edges in (("outgoing", self.outgoing(memory_id)), ("incoming", self.backlinks(memory_id))):
            for edge in edges:
                result.setdefault(edge.relation, {"outgoing": [], "incoming": []})[direction].append(edge)
        return dict(sorted(result.items()))

    def ambiguous_links(self) -> list[Ambiguity]:
        """Links whose name fits more than one memory, with the choice made."""
        return sorted(a for found in self._ambiguous.values() for a in found)

    def to_edge_list(self) -> list[Edge]:
        """Every edge, sorted: two graphs of the same memories give equal lists."""
        return _sorted(_edge(u, v, link) for u, links in self._out.items() for v, link in links)

    def to_node_list(self) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
        """Every node with its attributes, sorted, for the same comparison."""
        memories = ((r.node, _memory_attributes(r)) for r in self._records.values())
        ghosts = ((node, {"kind": "ghost", "target": node.removeprefix(GHOST)}) for node in self._in
                  if node.startswith(GHOST))
        return sorted((node, tuple(sorted(data.items()))) for node, data in (*memories, *ghosts))

    # -- names ----------------------------------------------------------------------------

    def _register(self, memory: Memory | Unlinked) -> _Record:
        key = identity_key(memory.id)
        if key in self._records:
            self._unregister(key)  # a second memory with the same id replaces the first
        record = _record(memory, key)
        self._records[key] = record
        # hold() inlined, its key once: a build registers every memory (~2 of a served 100k vault's first change's
        # CPU s were the graph's build, bench/results/s20-capture20.md).
        for index, name in ((self._paths, record.path_key), (self._stems, record.stem_key), (self._ids, key)):
            held = index.get(name, ())
            if key not in held:
                index[name] = (*held, key)
        return record

    def _unregister(self, key: str) -> None:
        record = self._records.pop(key)
        self._changed.add(record.node)
        self._clear_links(key, record.node)
        for index, name in self._indexes(record):
            let_go(index, name, key)
        self._drop_links_into(record.node)  # their memories are resolved again

    def _indexes(self, record: _Record) -> Iterator[tuple[dict[str, tuple[str, ...]], str]]:
        yield self._paths, record.path_key
        yield self._stems, record.stem_key
        yield self._ids, record.id_key

    def _node(self, memory_id: str) -> str | None:
        record = self._records.get(identity_key(memory_id))
        return None if record is None else record.node

    # -- resolution -----------------------------------------------------------------------

    def _resolve_askers(self, names: frozenset[str], skip: str) -> None:
        """Resolve again the links of every memory that asked for one of these names."""
        askers = set().union(*(self._asked.get(name, ()) for name in names))
        for key in sorted(askers - {skip}):
            self._resolve(key)

    def _resolve(self, key: str, fresh: bool = False) -> None:
        """Replace a memory's edges with a fresh resolution of its links (`fresh`: it has none yet)."""
        record = self._records[key]
        self._changed.add(record.node)
        if not fresh:
            self._clear_links(key, record.node)
        asks: set[str] = set()
        ambiguities: set[Ambiguity] = set()
        edges: list[tuple[str, _Pending]] = []
        for link in record.links:
            lookup, relative = _lookup_key(link.written, record.folder)
            if not lookup:
                continue
            asks.add(lookup)
            edges.append((self._target(lookup, relative, record, link, ambiguities), link))
        if edges:
            self._out[record.node] = tuple(edges)
            for target, _ in edges:
                self._in.setdefault(target, set()).add(record.node)
        if asks:  # most memories link nowhere: no empty frozenset (216 bytes) kept for them
            self._asks[key] = frozenset(asks)
        for lookup in asks:
            self._asked.setdefault(lookup, set()).add(key)
        if ambiguities:
            self._ambiguous[key] = tuple(sorted(ambiguities))

    def _target(self, lookup: str, relative: bool, record: _Record, link: _Pending, ambiguities: set[Ambiguity]) -> str:
        """The node a link points at: a ghost when it names no memory."""
        found = self._find(lookup, relative, record.folder)
        if not found:
            return GHOST + lookup
        nodes = tuple(self._records[k].node for k in found)
        if len(nodes) > 1:
            ambiguities.add(Ambiguity(record.node, link.written, nodes[0], nodes))
        return nodes[0]

    def _find(self, lookup: str, relative: bool, folder: str) -> list[str]:
        """Record keys a lookup key names, most preferred first: path, then stem, then id."""
        candidates = self._paths.get(lookup)
        if not candidates and not relative:
            candidates = self._stems.get(lookup) or self._ids.get(lookup)
        if not candidates:
            return []
        if len(candidates) == 1:
            return list(candidates)
        return sorted(candidates, key=lambda k: self._preference(self._records[k], folder))

    @staticmethod
    def _preference(record: _Record, folder: str) -> tuple[bool, int, str, str, str]:
        """Same folder as the linking memory first, then the shortest path, then alphabetical."""
        # The id breaks the last tie, between memories that share a path in different cases.
        return (record.folder != folder, len(record.path), identity_key(record.path), record.path, record.node)

    def _clear_links(self, key: str, node: str) -> None:
        """Remove a memory's outgoing edges, the ghosts left without links, and what it asked for."""
        self._superseded = None
        for target in {v for v, _ in self._out.pop(node, ())}:
            self._let_go_of(target, node)  # a ghost left without links goes with its last one
        for lookup in self._asks.pop(key, ()):
            self._asked[lookup].discard(key)
            if not self._asked[lookup]:
                del self._asked[lookup]
        self._ambiguous.pop(key, None)

    def _drop_links_into(self, node: str) -> None:
        """A memory leaves: the edges other memories have to it go with it, as they would with its node."""
        self._superseded = None
        for source in self._in.pop(node, ()):
            kept = tuple((v, link) for v, link in self._out[source] if v != node)
            if kept:
                self._out[source] = kept
            else:
                del self._out[source]

    def _let_go_of(self, target: str, source: str) -> None:
        sources = self._in.get(target)
        if sources is not None:
            sources.discard(source)
            if not sources:
                del self._in[target]

    # -- supersedes -----------------------------------------------------------------------

    def _superseders(self, node: str) -> set[str]:
        return {u for u, _, link in self._edges_into(node) if link.relation == SUPERSEDES and u != node}

    def _superseded_by(self, node: str) -> set[str]:
        return {
            v
            for v, link in self._out.get(node, ())
            if link.relation == SUPERSEDES and v != node and not v.startswith(GHOST)
        }

    def _supersedes_family(self, node: str) -> set[str]:
        """The memories joined to this one by supersedes links in either direction."""
        family = {node}
        frontier = [node]
        while frontier:
            current = frontier.pop()
            for other in self._superseders(current) | self._superseded_by(current):
                if other not in family:
                    family.add(other)
                    frontier.append(other)
        return family

    def _newness(self, node: str) -> tuple[str, str]:
        return self._records[identity_key(node)].created, node

    def _edges_into(self, node: str) -> Iterator[tuple[str, str, _Pending]]:
        for source in self._in.get(node, ()):
            for target, link in self._out[source]:
                if target == node:
                    yield source, target, link

    def _incoming(self, node: str, relation: str | None) -> list[Edge]:
        return _sorted(_edge(u, v, link) for u, v, link in self._edges_into(node)
                       if relation is None or link.relation == relation)


def _record(memory: Memory | Unlinked, id_key: str | None = None) -> _Record:
    """`id_key`: the identity key of the memory's id, when the caller has it."""
    folder = shared(_record_folder(memory.path))  # a collection, mostly
    path = memory.path[:-3] if memory.path.lower().endswith(".md") else memory.path
    if isinstance(memory, Unlinked):
        created, links = memory.created, ()
    else:
        created, links = memory.created_at.isoformat() if memory.created_at else "", tuple(_pending_links(memory))
    return _Record(
        node=memory.id,
        path=memory.path,
        folder=folder,
        path_key=identity_key(path),
        stem_key=identity_key(stem_of(memory.path)),
        id_key=id_key if id_key is not None else identity_key(memory.id),
        created=created,
        links=links,
    )


def _memory_attributes(record: _Record) -> dict[str, str]:
    return {"kind": "memory", "path": record.path, "created": record.created}


def _pending_links(memory: Memory) -> Iterator[_Pending]:
    """Frontmatter links (supersedes first, then other keys in file order), then the body's."""
    origin = FRONTMATTER + "supersedes"
    for entry in memory.supersedes:
        for parts in _supersedes_parts(entry):
            yield _from_frontmatter(parts, SUPERSEDES, origin, f"supersedes: {entry}")
    for key, value in memory.frontmatter.items():
        # Most values are a string without a link, a number or a date, which name nothing: skipped before the
        # generators below are made (a cold open builds every memory's record; bench/results/first-answer.md,
        # issue 32 item 5).
        if isinstance(value, str):
            if "[[" not in value and str(key) not in TYPED_KEYS:
                continue
        elif not isinstance(value, (list, tuple)):
            continue
        if str(key) == "supersedes":
            continue
        if str(key) in TYPED_KEYS:
            # depends_on: [m-1a2b3c4d, "[[jwt-research]]"]: ids and links alike, typed by the key.
            for parts in named_targets(value):
                if parts.target:
                    yield _from_frontmatter(parts, str(key), FRONTMATTER + str(key), f"{key}: {parts.target}")
            continue
        for string in frontmatter_strings(value):
            for parts in links_in_string(string):
                if parts.target:
                    yield _from_frontmatter(parts, LINKS_TO, FRONTMATTER + str(key), f"{key}: {string}")
    if memory.body.count("[[") > MAX_LINKS:
        log.warning("%s: more than %d [[links]]; only the text up to the %d-th is indexed", memory.path,
                    MAX_LINKS, MAX_LINKS)
    for link in parse_links(memory.body):
        if link.target:  # [[#Heading]] points inside the memory itself: no edge
            yield _from_body(link)


def _record_folder(path: str) -> str:
    """The folder a memory's relative links are resolved from."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _supersedes_parts(entry: str) -> list[LinkParts]:
    """The targets of one `supersedes:` entry: its [[links]]; a bare entry is a memory id (or a name), resolved like a
    link target."""
    return [parts for parts in links_in_string(entry) or [LinkParts(entry.strip(), None, None, None)] if parts.target]


def _from_frontmatter(parts: LinkParts, relation: str, origin: str, context: str) -> _Pending:
    return _Pending(parts.target, relation, " ".join(context.split()), parts.heading, parts.block, False, origin, -1)


def _from_body(link: Link) -> _Pending:
    return _Pending(link.target, link.relation, link.context, link.heading, link.block, link.embed, BODY, link.start)


def _lookup_key(written: str, folder: str) -> tuple[str, bool]:
    """The identity key a link target is looked up by, and whether it is relative (path-only)."""
    text = written.strip()
    if text[-3:].lower() == ".md":
        text = text[:-3]
    relative = text.startswith(("./", "../"))
    if relative:
        text = posixpath.join(folder, text)
    elif "/" in text:
        text = text.lstrip("/")
    if "/" in text:
        text = posixpath.normpath(text)
    return ("" if text in ("", ".") else identity_key(text)), relative


def _same_file(ghost: str, wanted: str) -> bool:
    """Whether a ghost target and a wanted path name the same file, one maybe shortened from the left."""
    return ghost == wanted or ghost.endswith("/" + wanted) or wanted.endswith("/" + ghost)


def _edge(source: str, target: str, link: _Pending) -> Edge:
    return Edge(source=source, target=target, relation=link.relation, context=link.context, heading=link.heading,
                block=link.block, embed=link.embed, origin=link.origin, written=link.written, start=link.start)


def _sorted(edges: Iterable[Edge]) -> list[Edge]:
    """Edges by source, then place in the memory (frontmatter first), then the rest for a total order."""
    return sorted(
        edges,
        key=lambda e: (
            e.source, e.start, e.origin, e.target, e.relation, e.written,
            e.heading or "", e.block or "", e.embed, e.context,
        ),
    )
