"""Reading and writing across the project vault and the user vault without letting private memories leak.

- Reads may see both vaults; every result carries `source` ("project" or "user"). A caller that is
  not entitled to private memories (`include_private=False`) sees the project vault's shared
  memories only, and they are filtered before ranking, so a private memory never lends rank,
  neighbour text or a graph hop to what such a caller sees.
- memdir never writes `privacy: private` into the project vault. A private add or takeaway goes to
  the user vault; an update that makes a project memory private moves it there (same id, counters
  and dates kept; the project file goes to the project's .trash/); a merge that involves a private
  or user-vault memory is written into the user vault.
- Nothing moves from the user vault into the project vault: the lifecycle runs inside each vault.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from indexer.search import Hit, SearchRequest, order_hits, with_shown
from vault import Memory, NotFoundError, ValidationError

from .app import USER, App, Side

PRIVATE = "private"


def visible(memory: Memory, include_private: bool) -> bool:
    """Whether a caller may see a memory: everything for the local user, shared project memories for others."""
    return include_private or (memory.source != USER and memory.privacy != PRIVATE)


def shared_file(memory: Memory) -> bool:
    """Whether a memory's file is read by everyone with the project: every file of the project vault is, a
    hand-written `privacy: private` one too (that key hides it from others' reads, not from the repository)."""
    return memory.source != USER


def search(app: App, request: SearchRequest, include_private: bool = True) -> list[Hit]:
    """One search over every vault the caller may read, merged by the same order each vault uses."""
    sides = app.sides(include_user=include_private)
    if not include_private:
        request = replace(request, privacy=("shared",))
    if request.memory_id:
        side = app.side_of(request.memory_id)
        hits = side.searcher.search(request) if side in sides else []
        if not hits or not visible(hits[0].memory, include_private):
            raise NotFoundError(f"no memory with id {request.memory_id!r}")
        return hits
    limit = request.limit or app.config.search.default_limit
    if len(sides) == 1:
        return sides[0].searcher.search(request)
    # Each vault's part in final-score order: a fresh unused memory and a used one are put in their order once, over
    # the union (Searcher.search's `merged`).
    hits = [hit for side in sides for hit in side.searcher.search(request, merged=True)]
    return with_shown(order_hits(hits, request.sort_by, request.now, app.config.search.fresh_unscored_days)[:limit],
                      request.sort_by)


def send_query(app: App, request: SearchRequest, include_private: bool = True) -> None:
    """Send the query of the `search` to come to the model now, in every vault it will search (Searcher.send_query):
    its vector is computed while the caller does what comes before the search."""
    for side in app.sides(include_user=include_private):
        side.searcher.send_query(request)


def add_side(app: App, privacy: str) -> Side:
    """Where a new memory goes: private ones to the user vault (created if needed), the rest to the project."""
    if privacy == PRIVATE:
        user = app.user_side(create=True)
        assert user is not None
        return user
    return app.project


def update(app: App, memory_id: str, content: str | None, fields: Mapping[str, Any] | None, *,
           allow_secrets: bool = False) -> Memory:
    """Change a memory where it lives; making a project memory private moves it to the user vault."""
    side = app.side_of(memory_id)
    if side is app.project and (fields or {}).get("privacy") == PRIVATE:
        return make_private(app, memory_id, content, fields, allow_secrets=allow_secrets)
    return side.curator.update(memory_id, content=content, fields=fields, allow_secrets=allow_secrets)


def make_private(app: App, memory_id: str, content: str | None = None,
                 fields: Mapping[str, Any] | None = None, *, allow_secrets: bool = False) -> Memory:
    """Move a project memory into the user vault (id, counters and dates kept), then trash the project file."""
    memory = app.project.index.get(memory_id)
    user = add_side(app, PRIVATE)
    changes = {**(fields or {}), "privacy": PRIVATE, "updated_at": datetime.now(timezone.utc).replace(microsecond=0)}
    moved = user.curator.receive(memory, changes, content, allow_secrets=allow_secrets)
    app.project.curator.delete(memory.id)
    return moved


def merge(app: App, ids: Sequence[str], title: str, content: str | None, *, allow_secrets: bool = False) -> Memory:
    """Merge memories; if any is private or in the user vault, the merged memory is written there."""
    located = [(app.side_of(i), i) for i in dict.fromkeys(ids)]
    sources = [(side, side.index.get(i)) for side, i in located]
    if not any(side.source == USER or m.privacy == PRIVATE for side, m in sources):
        return app.project.curator.merge(ids, title, content, allow_secrets=allow_secrets)
    user = add_side(app, PRIVATE)
    movers = [m for side, m in sources if side is app.project]
    if movers and not user.index.writable:
        raise ValidationError(f"the merged memory would be private, and the user vault {user.root} is indexed by "
                              "another memdir server; merge from there, or after it stops")
    for memory in movers:
        user.curator.receive(memory, {"privacy": PRIVATE})
        app.project.curator.delete(memory.id)
    return user.curator.merge(ids, title, content, extra={"privacy": PRIVATE}, allow_secrets=allow_secrets)


def private_memories(app: App) -> dict[str, Memory]:
    """Every private memory this process can see, by id: what a shared file must never point at. Every memory of the
    user vault; of the project's, those marked private, kept by its index (read off every memory, a captured exchange
    decoded every row of a 100k vault, bench/results/s19-lead.md)."""
    found: dict[str, Memory] = {}
    for side in app.sides(include_user=True):
        index = side.index
        marked = index.all_memories() if side is not app.project else \
            [m for m in map(index.memory, index.private_ids()) if m is not None]
        found.update((m.id, m) for m in marked if not visible(m, include_private=False))
    return found


def shared_tags(app: App) -> set[str]:
    """The tags the project's shared memories carry: the team's topics, which a private memory's tag does not make
    private (leaks.repeated)."""
    return {t for m in app.project.index.all_memories() if visible(m, include_private=False) for t in m.tags}
