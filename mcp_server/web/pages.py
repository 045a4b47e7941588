"""The web view's HTML. Every value that came from the vault passes through `e()` (html.escape, quotes
too) before it reaches the page, and the pages carry no script, so a memory holding markup shows it as text."""

from __future__ import annotations

import re
from html import escape
from typing import Any, Callable, Mapping
from urllib.parse import quote

from .plot import score_svg

SUPERSEDE = re.compile(r"memdir link (m-[0-9a-f]+) (m-[0-9a-f]+) --as supersedes")  # the item's own command
WIKILINK = re.compile(r"\[\[([^\[\]|#]+)(?:#[^\[\]|]*)?(?:\|([^\[\]]+))?\]\]")
STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#263238;color:#fff;padding:.6em 1em;display:flex;flex-wrap:wrap;gap:1em;align-items:center}
header a{color:#fff;text-decoration:none}header strong{margin-right:1em}
main{max-width:980px;margin:0 auto;padding:1em}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em;margin:.8em 0;overflow-wrap:anywhere}
.kind{display:inline-block;font-size:12px;padding:1px 6px;border-radius:4px;background:#eceff1;margin-right:.5em}
.muted{color:#666}.notice{background:#e8f5e9;border-color:#a5d6a7}.error{background:#ffebee;border-color:#ef9a9a}
form.inline{display:inline}button{font:inherit;padding:.25em .8em;margin:.2em .3em .2em 0;cursor:pointer}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.25em .5em;text-align:left;vertical-align:top}th{width:14em}
pre.body{white-space:pre-wrap;font:14px/1.5 ui-monospace,monospace;background:#fff;padding:1em;border:1px solid #ddd}
input[type=search]{font:inherit;padding:.3em;width:min(30em,70vw)}
.bar{display:inline-block;height:10px;background:#1565c0;vertical-align:middle}
svg.plot{max-width:100%;height:auto;background:#fff;border:1px solid #ddd}
@media (max-width:600px){main{padding:.5em}header{gap:.5em}td,th{display:block;border:0}}
"""


def e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def memory_url(memory_id: str) -> str:
    return "/ui/memory/" + quote(memory_id, safe="")


def page(title: str, body: str, notice: str | None = None) -> str:
    flash = f'<div class="card notice" role="status">{e(notice)}</div>' if notice else ""
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width,initial-scale=1">'
            f"<title>{e(title)} · memdir</title><style>{STYLE}</style></head><body>"
            '<header><strong>memdir</strong><a href="/ui/">Review inbox</a><a href="/ui/search">Search</a>'
            '<a href="/ui/turns">Turns</a></header>'
            f"<main><h1>{e(title)}</h1>{flash}{body}</main></body></html>")


def login_page(reason: str) -> str:
    return page("Sign in", f'<div class="card">{e(reason)} Run <code>memdir ui</code> in your project to open '
                            "this view with a fresh one-time link.</div>")


def error_page(message: str) -> str:
    return page("Not found", f'<div class="card error">{e(message)}</div>')


def button(action: str, csrf: str, label: str, **fields: str) -> str:
    hidden = "".join(f'<input type=hidden name="{e(k)}" value="{e(v)}">' for k, v in fields.items())
    return (f'<form class=inline method=post action="/ui/action"><input type=hidden name=csrf value="{e(csrf)}">'
            f'<input type=hidden name=action value="{e(action)}">{hidden}<button type=submit '
            f'data-action="{e(action)}">{e(label)}</button></form>')


KIND_ORDER = ("stale", "contradiction", "supersede", "duplicates", "secret", "imitation", "invalid",
              "promote", "demote", "archive", "remove")  # what needs a person first
PAGE_SIZE = 50


def inbox_page(items: list[Mapping[str, Any]], titles: Mapping[str, str], csrf: str, notice: str | None,
               counts: Mapping[str, int] | None = None, kind: str | None = None, start: int = 0, total: int = 0) -> str:
    if not items and not total:
        return page("Review inbox", '<div class="card">Nothing to review.</div>', notice)
    counts = counts or {}
    total = total or len(items)
    by_kind = " · ".join(f'<a href="/ui/?kind={e(k)}">{e(k)} {n}</a>' for k, n in
                         sorted(counts.items(), key=lambda kv: KIND_ORDER.index(kv[0]) if kv[0] in KIND_ORDER else 99))
    query = f"kind={e(kind)}&amp;" if kind else ""
    pager = "".join([
        f'<a href="/ui/?{query}page={start // PAGE_SIZE - 1}">previous</a> ' if start else "",
        f'<a href="/ui/?{query}page={start // PAGE_SIZE + 1}">next</a>' if start + PAGE_SIZE < total else ""])
    summary = (f"<p>{sum(counts.values()) or total} item{'s' if (sum(counts.values()) or total) != 1 else ''} to review"
               + (f": {by_kind}" if by_kind else "") + (' · <a href="/ui/">all</a>' if kind else "") + "</p>"
               + (f"<p class=muted>{start + 1}–{start + len(items)} of {total}{' (' + e(kind) + ')' if kind else ''} {pager}</p>"
                  if total > len(items) or start else ""))
    cards = []
    for item in items:
        ids = list(item.get("ids") or [])
        named = "".join(f'<li><a href="{e(memory_url(i))}">{e(titles.get(i, i))}</a> <span class=muted>{e(i)}</span> '
                        f'{button("delete", csrf, "Delete", id=i)}</li>' for i in ids)
        actions = button("verify", csrf, "Verify", id=ids[0]) if item.get("kind") == "stale" and ids else ""
        newer_older = SUPERSEDE.search(str(item.get("action") or ""))
        if newer_older and item.get("kind") in ("supersede", "contradiction"):
            newer, older = newer_older.groups()
            actions += button("supersede", csrf, f"{titles.get(newer, newer)} supersedes {titles.get(older, older)}",
                              source=newer, target=older)
        actions += button("dismiss", csrf, "Dismiss", key=str(item.get("key", "")))
        where = f' <span class=muted>{e(item.get("path"))}:{e(item.get("line") or "")}</span>' if item.get("path") else ""
        cards.append(f'<div class="card item" data-kind="{e(item.get("kind"))}"><span class=kind>{e(item.get("kind"))}'
                     f'</span>{e(item.get("reason"))}{where}<ul>{named}</ul><div>{actions}</div>'
                     f'<div class=muted>CLI: <code>{e(item.get("action"))}</code></div></div>')
    return page("Review inbox", summary + "".join(cards), notice)


def linked_body(text: str, resolve: Callable[[str], str | None]) -> str:
    """The body, escaped, with each [[wikilink]] that names a memory made a link to its page."""
    out, position = [], 0
    for match in WIKILINK.finditer(text):
        out.append(e(text[position:match.start()]))
        target = match.group(1).strip()
        label = (match.group(2) or match.group(1)).strip()
        found = resolve(target)
        out.append(f'<a href="{e(memory_url(found))}">{e(label)}</a>' if found
                   else f'<span class="muted" title="no memory by that name">{e(match.group(0))}</span>')
        position = match.end()
    out.append(e(text[position:]))
    return "".join(out)


FRONTMATTER_SHOWN = ("id", "collection", "type", "status", "privacy", "created_at", "age", "score", "wilson_score",
                     "uses", "success_count", "outcome_history", "last_outcome", "last_used_at", "tags", "aliases",
                     "supersedes", "importance", "confidence", "always_inject", "source", "path")


def versions_table(history: Mapping[str, Any] | None) -> str:
    """The memory's committed versions, newest first: what each commit changed (as `memdir log`)."""
    if not history:
        return ""
    if history.get("error"):
        return f'<p class="muted">{e(history["error"])}</p>'
    rows = "".join(
        f'<tr><td>{e(v.get("commit"))}</td><td>{e(str(v.get("date") or "")[:16])}</td><td>{e(v.get("author"))}</td>'
        f'<td>{e(v.get("subject"))}</td><td>{e(_changes(v))}</td></tr>' for v in history.get("versions") or [])
    pending = '<p class="muted">The file has changes not committed yet.</p>' if history.get("uncommitted_changes") else ""
    return pending + (f"<div class=card><table><tr><th>commit</th><th>date</th><th>author</th><th>subject</th>"
                      f"<th>changed</th></tr>{rows}</table></div>" if rows else '<p class="muted">not committed yet</p>')


def _changes(version: Mapping[str, Any]) -> str:
    if version.get("created"):
        return "created"
    parts = (["body"] if version.get("body_changed") else []) + list(version.get("keys_changed") or []) \
        + list(version.get("counters_changed") or [])
    return ", ".join(map(str, parts)) or "moved"


def memory_page(memory: Mapping[str, Any], relations: Mapping[str, Any], resolve: Callable[[str], str | None],
                csrf: str, notice: str | None, history: Mapping[str, Any] | None = None) -> str:
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(_plain(memory[k]))}</td></tr>"
                   for k in FRONTMATTER_SHOWN if memory.get(k) not in (None, "", [], {}))
    rows += "".join(f"<tr><th>{e(k)}</th><td>{e(_plain(v))}</td></tr>" for k, v in (memory.get("fields") or {}).items())
    stale = "".join(f"<li>{e(s.get('path'))}: {e(s.get('reason') or s.get('status') or '')}</li>"
                    for s in memory.get("stale") or [])
    stale_block = (f'<div class="card error"><strong>Stale:</strong> cited files changed<ul>{stale}</ul>'
                   f'{button("verify", csrf, "Verify", id=str(memory["id"]))}</div>') if stale else ""

    def edges(entries: list[Mapping[str, Any]]) -> str:
        items = "".join(f'<li>{e(x.get("relation"))}: <a href="{e(memory_url(str(x["id"])))}">{e(x.get("title"))}</a></li>'
                        for x in entries if x.get("id"))
        return f"<ul>{items}</ul>" if items else '<p class="muted">none</p>'

    body = (f'{stale_block}<pre class="body">{linked_body(str(memory.get("content") or ""), resolve)}</pre>'
            f'<h2>Success rate after each outcome</h2><p class=muted>95 % lower bound, as ranking reads the record; '
            f'dots: worked, partial, failed.</p>{score_svg(list(memory.get("outcomes") or []))}'
            f'<h2>Frontmatter</h2><div class=card><table>{rows}</table></div>'
            f'<h2>Links</h2>{edges(relations.get("outgoing") or [])}'
            f'<h2>Backlinks</h2>{edges(relations.get("backlinks") or [])}'
            f'<h2>Versions</h2>{versions_table(history)}'
            f'<div>{button("delete", csrf, "Delete this memory", id=str(memory["id"]))}</div>')
    return page(str(memory.get("title") or memory.get("id")), body, notice)


def _plain(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def search_page(query: str, results: list[Mapping[str, Any]] | None, error: str | None = None) -> str:
    form = (f'<form method=get action="/ui/search"><input type=search name=q value="{e(query)}" '
            'placeholder="search the vault" autofocus> <button type=submit>Search</button></form>')
    if error:
        return page("Search", form + f'<div class="card error">{e(error)}</div>')
    if results is None:
        return page("Search", form)
    rows = []
    for r in results:
        relevance = float(r.get("relevance") or 0)
        similarity = r.get("embedding_similarity")
        rows.append(
            f'<div class="card result"><a href="{e(memory_url(str(r["id"])))}"><strong>{e(r.get("title"))}</strong></a> '
            f'<span class=muted>{e(r.get("collection"))}/{e(r.get("type"))} · {e(r.get("age"))}</span>'
            f'<div>channel <span class=kind>{e(r.get("channel"))}</span> relevance <span class=bar style="width:'
            f'{max(1, int(relevance * 120))}px"></span> {relevance:.2f}'
            + (f" · vector similarity {float(similarity):.2f}" if similarity is not None else "")
            + f' · final {float(r.get("final_score") or 0):.2f} · score {e(r.get("score"))} {e(r.get("outcome_history"))}</div>'
            f'<div class=muted>{e(str(r.get("content") or "")[:300])}</div></div>')
    found = f"<p>{len(results)} result{'s' if len(results) != 1 else ''}.</p>"
    return page("Search", form + found + "".join(rows))


def turns_page(sessions: list[Any], titles: Mapping[str, str], memory_filter: str | None) -> str:
    """Per session, newest first: the current turn's prompt (first line), what it was shown, what still
    awaits a score, and everything the session was shown. The records keep each session's latest turn,
    not every past one, so this is what the next score will be about."""
    def linked(ids: list[str]) -> str:
        return ", ".join(f'<a href="{e(memory_url(i))}">{e(titles.get(i, i))}</a>' for i in ids) or '<span class=muted>none</span>'

    cards = []
    for session in sessions:
        first_line = (session.prompt or "").strip().splitlines()[0][:200] if (session.prompt or "").strip() else ""
        exchange = linked([session.last_exchange]) if session.last_exchange else '<span class=muted>none</span>'
        cards.append(
            f'<div class="card session"><strong>session {e(session.id[:40])}</strong> '
            f'<span class=muted>turn {e(session.turn)} · updated {e(_when(session.updated))}</span>'
            f'<table><tr><th>prompt</th><td>{e(first_line) or "<span class=muted>none</span>"}</td></tr>'
            f'<tr><th>shown this turn</th><td>{linked(list(session.turn_shown))}</td></tr>'
            f'<tr><th>awaiting a score</th><td>{linked(list(session.awaiting))}</td></tr>'
            f'<tr><th>scored this turn</th><td>{"yes" if session.scored_this_turn else "no"}</td></tr>'
            f'<tr><th>shown in the session</th><td>{linked(sorted(session.shown))}</td></tr>'
            f'<tr><th>last exchange captured</th><td>{exchange}</td></tr></table></div>')
    heading = f'<p>Sessions that were shown <a href="{e(memory_url(memory_filter))}">{e(titles.get(memory_filter, memory_filter))}</a>. ' \
              '<a href="/ui/turns">All sessions</a></p>' if memory_filter else ""
    form = ('<form method=get action="/ui/turns"><input type=search name=memory placeholder="memory id" '
            f'value="{e(memory_filter or "")}"> <button type=submit>Filter</button></form>')
    return page("Turns", form + heading + ("".join(cards) or '<div class="card">No session records.</div>'))


def _when(epoch: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
