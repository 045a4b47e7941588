"""memdir's operations in JSON shapes: what the CLI, the vault server's endpoints and the MCP tools call.

One instance lives in whichever process owns the vault (the server, or a CLI command when no
server runs), so everyone sees one index and one writer.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

from indexer.relations import relations_of
from indexer.search import SearchRequest, hit_shape
from vault import Memory, NotFoundError, ValidationError, normalize
from vault.errors import PathError
from vault.ids import check_id

from .app import App
from .lookup import looks_like_path
from .sessions import SessionStore

LIMIT_MAX = 50


class MemoryService:
    def __init__(self, app: App) -> None:
        self.app = app
        self.index = app.index
        self.curator = app.curator
        self.searcher = app.searcher
        self.sessions = SessionStore(app.root)

    # -- sessions ----------------------------------------------------------------------

    def conversation(self, session_id: str | None, client_pid: int | None = None) -> str | None:
        """The session a tool call belongs to: the Claude Code session whose hooks came from the
        same client process if there is one, else the MCP connection's own id."""
        if session_id is None:
            return None
        if client_pid:
            linked = [s for s in self.sessions.all() if client_pid in s.client_pids and s.id != session_id]
            if linked:
                return max(linked, key=lambda s: s.updated).id
        return session_id

    def _shown(self, session_id: str | None, memories: Iterable[Memory]) -> None:
        items = [(m.id, m.content_hash) for m in memories]
        if session_id and items:
            self.sessions.update(session_id, lambda s: s.show(items))

    # -- reading -------------------------------------------------------------------------

    def search(self, *, query: str | None = None, days_back: float | None = None, id: str | None = None,
               collections: Sequence[str] = (), types: Sequence[str] = (), tags: Sequence[str] = (),
               sort_by: str = "relevance", limit: int | None = None, include_superseded: bool = False,
               session: str | None = None) -> dict[str, Any]:
        if not query and days_back is None and not id:
            raise ValidationError("give at least one of: query, days_back, id")
        request = SearchRequest(query=query, memory_id=id, limit=limit, collections=tuple(collections),
                                types=tuple(types), tags=tuple(tags), days_back=days_back, sort_by=sort_by,  # type: ignore[arg-type]
                                include_superseded=include_superseded or bool(id))
        hits = self.searcher.search(request)
        self._shown(session, (h.memory for h in hits))
        return {"results": [hit_shape(h) for h in hits]}

    def read(self, ref: str, session: str | None = None) -> dict[str, Any]:
        memory = self._lookup(ref)
        self._shown(session, [memory])
        shape = normalize(memory)
        shape["successor"] = self.index.graph.successor(memory.id)
        return shape

    def list(self) -> list[dict[str, Any]]:
        return [normalize(m) for m in sorted(self.index.memories.values(), key=lambda m: m.path)]

    def doctor(self) -> dict[str, Any]:
        return {"memories": len(self.index.memories), "errors": [p.as_dict() for p in self.index.problems()]}

    def relationships(self, memory_id: str, relationship_type: str | None = None) -> dict[str, Any]:
        return relations_of(self.index, check_id(memory_id), relationship_type)

    def linked(self, target: str, query: str | None = None, limit: int = 10) -> dict[str, Any]:
        """Memories that link to a target (a memory or a ghost such as a project file), best first."""
        edges = self.index.graph.linking_to(target)
        ids = list(dict.fromkeys(e.source for e in edges if e.source in self.index.memories))
        context = {e.source: e.context for e in edges}
        if query and ids:
            ranked = self.searcher.search(SearchRequest(query=query, limit=LIMIT_MAX))
            order = {h.memory.id: n for n, h in enumerate(ranked)}
            ids.sort(key=lambda i: order.get(i, len(order)))
        results = []
        for memory_id in ids[:limit]:
            shape = normalize(self.index.memories[memory_id])
            shape["anchor_context"] = context.get(memory_id, "")
            results.append(shape)
        return {"target": target, "results": results}

    def stats(self) -> dict[str, Any]:
        memories = list(self.index.memories.values())
        return {
            "memories": len(memories),
            "collections": dict(Counter(m.collection for m in memories)),
            "types": dict(Counter(m.type for m in memories)),
            "tags": dict(Counter(t for m in memories for t in m.tags).most_common(20)),
            "scored_memories": sum(1 for m in memories if m.uses),
            "superseded": len(self.index.graph.superseded_ids()),
            "problems": len(self.index.problems()),
            "chunks": self.index.chunk_count(),
            "ghost_targets": len(self.index.graph.ghosts()),
            "vault": str(self.app.root),
        }

    def insights(self, query: str, session: str | None = None, limit: int = 6) -> dict[str, Any]:
        """What memdir knows that bears on `query`: standing facts, the best memories, where to look."""
        if not query or not query.strip():
            raise ValidationError("query is empty")
        hits = self.searcher.search(SearchRequest(query=query, limit=LIMIT_MAX))
        facts = [h for h in hits if h.memory.collection == "memory_bank"][:4]
        always = [m for m in self.index.memories.values()
                  if m.always_inject and m.status == "active" and m.id not in {h.memory.id for h in facts}]
        best = [h for h in hits if h.memory.collection != "memory_bank"][:limit]
        by_collection = Counter(h.memory.collection for h in hits[:20])
        shown = [h.memory for h in facts + best] + always
        self._shown(session, shown)
        return {
            "query": query,
            "always": [normalize(m) for m in sorted(always, key=lambda m: m.id)],
            "facts": [hit_shape(h) for h in facts],
            "memories": [hit_shape(h) for h in best],
            "recommended_collections": [c for c, _ in by_collection.most_common(3)],
            "memory_count": len(self.index.memories),
        }

    # -- writing -----------------------------------------------------------------------

    def add(self, content: str, *, type: str | None = None, tags: Sequence[str] = (), title: str | None = None,
            collection: str = "memory_bank", importance: float | None = None, confidence: float | None = None,
            always_inject: bool = False, privacy: str = "shared") -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if collection == "memory_bank":
            extra.update(importance=0.7 if importance is None else importance,
                         confidence=0.7 if confidence is None else confidence)
            if always_inject:
                extra["always_inject"] = True
        if privacy != "shared":
            extra["privacy"] = privacy
        for key in ("importance", "confidence"):
            if key in extra and not 0.0 <= extra[key] <= 1.0:
                raise ValidationError(f"{key} must be between 0 and 1")
        added = self.curator.add(content, title=title, type=type, collection=collection, tags=tags, extra=extra)
        return {
            "memory": normalize(added.memory),
            "status": added.status,
            "near_duplicates": [vars(s) for s in added.near_duplicates],
            "possible_conflicts": [vars(s) for s in added.possible_conflicts],
        }

    def update(self, memory_id: str, content: str | None = None, fields: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return normalize(self.curator.update(check_id(memory_id), content=content, fields=fields))

    def append(self, memory_id: str, content: str) -> dict[str, Any]:
        return normalize(self.curator.append(check_id(memory_id), content))

    def delete(self, memory_id: str) -> dict[str, Any]:
        memory = self.index.get(check_id(memory_id))
        return {"id": memory.id, "title": memory.title, "moved_to": self.curator.delete(memory.id)}

    def record_response(self, key_takeaway: str, initial_score: str | None = None,
                        session: str | None = None) -> dict[str, Any]:
        memory = self.curator.record_response(key_takeaway, initial_score)
        return normalize(memory)

    def score(self, memory_scores: Mapping[str, str], outcome: str | None = None,
              session: str | None = None) -> dict[str, Any]:
        """Score memories (and, with `outcome`, the session's previous exchange); name what is still unscored."""
        state = self.sessions.load(session) if session else None
        awaiting = list(state.awaiting) if state else []
        unknown = [i for i in memory_scores if not self._exists(i)]
        if unknown:
            hint = ", ".join(awaiting) if awaiting else "none"
            raise NotFoundError(f"no memory with id {', '.join(unknown)}; memories awaiting a score: {hint}")
        outcomes = dict(memory_scores)
        exchange = state.last_exchange if state and outcome else None
        if exchange and self._exists(exchange) and exchange not in outcomes:
            outcomes[exchange] = outcome  # type: ignore[assignment]
        results = self.curator.score(outcomes)
        still = [i for i in awaiting if i not in outcomes]
        if session:
            self.sessions.update(session, lambda s: (s.mark_scored(outcomes), setattr(s, "scoring_required", False)))
        return {
            "scored": [{"id": r.id, "outcome": r.outcome, "changes": _jsonable(r.changes), "note": r.note} for r in results],
            "exchange": exchange,
            "unscored": still,
        }

    def gc(self, dry_run: bool = False) -> list[dict[str, Any]]:
        return [{**vars(a.decision), "result": a.result} for a in self.curator.gc(dry_run=dry_run)]

    def suggest_merges(self, threshold: float | None = None, type: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
        clusters = self.curator.suggest_merges(threshold, type, limit)
        return [{"ids": list(c.ids), "titles": list(c.titles), "similarity": c.similarity} for c in clusters]

    def merge(self, ids: Sequence[str], title: str, content: str | None = None) -> dict[str, Any]:
        return normalize(self.curator.merge([check_id(i) for i in ids], title, content))

    def reindex(self) -> dict[str, Any]:
        from indexer.index import reindex

        report = reindex(self.index)
        return {"memories": report.added, "problems": report.errors, "seconds": round(report.seconds, 2),
                "chunks": self.index.chunk_count()}

    # -- helpers -------------------------------------------------------------------------

    def _lookup(self, ref: str) -> Memory:
        if looks_like_path(ref):
            path = self.app.vault.resolve(ref)
            rel = path.relative_to(self.app.root).as_posix()
            entry = self.index.entries.get(rel)
            if entry is None or entry.memory_id is None:
                raise PathError(f"{ref} is not an indexed memory" + (f" ({entry.reason})" if entry and entry.reason else ""))
            return self.index.get(entry.memory_id)
        return self.index.get(check_id(ref))

    def _exists(self, memory_id: str) -> bool:
        try:
            self.index.get(check_id(memory_id))
            return True
        except (NotFoundError, ValidationError):
            return False


def _jsonable(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.strftime("%Y-%m-%dT%H:%M:%SZ") if isinstance(v, datetime) else v) for k, v in values.items()}

