"""The pages, one function each: read through the same MemoryService the CLI and the MCP tools use,
return HTML. Actions (`act`) call the very service methods the CLI commands call, so a click changes
the files exactly as the command would.
"""

from __future__ import annotations

import os
import subprocess
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Mapping

from indexer.review import in_order
from vault.anchors import parse_anchors
from vault.errors import NotFoundError, PathError, ValidationError, VaultError
from vault.ids import check_id
from vault.paths import check_relative

from ..service import operations as ops
from ..views.results import Relations, ReviewItem
from . import inbox_review
from .markup import diff, esc, form, frame, markdown, memory_href, plot, table

GIT_SECONDS = 10


def _link(memory_id: str, title: str | None = None) -> str:
    return f'<a href="{memory_href(memory_id)}">{esc(title or memory_id)}</a>'


# -- the review inbox ---------------------------------------------------------------------

PAGE_ITEMS = 40
RELOAD_SECONDS = 1  # how often the "still checking" page asks again


def review_items(service: Any, wait: float = inbox_review.PAGE_WAIT) -> list[ReviewItem]:
    """`memdir review`'s items (service.review) for the vaults as they are now, from a background review
    (see inbox_review); raises inbox_review.Pending when it takes longer than `wait`."""
    return inbox_review.for_service(service).items(wait)


def inbox(service: Any, csrf: str, *, message: str = "", failed: bool = False, kind: str | None = None,
          start: int = 0) -> str:
    vault = str(service.app.root)
    try:
        items = review_items(service)
    except inbox_review.Pending:
        count = sum(side.index.memory_count() for side in service.app.sides(include_user=True))
        return frame("Review inbox", f"<p id=checking>Still checking {count} memories; this page reloads itself.</p>",
                     vault=vault, message=message, failed=failed, reload=RELOAD_SECONDS)
    if not items:
        return frame("Review inbox", "<p>Nothing waits for a decision.</p>", vault=vault, message=message, failed=failed)
    counts: dict[str, int] = {}
    for item in items:
        counts[item.kind] = counts.get(item.kind, 0) + 1
    chosen = [item for item in items if kind in (None, item.kind)]
    start = max(0, min(start, len(chosen) - 1))
    shown = chosen[start:start + PAGE_ITEMS]
    filters = " ".join(f'<a class="kind {esc(k)}" href="/ui/?kind={esc(k)}">{esc(k)} {n}</a>' for k, n in counts.items())
    where = f"?kind={esc(kind)}&amp;" if kind else "?"
    more = (f'<p><a href="/ui/{where}start={start + PAGE_ITEMS}">next {min(PAGE_ITEMS, len(chosen) - start - PAGE_ITEMS)} '
            f'of {len(chosen)}</a></p>') if start + PAGE_ITEMS < len(chosen) else ""
    body = (f'<p class=muted>{len(items)} item{"s" * (len(items) != 1)} wait for a decision'
            f'{"" if len(shown) == len(items) else f"; {start + 1}-{start + len(shown)} of {len(chosen)} shown"}. '
            f'{filters}{" · <a href=/ui/>all</a>" if kind else ""}</p>'
            + "".join(_item(service, item, csrf) for item in shown) + more)
    return frame("Review inbox", body, vault=vault, message=message, failed=failed)


def _item(service: Any, item: ReviewItem, csrf: str) -> str:
    kind, ids, key = item.kind, list(item.ids), item.key
    titles = {i: _title(service, i) for i in ids}
    who = ", ".join(_link(i, titles[i]) for i in ids) or esc(item.path or "")
    parts = [f'<div class=item id="item-{esc(key)}"><span class="kind {esc(kind)}">{esc(kind)}</span>{who}',
             f'<p>{esc(item.reason)}</p>']
    if kind == "stale":
        parts.append(stale_diffs(service, ids[0]))
        parts.append(form("/ui/act/verify", csrf, {"ids": ids[0]}, "verify: it still holds"))
    # A private memory against a shared one (review.across): no supersede link can join them (a shared file never
    # points at a private one); the way out on the page is deleting the private one.
    private = [i for i in ids if (m := service.find(i)) is not None and m.source == "user"]
    spans = len(ids) == 2 and len(private) == 1
    if kind in ("supersede", "contradiction") and not spans:
        older, newer = _older_newer(service, ids)
        parts.append(form("/ui/act/supersede", csrf, {"source": newer, "target": older},
                          f"«{titles[newer]}» supersedes «{titles[older]}»"))
    if kind == "duplicates":
        title_field = f'<input type=text name=title value="{esc(titles[ids[0]])}" aria-label="merged title">'
        parts.append(form("/ui/act/merge", csrf, {"ids": " ".join(ids)}, "merge", extra=title_field))
    if kind in ("stale", "contradiction", "imitation", "secret", "supersede") and ids:
        target = private[0] if spans else _older_newer(service, ids)[1] if len(ids) > 1 else ids[0]
        parts.append(form("/ui/act/delete", csrf, {"id": target}, f"delete «{titles[target]}»", danger=True))
    parts.append(form("/ui/act/dismiss", csrf, {"key": key}, "dismiss"))
    parts.append(f'<p class=muted>CLI: <code>{esc(item.action)}</code></p></div>')
    return "".join(parts)


def _title(service: Any, memory_id: str) -> str:
    memory = service.find(memory_id)
    return memory.title if memory is not None else memory_id


def _older_newer(service: Any, ids: list[str]) -> tuple[str, str]:
    """As the inbox tells it (indexer/review.in_order: by creation time, then by their own words)."""
    first, second = (service.find(i) for i in ids[:2])
    if first is None or second is None:
        return tuple(sorted(ids[:2]))  # type: ignore[return-value]  # one is gone: its action is refused anyway
    older, newer, _ = in_order(first, second)
    return older.id, newer.id


def stale_diffs(service: Any, memory_id: str) -> str:
    """For each cited file that changed: the diff from the content anchored (when git still has that
    blob) to the file now."""
    memory = service.find(memory_id)
    if memory is None:
        return ""
    side = service.app.side_of(memory.id)
    anchors_state = side.vault.anchors
    if anchors_state is None:
        return ""
    project = Path(anchors_state.project)
    changed = {s["path"]: s for s in side.vault.stale(memory)}
    shown = []
    for anchor in parse_anchors(memory.frontmatter.get("anchors"))[0]:
        if anchor.path not in changed:
            continue
        now = _project_file(project, anchor.path)
        then = _git_blob(project, anchor.blob)
        if then is None or now is None:
            why = "deleted" if now is None else f"git has no blob {anchor.blob} (the file was not committed as anchored)"
            shown.append(f"<p class=muted>{esc(anchor.path)}: {esc(why)}</p>")
        else:
            shown.append(diff(then, now, f"{anchor.path}@{anchor.blob}", f"{anchor.path} (now)"))
    return "".join(shown)


def _project_file(project: Path, relative: str) -> str | None:
    """A cited file's text, only when it lies inside the project (lexically and after symlinks)."""
    try:
        check_relative(relative, "the project")
    except PathError:
        return None
    real = os.path.realpath(project / relative)
    if not real.startswith(os.path.realpath(project) + os.sep) or not os.path.isfile(real):
        return None
    with open(real, encoding="utf-8", errors="replace") as handle:
        return handle.read(1_000_000)


def _git_blob(project: Path, blob: str) -> str | None:
    if not all(c in "0123456789abcdef" for c in blob) or not (project / ".git").exists():
        return None
    try:
        done = subprocess.run(["git", "-C", str(project), "cat-file", "blob", blob], capture_output=True,
                              timeout=GIT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


# -- actions: the CLI's own service calls ---------------------------------------------------

def _ids(value: str) -> list[str]:
    ids = value.split()
    for memory_id in ids:
        check_id(memory_id)
    if not ids:
        raise ValidationError("no memory named")
    return ids


def _verify(service: Any, fields: Mapping[str, str]) -> str:  # memdir verify ID
    done = service.verify(ops.Verify(ids=_ids(fields.get("ids", "")))).verified
    refused = [v for v in done if v.still_stale]  # a cited symbol is gone: nothing was confirmed, as the CLI says
    if refused:
        raise ValidationError("; ".join(
            f"«{v.title}» is NOT verified: " + ", ".join(f"{s.path} {s.reason}" for s in v.still_stale) for v in refused)
            + ": edit it to what the code says now, then verify it")
    return "verified: " + ", ".join(v.title for v in done)


def _supersede(service: Any, fields: Mapping[str, str]) -> str:  # memdir link NEWER OLDER --as supersedes
    source, target = _ids(fields.get("source", ""))[0], _ids(fields.get("target", ""))[0]
    report = service.link(ops.Link(source=source, target=target, relation="supersedes"))
    return f"recorded: {source} supersedes {target}" + ("" if report.changed else " (already so)")


def _merge(service: Any, fields: Mapping[str, str]) -> str:  # memdir merge IDS --into TITLE
    merged = service.merge(ops.Merge(ids=_ids(fields.get("ids", "")), title=_title_of(fields)))
    return f"merged into {merged.id} ({merged.path}); the sources moved to .trash/"


def _delete(service: Any, fields: Mapping[str, str]) -> str:  # memdir delete ID
    deleted = service.delete(ops.Delete(memory_id=_ids(fields.get("id", ""))[0]))
    return f"moved «{deleted.title}» to {deleted.moved_to} (memdir restore {deleted.id} brings it back)"


def _dismiss(service: Any, fields: Mapping[str, str]) -> str:  # memdir review --dismiss KEY
    service.review(ops.Review(dismiss=[_key(fields.get("key", ""))]))
    return "dismissed until what it is about changes"


ACTIONS: dict[str, Callable[[Any, Mapping[str, str]], str]] = {
    "verify": _verify, "supersede": _supersede, "merge": _merge, "delete": _delete, "dismiss": _dismiss}


def _title_of(fields: Mapping[str, str]) -> str:
    title = fields.get("title", "").strip()
    if not title:
        raise ValidationError("give the merged memory a title")
    return title


def _key(value: str) -> str:
    if not value or len(value) > 64 or not value.isalnum():
        raise ValidationError("not a review item key")
    return value


def act(service: Any, action: str, fields: Mapping[str, str]) -> str:
    """Run one inbox action; memdir's errors (a conflict, an unknown id) come back as VaultError."""
    run = ACTIONS.get(action)
    if run is None:
        raise NotFoundError(f"no action {action!r}")
    return run(service, fields)


# -- a memory ---------------------------------------------------------------------------------

def memory_page(service: Any, memory_id: str, csrf: str) -> str:
    check_id(memory_id)
    memory = service.find(memory_id)
    if memory is None:
        raise NotFoundError(f"no memory {memory_id!r}")
    vault = str(service.app.root)
    relations = service.relationships(ops.Relationships(memory_id=memory_id))
    versions, why_none = _history(service, memory)
    known: dict[str, str] = {}  # a link names its target by path, stem or id (indexer/graph.py): as resolved there
    for edge in relations.outgoing:
        path = edge.get("path") or ""
        for name in (edge["id"], path, path.removesuffix(".md"), Path(path).stem, edge.get("title") or ""):
            known.setdefault(name.lower(), edge["id"])

    def resolve(target: str) -> str | None:
        return known.get(target.strip().lower()) or known.get(Path(target.strip()).stem.lower())

    front = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in memory.frontmatter.items())
    sections = [
        f'<section><p class=muted>{esc(memory.id)} · {esc(memory.path)} · {esc(memory.type)} · {esc(memory.status)} · '
        f'<a href="/ui/turns?memory={esc(memory.id)}">where it was shown</a></p>'
        f'{markdown(memory.body, resolve)}</section>',
        f"<section><h2>Score and outcomes</h2>{score_plot(memory, versions)}</section>",
        f"<section><h2>Links</h2>{_relations(relations)}</section>",
        f"<section><h2>Staleness anchors</h2>{_anchors(service, memory)}</section>",
        f"<section><h2>Versions</h2>{_versions(versions, why_none)}</section>",
        f"<section><h2>Frontmatter</h2><dl>{front}</dl></section>",
    ]
    return frame(memory.title, "".join(sections), vault=vault)


def _history(service: Any, memory: Any) -> tuple[list[Any], str]:
    """The memory file's committed versions, newest first (one `git log` and one `git show` each), or why none."""
    from vault.history import VaultHistory

    try:
        return VaultHistory(service.app.side_of(memory.id).root).versions(memory.path), ""
    except VaultError as exc:
        return [], str(exc)


def score_plot(memory: Any, versions: list[Any]) -> str:
    """The score at each committed version, then now; the last point carries the last outcome's colour."""
    points = [(v.commit.date.date().isoformat(), float(v.memory.score)) for v in reversed(versions) if v.memory is not None]
    points.append(("now", float(memory.score)))
    outcomes = list(memory.outcomes)
    summary = (f"<p class=muted>score {memory.score:.2f} · used {memory.uses} times · "
               f"outcomes (oldest first): {esc(', '.join(outcomes) or 'none')}</p>")
    marks = [""] * (len(points) - 1) + ([outcomes[-1]] if outcomes else [""])
    return plot(points, label=f"score of {memory.title} over time", marks=marks) + summary


def _relations(report: Relations) -> str:
    rows = [(esc(e["relation"]), "→ " + _link(e["id"], e.get("title"))) for e in report.outgoing]
    rows += [(esc(e["relation"]), "← " + (_link(e["id"], e.get("title")) if "id" in e else esc(e.get("ghost"))))
             for e in report.backlinks]
    rows += [(esc(e["relation"]), "→ " + esc(e["ghost"])) for e in report.ghosts]
    return table(("relation", "memory"), rows) if rows else "<p class=muted>no links</p>"


def _anchors(service: Any, memory: Any) -> str:
    anchors = parse_anchors(memory.frontmatter.get("anchors"))[0]
    if not anchors:
        return "<p class=muted>cites no project file</p>"
    stale = {s["path"]: s for s in service.stale(memory)}
    rows = [(esc(a.path + (f"::{a.symbol}" if a.symbol else "")), esc(a.blob),
             esc(f'{stale[a.path]["reason"]}' if a.path in stale else "fresh")) for a in anchors]
    return table(("file", "anchored blob", "now"), rows) + (stale_diffs(service, memory.id) if stale else "")


def _versions(versions: list[Any], why_none: str, most_diffs: int = 5) -> str:
    from ..service.memory_service import version_shape

    if not versions:
        return f"<p class=muted>{esc(why_none or 'not committed to git yet')}</p>"
    shapes = [version_shape(v) for v in versions]
    rows = [(esc(v["commit"][:10]), esc(v["date"][:16]), esc(v.get("subject")),
             esc(", ".join(["body"] * bool(v.get("body_changed")) + list(v.get("keys_changed") or []))
                 or ("created" if v.get("created") else "")))
            for v in shapes]
    bodies = [(v.commit.sha[:10], v.memory.body) for v in versions[: most_diffs + 1] if v.memory is not None]
    diffs = "".join(f"<details><summary>{esc(old[0])} → {esc(new[0])}</summary>{diff(old[1], new[1], old[0], new[0])}</details>"
                    for new, old in zip(bodies, bodies[1:]) if new[1] != old[1])
    return table(("commit", "date", "subject", "changed"), rows) + diffs


# -- turns --------------------------------------------------------------------------------------

def turns_page(service: Any, memory_filter: str | None = None, most: int = 200) -> str:
    """Each session's turns, newest first: the prompt's first line, the memories injected (relevance,
    channel, labels), the outcome each got in a later score, and the exchange captured. With
    `memory_filter`: only the turns that showed that memory, and how it fared."""
    from ..service import turns

    if memory_filter:
        check_id(memory_filter)
    prompts: list[dict[str, Any]] = []
    scores: dict[str, list[dict[str, Any]]] = {}
    exchanges: dict[tuple[str, int], str] = {}
    for entry in turns.read(service.app.root):
        if entry["kind"] == "prompt" and isinstance(entry.get("shown"), list):
            prompts.append(entry)
        elif entry["kind"] == "score" and isinstance(entry.get("scores"), dict):
            scores.setdefault(entry["session"], []).append(entry)
        elif entry["kind"] == "exchange":
            exchanges[(entry["session"], entry["turn"])] = str(entry.get("stored"))

    def outcome(prompt: dict[str, Any], memory_id: str) -> str:
        later = (s for s in scores.get(prompt["session"], ()) if s["at"] >= prompt["at"] and memory_id in s["scores"])
        return str(next(later, {"scores": {memory_id: ""}})["scores"][memory_id])

    if memory_filter:
        prompts = [p for p in prompts if any(s.get("id") == memory_filter for s in p["shown"])]
    prompts.sort(key=lambda p: -p["at"])
    blocks, fared = [], []
    for prompt in prompts[:most]:
        rows = []
        for shown in prompt["shown"]:
            memory_id = str(shown.get("id"))
            result = outcome(prompt, memory_id)
            if memory_id == memory_filter:
                fared.append(result or "not scored")
            relevance = shown.get("relevance")
            rows.append((_link(memory_id, shown.get("title")),
                         esc(f"{relevance:.2f}" if isinstance(relevance, (int, float)) else "—"),
                         esc(shown.get("channel") or "—"), esc(", ".join(shown.get("labels") or [])), esc(result or "—")))
        stored = exchanges.get((prompt["session"], prompt["turn"]))
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(prompt["at"]))
        blocks.append(
            f'<section class=turn><h2>{esc(prompt.get("prompt") or "(empty prompt)")}</h2>'
            f'<p class=muted>session {esc(prompt["session"][:12])} · turn {esc(prompt["turn"])} · {esc(when)}'
            + (f" · exchange captured as {_link(stored)}" if stored else "") + "</p>"
            + (table(("memory injected", "relevance", "channel", "labels", "scored afterwards"), rows)
               if rows else "<p class=muted>nothing injected</p>") + "</section>")
    head = ""
    if memory_filter:
        counts = {k: fared.count(k) for k in dict.fromkeys(fared)}
        head = (f"<p>{_link(memory_filter, _title(service, memory_filter))}: shown in {len(fared)} turn"
                f"{'s' * (len(fared) != 1)}" + (": " + ", ".join(f"{v} {esc(k)}" for k, v in counts.items()) if fared else "")
                + ' · <a href="/ui/turns">all turns</a></p>')
    body = head + ("".join(blocks) or "<p class=muted>no turn recorded yet (the prompt hook records them)</p>")
    return frame("Turns", body, vault=str(service.app.root))


# -- search -------------------------------------------------------------------------------------

SHARE_COLOURS = {"vector": "#3b6fd6", "keyword": "#bf8700", "graph": "#8250df", "quality": "#1a7f37", "recency": "#0a7ea4"}


def channel_shares(hit: Any) -> dict[str, float]:
    """How much of a hit's final score each part brought, as signed shares of the sum of their sizes:
    the text match (vector and keyword by their terms in the fusion; all of it `graph` for a memory
    reached through a link), quality (what the outcome record added or took away) and recency."""
    parts = hit.explain
    if not parts:
        return {}
    text = parts["order"]
    if hit.channel == "graph":
        split = {"graph": text}
    else:
        vector, keyword = max(0.0, parts["vector_mix"]), max(0.0, parts["keyword_mix"])
        if vector + keyword == 0:
            vector, keyword = (1.0, 0.0) if hit.channel == "vector" else (0.0, 1.0) if hit.channel == "keyword" else (0.5, 0.5)
        split = {"vector": text * vector / (vector + keyword), "keyword": text * keyword / (vector + keyword)}
    terms = {**split, "quality": text * (parts["quality"] - 1.0), "recency": parts["recency"]}
    total = sum(abs(v) for v in terms.values()) or 1.0
    return {name: value / total for name, value in terms.items() if value}


def _share_bar(shares: Mapping[str, float], width: int = 220, height: int = 14) -> str:
    x, rects = 0.0, []
    for name, share in shares.items():
        w = abs(share) * width
        fill = SHARE_COLOURS[name] if share > 0 else "#cf222e"
        rects.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" fill="{fill}">'
                     f"<title>{esc(name)} {share:+.0%}</title></rect>")
        x += w
    return f'<svg class=shares viewBox="0 0 {width} {height}" width="{width}" height="{height}">{"".join(rects)}</svg>'


def search_page(service: Any, query: str, limit: int = 20) -> str:
    from indexer.search import SearchRequest

    query = query.strip()[:1000]
    box = (f'<form method=get action="/ui/search"><input type=text name=q value="{esc(query)}" size=50 '
           'aria-label=query autofocus> <button>search</button></form>')
    if not query:
        return frame("Search", box, vault=str(service.app.root))
    hits = service.hits(SearchRequest(query=query, limit=limit))
    rows = []
    for rank, hit in enumerate(hits, 1):
        shares = channel_shares(hit)
        told = ", ".join(f"{name} {share:+.0%}" for name, share in shares.items())
        via = f" via {_link(hit.via)}" if hit.via else ""
        rows.append((esc(rank), _link(hit.memory.id, hit.memory.title) + via, esc(hit.channel),
                     esc(f"{hit.relevance if hit.shown is None else hit.shown:.2f}"), esc(f"{hit.final:.3f}"), _share_bar(shares) + f"<br><span class=muted>{esc(told)}</span>"))
    legend = " ".join(f'<span class=kind style="background:{c};color:#fff">{n}</span>' for n, c in SHARE_COLOURS.items())
    body = box + f"<p class=muted>{len(hits)} results · each bar: what made its final score {legend}</p>" + (
        table(("#", "memory", "channel", "relevance", "final", "share of the final score"), rows) if rows else "<p>no match</p>")
    return frame("Search", body, vault=str(service.app.root))


# -- the vault ----------------------------------------------------------------------------------

LIFECYCLE_SHOWN = 30


_VAULT_PAGES: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], str]] = weakref.WeakKeyDictionary()


def vault_page(service: Any) -> str:
    """The Vault page, made again only when the project index or the lifecycle log changed."""
    from vault.lifecycle import LOG_NAME

    key = (service.app.project.index.version, inbox_review.mtime_ns(service.app.root / LOG_NAME))
    cached = _VAULT_PAGES.get(service)
    if cached is None or cached[0] != key:
        cached = _VAULT_PAGES[service] = (key, _vault_page(service))
    return cached[1]


def _vault_page(service: Any) -> str:
    """Counts by collection and type (as `memdir stats`), growth by month, the lifecycle's last decisions
    (.memdir/lifecycle.jsonl) and the memories that help most and least (Wilson lower bound of their
    outcomes, among those scored at least twice)."""
    from vault.lifecycle import LOG_NAME
    from vault.scoring import wilson_lower_bound

    stats = service.stats()
    counts = "".join(
        f"<section><h2>By {esc(key)}</h2>" + table((key, "memories"), ((esc(k), esc(v)) for k, v in
                                                   sorted(counted.items(), key=lambda kv: -kv[1]))) + "</section>"
        for key, counted in (("collections", stats.collections), ("types", stats.types)))
    memories = [m for m in service.app.project.index.all_memories() if m.privacy != "private"]
    written = [m.created_at for m in memories if m.created_at is not None]
    by_day = bool(written) and (max(written) - min(written)).days < 90  # a young vault grows by the day
    buckets: dict[str, int] = {}
    for when in written:
        bucket = when.strftime("%Y-%m-%d" if by_day else "%Y-%m")
        buckets[bucket] = buckets.get(bucket, 0) + 1
    total, growth = 0, []
    for bucket in sorted(buckets):
        total += buckets[bucket]
        growth.append((bucket, float(total)))
    growth_plot = plot(growth, label="memories over time", high=max(1.0, float(total)))
    scored = [(wilson_lower_bound(m.success_count, m.uses), m) for m in memories if m.uses >= 2]
    scored.sort(key=lambda pair: (-pair[0], pair[1].id))

    def rows(pairs: list[tuple[float, Any]]) -> str:
        return table(("memory", "helped (Wilson)", "uses", "outcomes"),
                     ((_link(m.id, m.title), esc(f"{w:.2f}"), esc(m.uses), esc(" ".join(m.outcomes[-6:]))) for w, m in pairs))

    events = list(_lifecycle_events(service.app.root / LOG_NAME))[-LIFECYCLE_SHOWN:]
    lifecycle = table(("when", "action", "memory", "why"), (
        (esc(e.get("when")), esc(f'{e.get("action")} {e.get("from_collection", "")} → {e.get("to_collection") or "—"}'),
         _link(str(e.get("id"))), esc(e.get("why"))) for e in reversed(events))) if events else \
        "<p class=muted>no lifecycle decision applied yet</p>"
    body = (f'<p>{esc(stats.memories)} memories · {esc(stats.scored_memories)} scored · '
            f'{esc(stats.superseded)} superseded · {esc(stats.problems)} problem files</p>'
            f"<section><h2>Growth (memories written, by {'day' if by_day else 'month'})</h2>{growth_plot}</section>{counts}"
            f"<section><h2>Lifecycle (latest first)</h2>{lifecycle}</section>"
            f"<section><h2>Help most</h2>{rows(scored[:10]) if scored else '<p class=muted>none scored twice yet</p>'}</section>"
            f"<section><h2>Help least</h2>{rows(scored[10:][::-1][:10]) if scored[10:] else '<p class=muted>no other scored twice</p>'}</section>")
    return frame("Vault", body, vault=str(service.app.root))


def _lifecycle_events(path: Path) -> Any:
    import json

    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - (1 << 20)))
            data = handle.read()
    except FileNotFoundError:
        return
    for raw in data.split(b"\n"):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry
