"""memdir's operations, each taking its request model (operations.py) and answering its typed result
(views/results.py): what the CLI, the vault server's endpoints, the MCP tools and the web view call. A method
restates none of its arguments: the model names them, types them, checks them and holds their defaults. The JSON
they send is the result's (operations.as_json), made where it is sent.

One instance lives in whichever process owns the vault (the server, or a CLI command when no
server runs), so everyone sees one index and one writer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TypedDict, TypeVar

from indexer import books as book_files
from indexer import review
from indexer.relations import relations_of
from indexer.search import Hit, SearchRequest, window_used
from vault import Memory, NotFoundError, ValidationError
from vault.history import Commit, Version, VaultHistory
from vault.parse import parse
from vault.errors import ConflictError, PathError
from vault.ids import check_id
from vault.markdown import section_count
from vault.paths import resolved_within
from vault.model import bank_weight

from . import capture, checks, leaks, turns
from . import operations as ops
from .operations import Op, R
from . import privacy as vaults
from .app import USER, App
from .idempotency import Recent
from .lookup import looks_like_path
from .sessions import Session, SessionStore
from ..views.results import (
    Added, Book, Cluster, Decision, Deleted, Dependant, DoctorResult, Ingested, Insights, LinkedResult, LogResult,
    LinkResult, Reindexed, Relations, Restored, ReviewItem, ReviewResult, Scored, ScoreResult, SearchResult, Similar, Stats,
    Verified, VerifyResult,
)
from ..views.view import MemoryView, view_of

T = TypeVar("T")

LIMIT_MAX = 50
REVIEW_REMINDER_EVERY = 10  # get_context_insights calls between two review-queue reminders in a session
ECHOED_CHARS = 500  # of the query, in get_context_insights's answer


class MemoryService:
    def __init__(self, app: App) -> None:
        self.app = app
        self.index = app.index
        self.curator = app.curator
        self.searcher = app.searcher
        self.sessions = SessionStore(app.root)
        self.recent = Recent()  # keyed writes already applied: a client's retry gets the first result

    def run(self, request: Op[R]) -> R:
        """An operation of the contract (operations.py), answered with its typed result: the `Operations`
        the CLI calls when no server serves the vault. Each method below takes its operation's request model,
        checked when it was built, so the arguments and their defaults are stated once, there."""
        return request.run_on(self)

    def once(self, key: str | None, name: str, call: Callable[[], T]) -> T:
        """Run a write once per idempotency key (idempotency.py); without a key, every time."""
        return self.recent.once(key, name, call)

    # -- sessions ----------------------------------------------------------------------

    def conversation(self, session_id: str | None, client_pid: int | None = None) -> str | None:
        """The session a tool call belongs to: the Claude Code session whose hooks came from the
        same client process if there is one, else the MCP connection's own id."""
        if session_id is None:
            return None
        linked = self.sessions.latest_of_client(client_pid, excluding=session_id) if client_pid else None
        return linked or session_id

    def _shown(self, session_id: str | None, memories: Iterable[Memory]) -> None:
        items = [(m.id, m.content_hash) for m in memories]
        if session_id and items:
            self.sessions.update(session_id, lambda s: s.show(items))

    # -- reading -------------------------------------------------------------------------

    def search(self, asked: ops.Search) -> SearchResult:
        # A call that names nothing to search by is a mistake the caller must hear of; an empty or blank query is a
        # question with no words in it, which answers "nothing matched" like any other (issue 26's bad input).
        if asked.query is None and asked.days_back is None and not asked.id and not asked.after and not asked.before:
            raise ValidationError("give at least one of: query, days_back, after, before, id")
        start, end = moment(asked.after, "after"), moment(asked.before, "before")
        if start is not None and end is not None and start >= end:
            raise ValidationError(f"after ({asked.after}) is not earlier than before ({asked.before}): no moment is "
                                  "in that window; swap them, or drop one")
        request = SearchRequest(query=asked.query, memory_id=asked.id, limit=asked.limit,
                                collections=tuple(asked.collections), types=tuple(asked.types), tags=tuple(asked.tags),
                                days_back=asked.days_back, sort_by=asked.sort_by,
                                include_superseded=asked.include_superseded or bool(asked.id), after=start, before=end)
        if asked.as_of:
            return self._search_as_of(request, asked.as_of, asked.include_private)
        hits = self.hits(request, asked.include_private)
        self._shown(asked.session, (h.memory for h in hits))
        results = [view_of(h.memory, hit=h) for h in hits]
        window = window_used(request, settings=self.app.config.search)
        if window is None:
            return SearchResult(results=results)
        shown = window.as_dict()
        if window.use == "filter" and window.source == "query" and hits and not any(map(window.holds, hits)):
            shown["note"] = "nothing was written in that window: these are the newest memories"
        return SearchResult(results=results, window=shown)

    def _search_as_of(self, request: SearchRequest, as_of: str, include_private: bool) -> SearchResult:
        """The project vault as git had it then: text, status, supersession and counters as committed.
        The lifecycle's read-time expiry is not applied: the past is shown as it was."""
        past = self.app.past()
        commit = past.history().resolve(as_of)
        if not include_private:
            request = replace(request, privacy=("shared",))
        request = replace(request, now=commit.date)  # "recent" and time words mean recent then
        hits = past.searcher(commit, self.app.config.search).search(request)
        return SearchResult(results=[view_of(h.memory, commit.date, hit=h) for h in hits
                                     if vaults.visible(h.memory, include_private)],
                            as_of=commit_shape(commit))

    def log(self, asked: ops.Log) -> LogResult:
        """A memory's committed versions, newest first: what changed in each (body, keys, counters)."""
        memory = self._lookup(asked.ref)
        if not vaults.visible(memory, asked.include_private):
            raise NotFoundError(f"no memory {asked.ref!r}")
        versions = VaultHistory(self.app.side_of(memory.id).root).versions(memory.path)
        committed = next((v.memory for v in versions if v.memory is not None), None)
        return LogResult(id=memory.id, path=memory.path,
                         uncommitted_changes=committed is None or committed.content_hash != memory.content_hash,
                         versions=[version_shape(v) for v in versions])

    def hits(self, request: SearchRequest, include_private: bool = True) -> list[Hit]:
        """Search every vault the caller may read (both, for the local user), merged and labelled by source."""
        return vaults.search(self.app, request, include_private)

    def send_query(self, request: SearchRequest) -> None:
        """The query of `hits(request)` to come, sent to the model now (privacy.send_query)."""
        vaults.send_query(self.app, request)

    def read(self, asked: ops.Read) -> MemoryView:
        memory = self._lookup(asked.ref)
        if not vaults.visible(memory, asked.include_private):
            raise NotFoundError(f"no memory {asked.ref!r}")
        if asked.version:
            return self._read_version(memory, asked.version)
        self._shown(asked.session, [memory])
        side = self.app.side_of(memory.id)
        return view_of(memory, successor=side.index.link_view.successor(memory.id), stale=self.stale(memory),
                       written=side.searcher.written(memory))

    def _read_version(self, memory: Memory, version: str) -> MemoryView:
        """The memory as committed at `version` (a commit, or a date: the last commit on or before it)."""
        history = VaultHistory(self.app.side_of(memory.id).root)
        commit = history.resolve(version)
        path = next((v.path for v in history.versions(memory.path) if v.commit.date <= commit.date), None)
        if path is None:
            raise NotFoundError(f"{memory.id} was not committed yet at {commit.sha[:10]} ({commit.date.date().isoformat()})")
        return view_of(parse(history.read(commit, path), path), commit.date, version=commit_shape(commit))

    def stale(self, memory: Memory) -> list[dict[str, Any]]:
        """Cited project files that changed since the memory was anchored ([] when fresh)."""
        return self.index.vault.stale(memory)

    def doctor(self, asked: ops.Doctor = ops.Doctor()) -> DoctorResult:
        problems = self.index.problems() + self.index.vault.anchor_problems(self.index.all_memories())
        return DoctorResult(memories=self.index.memory_count(), errors=[p.as_dict() for p in problems],
                            warnings=checks.warnings(self.index.all_memories(), self.app.root, self.app.user_root))

    def link(self, asked: ops.Link) -> LinkResult:
        """Record that `source` supersedes / depends on / contradicts / derives from `target`, in the
        source's frontmatter (a list of ids under the relation's key), so it travels with the file."""
        source, target, relation, session = asked.source, asked.target, asked.relation, asked.session
        if check_id(source) == check_id(target):
            raise ValidationError("a memory cannot be linked to itself")
        side = self.app.side_of(source)
        try:
            self.app.side_of(target)
        except NotFoundError:
            raise NotFoundError(f"no memory with id {target!r} to link {source} to") from None
        # Under the vault's write lock, so that two opposite supersedes (two tabs of the web view acting on one inbox
        # item, at once) cannot both pass the cycle check: each writes a different file, so the compare-and-swap
        # does not see the other.
        with side.vault.writer.lock.held():
            memory = side.index.get(source)
            self._refuse_leak({relation: [target]}, memory, session)
            if relation == "supersedes":
                _refuse_supersedes_cycle(side, memory, [target])
            key_values = memory.supersedes if relation == "supersedes" else memory.frontmatter.get(relation, [])
            current = [str(v) for v in (key_values if isinstance(key_values, (list, tuple)) else [key_values])]
            if target in current or f"[[{target}]]" in current:
                return LinkResult(**self._relations(source), changed=False)
            vaults.update(self.app, source, None, {relation: [*current, target]})
        return LinkResult(**self._relations(source), changed=True)

    def relationships(self, asked: ops.Relationships) -> Relations:
        return Relations(**self._relations(asked.memory_id, asked.relationship_type, asked.include_private,
                                           asked.listed))

    def _relations(self, memory_id: str, relationship_type: str | None = None,
                   include_private: bool = True, listed: int = ops.Relationships.model_fields["listed"].default
                   ) -> dict[str, Any]:
        """The relation index's report (indexer/relations.py), less what the caller may not see, with at most `listed`
        relations of each kind (the rest counted in `unlisted`)."""
        side = self.app.side_of(check_id(memory_id))
        if not vaults.visible(side.index.get(memory_id), include_private):
            raise NotFoundError(f"no memory with id {memory_id!r}")
        report = relations_of(side.index, memory_id, relationship_type)
        if not include_private:  # a private memory's title is private too
            hidden = {i for i, m in ((m.id, m) for m in side.index.all_memories()) if not vaults.visible(m, False)}
            for key in ("outgoing", "backlinks"):
                report[key] = [e for e in report[key] if e.get("id") not in hidden]
            report["supersedes_chain"] = [e for e in report["supersedes_chain"] if e["id"] not in hidden]
        report["unlisted"] = {key: len(report[key]) - listed for key in ("outgoing", "backlinks", "ghosts")
                              if len(report[key]) > listed}
        for key in report["unlisted"]:
            report[key] = report[key][:listed]
        return report

    def linked(self, asked: ops.Linked) -> LinkedResult:
        """Memories that link to a target (a memory or a ghost such as a project file), best first."""
        target, query, limit, include_private = asked.target, asked.query, asked.limit, asked.include_private
        found: list[tuple[Memory, str]] = []
        for side in self.app.sides(include_private):
            for edge in side.index.links.linking_to(target):
                memory = side.index.memory(edge.source)
                if memory is not None and vaults.visible(memory, include_private) and \
                        all(m.id != memory.id for m, _ in found):
                    found.append((memory, edge.context))
        if query and found:
            ranked = self.hits(SearchRequest(query=query, limit=LIMIT_MAX), include_private)
            order = {h.memory.id: n for n, h in enumerate(ranked)}
            found.sort(key=lambda item: order.get(item[0].id, len(order)))
        return LinkedResult(target=target, results=[view_of(memory, anchor_context=context)
                                                    for memory, context in found[:limit]])

    def stats(self, asked: ops.Stats = ops.Stats()) -> Stats:
        """The project vault's numbers (private memories are not counted in them) and, for the local user,
        the user vault's count beside them."""
        project = self.app.project
        memories = [m for m in project.index.all_memories() if m.privacy != vaults.PRIVATE]
        superseded = project.index.link_view.superseded_ids()
        report: dict[str, Any] = {  # a dict first: `private` is absent, not null, when it is not the caller's
            "memories": len(memories),
            "collections": dict(Counter(m.collection for m in memories)),
            "types": dict(Counter(m.type for m in memories)),
            "tags": dict(Counter(t for m in memories for t in m.tags).most_common(20)),
            "scored_memories": sum(1 for m in memories if m.uses),
            "superseded": sum(1 for m in memories if m.id in superseded),
            "problems": len(project.index.problems()),
            "chunks": project.index.chunk_count(),
            "ghost_targets": len(project.index.links.ghosts()),
            "books": sum(1 for m in memories if m.collection == "books"),
            "vault": str(self.app.root),
        }
        if asked.include_private:
            user = self.app.user_side()
            private_here = project.index.memory_count() - len(memories)
            report["private"] = {
                "user_vault": str(user.root) if user else None,
                "user_memories": user.index.memory_count() if user else 0,
                "project_memories": private_here,  # files marked private inside the project vault
            }
        return Stats(**report)

    def always_inject(self, include_private: bool = True) -> list[Memory]:
        """Active memory_bank facts marked always_inject, from every vault the caller may read; not one that
        a newer memory supersedes (its successor speaks now) or that the next lifecycle run takes away."""
        now = datetime.now(timezone.utc)
        standing = []
        for side in self.app.sides(include_private):
            gone = side.searcher.out_of_sight(now)
            marked = [side.index.memory(memory_id) for memory_id in side.index.standing_ids()]
            standing += [m for m in marked if m is not None and m.always_inject and m.status == "active"
                         and m.id not in gone and vaults.visible(m, include_private)]
        return sorted(standing, key=lambda m: m.id)

    def find(self, memory_id: str) -> Memory | None:
        """The indexed memory with this id in any vault, or None."""
        return self.find_many([memory_id])[0]

    def find_many(self, memory_ids: Iterable[str]) -> list[Memory | None]:
        """`find` of each id, the vaults asked for once (`App.sides`: a stat of a user vault's folder, or its index's
        catch-up, a call): a prompt looks up every memory its session still awaits a score for, and a Stop every memory
        its session was shown (at a prompt's start, 3.4 ms of CPU for 300 ids at load 12: bench/results/s22-hook22.md)."""
        sides = self.app.sides()

        def found(memory_id: str) -> Memory | None:
            try:
                return self.app.side_of(memory_id, sides).index.get(memory_id)
            except (NotFoundError, ValidationError):
                return None
        return [found(memory_id) for memory_id in memory_ids]

    def insights(self, asked: ops.Insights) -> Insights:
        """What memdir knows that bears on `query`: standing facts, the best memories, where to look."""
        query, session, limit, include_private = asked.query, asked.session, asked.limit, asked.include_private
        # An empty or blank query asks about nothing: the standing facts, which bear on every task, and no memories
        # (issue 26's bad input: a clearly empty answer, not an error).
        asked_about = bool(query and query.strip())
        hits = self.hits(SearchRequest(query=query, limit=LIMIT_MAX), include_private) if asked_about else []
        facts = [h for h in hits if h.memory.collection == "memory_bank"][:4]
        always = [m for m in self.always_inject(include_private) if m.id not in {h.memory.id for h in facts}]
        best = [h for h in hits if h.memory.collection != "memory_bank"][:limit]
        by_collection = Counter(h.memory.collection for h in hits[:20])
        shown = [h.memory for h in facts + best] + always
        self._shown(session, shown)
        waiting = self._review_reminder(session)
        return Insights(
            **({"review": waiting} if waiting else {}),
            query=query if len(query) <= ECHOED_CHARS else query[:ECHOED_CHARS] + "…",  # a pasted log is not sent back
            always=[view_of(m) for m in sorted(always, key=lambda m: m.id)],
            facts=[view_of(h.memory, hit=h) for h in facts],
            memories=[view_of(h.memory, hit=h) for h in best],
            recommended_collections=[c for c, _ in by_collection.most_common(3)],
            memory_count=sum(side.index.memory_count() for side in self.app.sides(include_private)),
        )

    # -- writing -----------------------------------------------------------------------

    def add(self, asked: ops.Add) -> Added:
        content, title, tags, collection = asked.content, asked.title, asked.tags, asked.collection
        privacy, kept_private = self._privacy_for({"content": content, "title": title, "tags": list(tags)},
                                                  asked.privacy, asked.session)
        extra: dict[str, Any] = {}
        if collection == "memory_bank":
            extra.update(importance=bank_weight(asked.importance), confidence=bank_weight(asked.confidence))
            if asked.always_inject:
                extra["always_inject"] = True
        if privacy != "shared":
            extra["privacy"] = privacy
        for key in ("importance", "confidence"):
            if key in extra and not 0.0 <= extra[key] <= 1.0:
                raise ValidationError(f"{key} must be between 0 and 1")
        curator = vaults.add_side(self.app, privacy).curator
        added = curator.add(content, title=title, type=asked.type, collection=collection, tags=tags, extra=extra,
                            allow_secrets=asked.allow_secret)
        return Added(memory=view_of(added.memory, **_kept_private(kept_private)), status=added.status,
                     near_duplicates=[Similar(**vars(s)) for s in added.near_duplicates],
                     possible_conflicts=[Similar(**vars(s)) for s in added.possible_conflicts])

    def update(self, asked: ops.Update) -> MemoryView:
        memory_id, content, fields = asked.memory_id, asked.content, asked.fields
        side = self.app.side_of(check_id(memory_id))
        target = side.index.get(memory_id)
        if (fields or {}).get("privacy") != vaults.PRIVATE:
            self._refuse_leak({"content": content, **(fields or {})}, target, asked.session)
        if "supersedes" not in (fields or {}):
            return view_of(vaults.update(self.app, memory_id, content, fields, allow_secrets=asked.allow_secret))
        # `supersedes` set here as by link(), and checked the same way: a cycle hid both memories (review of s19).
        with side.vault.writer.lock.held():
            written = fields["supersedes"]  # type: ignore[index]
            _refuse_supersedes_cycle(side, side.index.get(memory_id),
                                     [str(v) for v in (written if isinstance(written, (list, tuple)) else [written])])
            return view_of(vaults.update(self.app, memory_id, content, fields, allow_secrets=asked.allow_secret))

    def append(self, asked: ops.Append) -> MemoryView:
        side = self.app.side_of(check_id(asked.memory_id))
        self._refuse_leak({"appended text": asked.content}, side.index.get(asked.memory_id), asked.session)
        return view_of(side.curator.append(asked.memory_id, asked.content, allow_secrets=asked.allow_secret))

    def delete(self, asked: ops.Delete) -> Deleted:
        side = self.app.side_of(check_id(asked.memory_id))
        memory = side.index.get(asked.memory_id)
        # Memories that depend on it keep their depends_on (a restore mends it): the answer names them.
        dependants = sorted({edge.source for edge in side.index.links.backlinks(memory.id, "depends_on")} - {memory.id})
        found = [m for m in map(self.find, dependants) if m is not None]
        return Deleted(id=memory.id, title=memory.title, moved_to=side.curator.delete(memory.id),
                       dependants=[Dependant(id=m.id, title=m.title) for m in found])

    def verify(self, asked: ops.Verify) -> VerifyResult:
        """Someone confirmed these memories still hold: anchor each to its cited files as they are now."""
        ids, verified = asked.ids, []
        sides = [self.app.side_of(check_id(memory_id)) for memory_id in ids]  # every id known before any write
        for memory_id, side in zip(ids, sides):
            memory, was_stale = side.curator.verify(memory_id)
            # Re-anchoring cannot bring back a symbol the code no longer defines (or a deleted file):
            # such a memory is not verified, and the answer says so rather than "verified".
            verified.append(Verified(id=memory.id, title=memory.title, anchors=list(memory.frontmatter.get("anchors") or []),
                                     was_stale=was_stale, still_stale=side.index.vault.stale(memory)))
        return VerifyResult(verified=verified)

    def review(self, asked: ops.Review = ops.Review()) -> ReviewResult:
        """What needs a human decision in each vault, one item each; `dismiss` hides items until they change."""
        dismiss = asked.dismiss
        items: list[ReviewItem] = []
        for side in self.app.sides(include_user=True):
            queue = review.Inbox(side.curator).items()
            if side is not self.app.project:  # a private memory against a shared one: in the user's own inbox only
                queue += review.across(side.curator, self.app.project.curator)
            wanted = [key for key in dismiss if any(item.key == key for item in queue)]
            if wanted:
                review.dismiss(side.root, wanted)
            hidden = review.dismissed(side.root)
            items += [ReviewItem(**item.as_dict(), source=side.source) for item in queue if item.key not in hidden]
        known = {item.key for item in items} | {k for side in self.app.sides(include_user=True)
                                                   for k in review.dismissed(side.root)}
        unknown = [key for key in dismiss if key not in known]
        if unknown:
            raise NotFoundError(f"no review item {', '.join(unknown)}; `memdir review` lists the current keys")
        return ReviewResult(items=items)

    def restore(self, asked: ops.Restore) -> Restored:
        """Bring a deleted memory back from .trash/ (the user vault's, else the project vault's)."""
        memory_id = check_id(asked.memory_id)
        live = self.find(memory_id)
        if live is not None:  # made private since: its project copy in .trash/ is what the move left behind
            raise ConflictError(f"{memory_id} is not deleted: it lives at {live.path}" +
                                (" in your user vault" if live.source == USER else ""))
        errors = []
        # The user vault first: a memory that reached it was made private, and the copy its move left in the
        # project's .trash/ must not come back into the shared files.
        for side in reversed(self.app.sides(include_user=True)):
            try:
                memory = side.curator.restore(memory_id)
            except NotFoundError as exc:
                errors.append(str(exc))
                continue
            return Restored(id=memory.id, title=memory.title, restored_to=memory.path)
        raise NotFoundError(errors[0] if errors else f"no trashed copy of {memory_id}")

    def ingest(self, asked: ops.Ingest) -> list[Ingested]:
        """Reference documents into the project vault's books; one result per file, errors included.
        The title and tags given go into shared books, so they pass the privacy rule."""
        return self._ingest(asked, shared_only=False)

    def _ingest(self, asked: ops.Ingest, shared_only: bool) -> list[Ingested]:
        """`ingest`; `shared_only`: the model's ingest, which reads no file the project's git ignores
        (books.sources), where the user's `memdir ingest` takes what the user names."""
        self._refuse_leak({"title": asked.title, "tags": list(asked.tags)}, None, asked.session)
        side = self.app.project
        results = book_files.ingest(side.curator, [Path(p) for p in asked.paths], project=self.app.root.parent,
                                    title=asked.title, tags=asked.tags, dry_run=asked.dry_run,
                                    max_bytes=int(self.app.config.vault.max_document_mb * 1024 * 1024),
                                    private=self.app.user_root, shared_only=shared_only)
        return [Ingested(**vars(r)) for r in results]

    def ingest_document(self, asked: ops.IngestDocument) -> list[Ingested]:
        """The MCP tool's ingest: only paths inside the project (the model must not read the user's files);
        the title and tags the model gives go into shared books, so they pass the privacy rule."""
        path, project = asked.path, self.app.root.parent.resolve()
        target = resolved_within(project / path, project)
        if target is None:
            raise PathError(f"{path}: outside the project ({project}); only the project's documents can be ingested")
        if not target.exists():
            raise NotFoundError(f"{path}: no such file or folder in the project")
        return self._ingest(ops.Ingest(paths=[str(target)], title=asked.title, tags=asked.tags, session=asked.session),
                            shared_only=True)

    def books(self, asked: ops.Books = ops.Books()) -> list[Book]:
        """The project vault's books: title, source, size and when, ingested or hand-written."""
        return [Book(id=m.id, title=m.title, path=m.path, source=m.frontmatter.get(book_files.SOURCE_PATH),
                     kind=m.frontmatter.get("source_kind", "markdown"), chars=len(m.body),
                     sections=section_count(m.body), updated_at=_isoformat(m.updated_at or m.created_at))
                for m in book_files.books(self.app.project.index.all_memories())]

    def record_response(self, asked: ops.RecordResponse) -> MemoryView:
        privacy, kept_private = self._privacy_for({"key_takeaway": asked.key_takeaway}, asked.privacy, asked.session)
        extra = {"privacy": privacy} if privacy != "shared" else None
        memory = vaults.add_side(self.app, privacy).curator.record_response(
            asked.key_takeaway, asked.initial_score, extra=extra, allow_secrets=asked.allow_secret)
        return view_of(memory, **_kept_private(kept_private))

    def _privacy_for(self, fields: Mapping[str, Any], privacy: str, session: str | None) -> tuple[str, str | None]:
        """A new memory that would carry a private memory (leaks.first_leak) is stored privately (private
        memories are for the user only); returns the privacy to use and why it changed."""
        found = self._leak(fields, session) if privacy == "shared" else None
        if found is None:
            return privacy, None
        return vaults.PRIVATE, f"stored as a private memory: {found.reason()}, and private memories are for the user only"

    def score(self, asked: ops.Score) -> ScoreResult:
        """Score memories (and, with `outcome`, the session's previous exchange); name what is still unscored."""
        memory_scores, outcome, session = asked.memory_scores, asked.outcome, asked.session
        state = self.sessions.load(session) if session else None
        awaiting = list(state.awaiting) if state else []
        unknown = [i for i in memory_scores if not self._exists(check_id(i))]  # check_id: a 100 kB "id" is refused, not echoed
        if unknown:
            hint = ", ".join(awaiting) if awaiting else "none"
            raise NotFoundError(f"no memory with id {', '.join(unknown)}; memories awaiting a score: {hint}")
        outcomes = dict(memory_scores)
        exchange = state.last_exchange if state and outcome else None
        if exchange and self._exists(exchange) and exchange not in outcomes:
            outcomes[exchange] = outcome  # type: ignore[assignment]
        by_side: dict[int, tuple[Any, dict[str, str]]] = {}
        for memory_id, result in outcomes.items():
            side = self.app.side_of(memory_id)  # a user-vault memory's file is in the user vault
            by_side.setdefault(id(side), (side, {}))[1][memory_id] = result
        results = [r for side, part in by_side.values() for r in side.curator.score(part)]
        still = [i for i in awaiting if i not in outcomes]
        if session:
            def mark(state: Session) -> None:
                state.mark_scored(outcomes)
                state.scoring_required = False

            scored = self.sessions.update(session, mark)
            turns.record(self.app.root, "score", scored.id, scored.turn, scores=outcomes)  # for the web view's Turns page
        return ScoreResult(
            scored=[Scored(id=r.id, outcome=r.outcome, changes=_jsonable(r.changes), note=r.note) for r in results],
            exchange=exchange,
            unscored=still,
            # It helped, yet the code it cites changed: the model just saw it hold, so offer to re-anchor it.
            verify=[r.id for r in results if r.outcome == "worked" and self._stale_id(r.id)],
        )

    def _stale_id(self, memory_id: str) -> bool:
        memory = self.find(memory_id)
        return memory is not None and bool(self.stale(memory))

    def gc(self, asked: ops.Gc = ops.Gc()) -> list[Decision]:
        """The lifecycle of each vault this process owns, inside that vault (nothing crosses between them)."""
        return [Decision(**vars(a.decision), result=a.result, source=side.source)
                for side in self.app.sides() if side.index.writable or asked.dry_run
                for a in side.curator.gc(dry_run=asked.dry_run)]

    def suggest_merges(self, asked: ops.SuggestMerges = ops.SuggestMerges()) -> list[Cluster]:
        clusters = [(side.source, c) for side in self.app.sides()
                    for c in side.curator.suggest_merges(asked.threshold, asked.type, asked.limit)]
        clusters.sort(key=lambda item: (-item[1].similarity, item[1].ids))
        return [Cluster(ids=list(c.ids), titles=list(c.titles), similarity=c.similarity, source=source)
                for source, c in clusters[:asked.limit]]

    def merge(self, asked: ops.Merge) -> MemoryView:
        sources = [self.app.side_of(check_id(i)).index.get(i) for i in asked.ids]
        if all(vaults.visible(m, include_private=False) for m in sources):  # else the result is private
            self._refuse_leak({"title": asked.title, "merged text": asked.content}, sources[0], asked.session)
        return view_of(vaults.merge(self.app, list(asked.ids), asked.title, asked.content,
                                    allow_secrets=asked.allow_secret))

    def reindex(self, asked: ops.Reindex = ops.Reindex()) -> Reindexed:
        from indexer.rebuild import reindex

        report = reindex(self.index)
        return Reindexed(memories=report.added, problems=report.errors, seconds=round(report.seconds, 2),
                         chunks=self.index.chunk_count())

    # -- helpers -------------------------------------------------------------------------

    def _review_reminder(self, session: str | None) -> dict[str, int] | None:
        """What waits in the review queue, by kind, on a session's first get_context_insights call and every
        REVIEW_REMINDER_EVERY-th after it (None otherwise, or when nothing waits): a reminder, not a nag."""
        if not session:
            return None
        calls = self.sessions.update(session, lambda s: setattr(s, "insights_calls", s.insights_calls + 1)).insights_calls
        if (calls - 1) % REVIEW_REMINDER_EVERY:
            return None
        waiting = Counter(item.kind for item in self.review().items)
        return dict(sorted(waiting.items())) or None

    def _private_shown(self, session: str | None) -> list[Memory]:
        """The private memories this conversation has been shown (by hooks or tools), as they are now."""
        if not session:
            return []
        shown = self.find_many(self.sessions.load(session).shown)
        return [m for m in shown if m is not None and not vaults.visible(m, include_private=False)]

    def _leak(self, fields: Mapping[str, Any], session: str | None, into: Memory | None = None) -> leaks.Leak | None:
        """What of a write into a shared file (`into`, or a new one) would carry a private memory (the one rule:
        leaks.first_leak). The file's own text is not a leak into itself (a hand-marked private project file)."""
        private = {i: m for i, m in vaults.private_memories(self.app).items() if into is None or i != into.id}
        shown = [m for m in self._private_shown(session) if m.id in private]
        return leaks.first_leak(fields, shown, private, vaults.shared_tags(self.app) if shown else ())

    def _refuse_leak(self, fields: Mapping[str, Any], target: Memory | None, session: str | None) -> None:
        """A shared file must not take in a private memory's text or id; refused before anything is written,
        naming the field. `target` None: a new shared file (ingest). Every file of the project vault is shared,
        `privacy: private` or not (vaults.shared_file)."""
        if target is not None and not vaults.shared_file(target):
            return  # the target lives in the user vault
        found = self._leak(fields, session, into=target)
        if found is not None:
            where = f"{target.id} is shared" if target is not None else "the new memory is shared"
            advice = ("Leave the reference out: a private memory may link to a shared one, not the other way"
                      if found.what == "id" else "Leave the private detail out")
            raise ValidationError(
                f"not written: {found.reason()}, and {where} with everyone who reads this project's vault. {advice}, "
                "or store it with privacy=private (record_response or add_to_memory_bank with privacy=\"private\", "
                "or update_memory with fields={\"privacy\": \"private\"})")

    def _lookup(self, ref: str) -> Memory:
        if looks_like_path(ref):
            path = self.app.vault.resolve(ref)
            rel = path.relative_to(self.app.root).as_posix()
            entry = self.index.entry(rel)
            if entry is None or entry.memory_id is None:
                raise PathError(f"{ref} is not an indexed memory" + (f" ({entry.reason})" if entry and entry.reason else ""))
            return self.index.get(entry.memory_id)
        return self.app.side_of(check_id(ref)).index.get(ref)

    def _exists(self, memory_id: str) -> bool:
        return self.find(memory_id) is not None

    # -- Claude Code hooks (hooks_server.py calls these, never the app underneath) ----------

    def hook_settings(self) -> Any:
        """The [context] settings: what the hooks inject and whether they capture exchanges."""
        return self.app.config.context

    def spool_folder(self) -> Path:
        return self.app.root / capture.SPOOL

    def redacted(self, text: str) -> str:
        return capture.redacted(self.app, text)

    def capture_exchange(self, session_id: str, prompt: str, answer: str, shown: Sequence[str],
                         previous: str | None, at: float | None = None) -> str | None:
        exchange = capture.Exchange(session_id, prompt, answer, self.find_many(shown), previous, at)
        return capture.store_exchange(self.app, exchange)

    # Last in the class: below it, `list` in an annotation would name this method, not the builtin.
    def list(self, asked: ops.List = ops.List()) -> list[MemoryView]:
        memories = [m for side in self.app.sides(asked.include_private) for m in side.index.all_memories()
                    if vaults.visible(m, asked.include_private)]
        return [view_of(m) for m in sorted(memories, key=lambda m: (m.source != "project", m.path))]


def _jsonable(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.strftime("%Y-%m-%dT%H:%M:%SZ") if isinstance(v, datetime) else v) for k, v in values.items()}


def commit_shape(commit: Commit) -> dict[str, Any]:
    return {"commit": commit.sha[:12], "date": commit.date.isoformat(), "author": commit.author, "subject": commit.subject}


def version_shape(version: Version) -> dict[str, Any]:
    memory = version.memory
    shape: dict[str, Any] = {**commit_shape(version.commit), "path": version.path, "created": version.created,
                             "body_changed": version.body_changed, "keys_changed": list(version.keys_changed),
                             "counters_changed": list(version.counters_changed)}
    if memory is not None:
        shape.update(title=memory.title, status=memory.status, score=memory.score, uses=memory.uses,
                     success_count=memory.success_count)
    else:
        shape["error"] = version.error
    return shape


def moment(value: str | None, name: str) -> datetime | None:
    """An `after`/`before` bound: a date (its start, UTC) or an ISO date and time."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(f"{name} must be a date (YYYY-MM-DD) or an ISO date and time, not {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


class KeptPrivate(TypedDict, total=False):
    kept_private: str


def _kept_private(why: str | None) -> KeptPrivate:
    """The optional key saying why a new memory went to the private side (absent when it did not)."""
    return {"kept_private": why} if why else {}


def _isoformat(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _refuse_supersedes_cycle(side: Any, source: Memory, entries: Sequence[str]) -> None:
    """A supersedes link that would close a cycle hides every memory in it from search and context (each is
    superseded by another), so a write that makes `source` supersede what `entries` name is refused when one of them
    already supersedes it: its own file read (the index may not have taken in a link written a moment ago), then the
    chain through the index's graph. Callers hold the vault's write lock."""
    graph = side.index.links
    for newer in sorted(graph.named_in_supersedes(entries, source.path) - {source.id}):
        held = side.index.memory(newer)
        written = side.vault.load(held.path) if held is not None else None
        direct = written is not None and source.id in graph.named_in_supersedes(written.supersedes, written.path)
        if direct or graph.supersedes(newer, source.id):
            # through a chain, `newer` does not name `source` itself: the link to remove is one of the chain's
            undo = (f"remove {source.id} from {newer}'s supersedes first" if direct else
                    f"remove a supersedes link of that chain first (memdir links {newer} shows it)")
            raise ConflictError(f"{newer} already supersedes {source.id}{'' if direct else ' (through a chain)'}: "
                                f"recording {source.id} as superseding {newer} would make a cycle that hides both from "
                                f"search; to reverse it, {undo}")
