"""Human-readable renderings of memories, shared by the CLI, the MCP tools and the hooks."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from .outward import (DATA_NOTE, HitOut, clip, hit_lines, neutral, place, quote, shown_relevance, stale_label,
                      uses_label)
from .results import (
    Added, Book, Cluster, Decision, Deleted, Ingested, LogResult, Relations, Restored, ReviewResult, ScoreResult, Stats,
    VerifyResult,
)
from .view import MemoryView


def stats_label(view: MemoryView) -> str:
    """`2d, s:0.72, w:0.68, 8 uses, [YY~N]`; memory_bank shows importance and confidence instead."""
    parts = [view.age] if view.age else []
    if view.collection == "memory_bank":
        parts += [f"imp:{view.importance:.1f}", f"conf:{view.confidence:.1f}"]
    elif view.collection != "books":
        parts += [f"s:{view.score:.2f}", f"w:{view.wilson_score:.2f}", uses_label(view.uses)]
        if view.outcome_history:
            parts.append(view.outcome_history)
    return ", ".join(parts)


def memory_detail(view: MemoryView) -> str:
    """The `memdir show` rendering: a header line, the metadata that matters, then the body."""
    lines = [
        view.title,
        f"[id:{view.id}] {place(view)} · {view.type} · {stats_label(view) or 'no age'}",
        f"path: {view.path}",
    ]
    if view.tags:
        lines.append("tags: " + ", ".join(view.tags))
    if view.status != "active":
        lines.append(f"status: {view.status}")
    if view.supersedes:
        lines.append("supersedes: " + ", ".join(view.supersedes))
    if view.stale:
        lines.append(stale_label(view.stale))
    lines += ["", view.content]
    return "\n".join(lines)


def memory_rows(views: Iterable[MemoryView]) -> str:
    """The `memdir list` table: id, collection, type, age, title."""
    rows = [(v.id, place(v), v.type, v.age or "-", v.title) for v in views]
    if not rows:
        return "(no memories)"
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in rows
    )


def problems(items: Iterable[Mapping[str, Any]], prefix: str = "") -> str:
    return "\n".join(
        prefix + (f"{p['path']}:{p['line']}: {p['reason']}" if p.get("line") else f"{p['path']}: {p['reason']}")
        for p in items
    )


def search_answer(data: Mapping[str, Any]) -> str:
    """search_memory's text: what shaped the answer (a past commit, a time window), then the hits."""
    return ((as_of(data["as_of"]) if data.get("as_of") else "") + window(data.get("window"))
            + tool_results(data["results"]))


def window(used: Mapping[str, Any] | None) -> str:
    """The line above a search that a time window shaped ("" when none did)."""
    if not used:
        return ""
    span = f"{(used.get('start') or '…')[:16].replace('T', ' ')} to {(used.get('end') or 'now')[:16].replace('T', ' ')} UTC"
    how = "memories written" if used["use"] == "boost" or used.get("note", "").startswith("nothing") else "only memories written"
    why = {"days_back": "--days-back", "after/before": "--after/--before"}.get(used["source"], repr(used.get("words", "")))
    line = f"{how} {span} ({why}{', ranked higher' if used['use'] == 'boost' else ''})"
    return line + (f"; {used['note']}" if used.get("note") else "") + "\n"


def search_results(results: list[MemoryView]) -> str:
    """`1. [patterns] (2d, s:0.72, w:0.68, 8 uses, [YY~N]) [id:m-7f3a9c2e] content` plus why it matched."""
    if not results:
        return "(no relevant memories)"
    lines = []
    for number, hit in enumerate(results, 1):
        where = f" § {hit.heading}" if hit.heading else ""
        lines.append(f"{number}. [{place(hit)}] ({stats_label(hit)}) [id:{hit.id}] {clip(hit.content, 90) or clip(hit.title, 90)}")
        shown = shown_relevance(hit)
        ranked = "listed by time" if shown is None else f"relevance {shown:.2f} via {hit.channel}"
        extra = f"   {ranked}{where} · {hit.path}"
        if hit.successor:
            extra += f" · superseded by [id:{hit.successor}]"
        lines.append(extra)
        if hit.stale:
            lines.append(f"   {stale_label(hit.stale)}")
    return "\n".join(lines)


def relations(report: Relations) -> str:
    """The `memdir links` rendering."""
    lines = [f"{report.title} [id:{report.id}]  ({report.path})"]
    if report.successor:
        lines.append(f"superseded by [id:{report.successor}]")
    if len(report.supersedes_chain) > 1:
        chain = " → ".join(f"[id:{item['id']}] {item['title']}" for item in report.supersedes_chain)
        lines.append(f"supersedes chain (newest first): {chain}")
    for key, label, edges in (("outgoing", "links out", report.outgoing), ("backlinks", "backlinks", report.backlinks)):
        lines.append(f"{label}:" if edges else f"{label}: none")
        lines += [f"  {e['relation']:<12} [id:{e['id']}] {e['title']}" + (f" #{e['heading']}" if e.get("heading") else "")
                  for e in edges]
        lines += _unlisted(report, key)
    if report.ghosts:
        lines.append("ghost targets (linked, not memories):")
        lines += [f"  {e['relation']:<12} {e['ghost']}" for e in report.ghosts]
        lines += _unlisted(report, "ghosts")
    return "\n".join(lines)


def _unlisted(report: Relations, key: str) -> list[str]:
    more = report.unlisted.get(key, 0)
    return [f"  … and {more:,} more not listed (`memdir links {report.id} --listed N` lists more"
            + ("; search_linked_memories pages them by meaning)" if key == "backlinks" else ")")] if more else []


def added_notes(added: Added) -> list[str]:
    """What `memdir add` says besides the id: re-statements, near-duplicates, possible conflicts."""
    memory = added.memory
    notes = [memory.kept_private] if memory.kept_private else []
    if added.status == "restated":
        notes.append(f"already stored as [id:{memory.id}] ({memory.path}); marked as re-stated")
    for similar in added.near_duplicates:
        notes.append(f"near-duplicate of [id:{similar.id}] {similar.title} (similarity {similar.similarity:.2f}); "
                     f"consider: memdir merge {memory.id} {similar.id} --into TITLE")
    for similar in added.possible_conflicts:
        notes.append(f"possible conflict with [id:{similar.id}] {similar.title} (similarity {similar.similarity:.2f})")
    return notes


def lifecycle(applied: Sequence[Decision], dry_run: bool) -> str:
    if not applied:
        return "nothing to do"
    lines = []
    for d in applied:
        target = f" → {d.to_collection}" if d.to_collection else ""
        lines.append(f"{d.action:<8} [id:{d.id}] {d.from_collection}{target}: {d.why}"
                     + ("" if dry_run else f"  ({d.result})"))
    return "\n".join(lines)


def clusters(groups: Sequence[Cluster]) -> str:
    if not groups:
        return "no near-duplicate groups"
    lines = []
    for number, cluster in enumerate(groups, 1):
        lines.append(f"{number}. similarity ≥ {cluster.similarity:.2f}")
        lines += [f"   [id:{i}] {t}" for i, t in zip(cluster.ids, cluster.titles)]
        lines.append(f"   memdir merge {' '.join(cluster.ids)} --into TITLE")
    return "\n".join(lines)


# --- MCP tool renderings: memory text is always quoted data, «like this» --------------------

def tool_results(results: list[HitOut]) -> str:
    if not results:
        return "No matching memories."
    return "\n".join([DATA_NOTE] + hit_lines(results))


def insights(data: Mapping[str, Any]) -> str:
    parts = [DATA_NOTE]
    if data["always"] or data["facts"]:
        parts.append("Standing facts (memory_bank):")
        parts += hit_lines(data["always"] + data["facts"])
    if data["memories"]:
        parts.append("Most relevant memories:")
        parts += hit_lines(data["memories"])
    if not data["always"] and not data["facts"] and not data["memories"]:
        parts.append(f"Nothing relevant among {data['memory_count']} memories.")
    if data["recommended_collections"]:
        parts.append("Look further in: " + ", ".join(data["recommended_collections"]) + " (search_memory with collections=...)")
    if data.get("review"):
        kinds = ", ".join(f"{count} {kind}" for kind, count in data["review"].items())
        parts.append(f"The review queue waits for the user: {kinds}. Mention it once when it fits the work; "
                     "get_review_queue lists the items.")
    return "\n".join(parts)


def added(data: Added) -> str:
    memory = data.memory
    if data.status == "restated":
        lines = [f"Already stored as [id:{memory.id}] ({memory.path}); nothing new was written, it is marked re-stated."]
    else:
        lines = [f"Stored [id:{memory.id}] in {memory.collection} ({memory.path})."]
    if memory.kept_private:
        lines.append(memory.kept_private[0].upper() + memory.kept_private[1:] + ".")
    for similar in data.near_duplicates:
        lines.append(f"Near-duplicate of [id:{similar.id}] {quote(similar.title, 120)} (similarity "
                     f"{similar.similarity:.2f}): consider merge_memories.")
    for similar in data.possible_conflicts:
        lines.append(f"Possible conflict with [id:{similar.id}] {quote(similar.title, 120)} (similarity "
                     f"{similar.similarity:.2f}): check which is right; update or delete the wrong one.")
    return "\n".join(lines)


def changed(verb: str, memory: MemoryView) -> str:
    why = f"; {memory.kept_private}" if memory.kept_private else ""
    return f"{verb} [id:{memory.id}] {quote(memory.title, 120)} ({memory.path}){why}"


def deleted(data: Deleted) -> str:
    line = f"moved [id:{data.id}] {quote(data.title, 120)} to {data.moved_to} (memdir restore {data.id} brings it back)"
    dependants = data.dependants
    if dependants:
        named = "; ".join(f"[id:{d.id}] {quote(d.title, 120)}" for d in dependants)
        line += (f"\n{len(dependants)} {'memory depends' if len(dependants) == 1 else 'memories depend'} on it, "
                 f"and their depends_on now names a deleted memory: {named}")
    return line


def verified(data: VerifyResult) -> str:
    """One line per memory: what it is anchored to now, and what had changed under it."""
    lines = []
    for item in data.verified:
        anchored = ", ".join(item.anchors) or "no project files cited"
        was = f" (was: {stale_label(item.was_stale, advice='')})" if item.was_stale else ""
        if item.still_stale:
            lines.append(f"NOT verified [id:{item.id}] {quote(item.title, 120)}: "
                         f"{stale_label(item.still_stale, advice='')}; update the memory to what the code says now")
            continue
        lines.append(f"verified [id:{item.id}] {quote(item.title, 120)}: {anchored}{was}")
    return "\n".join(lines)


def review_items(data: ReviewResult) -> str:
    """`[stale] m-… : reason` then `   → action  (dismiss: memdir review --dismiss KEY)`."""
    if not data.items:
        return "Nothing to review."
    lines = []
    for item in data.items:
        who = " ".join(f"[id:{i}]" for i in item.ids) or f"{item.path}" + (f":{item.line}" if item.line else "")
        lines.append(f"[{item.kind}] {who}: {neutral(item.reason)}")
        lines.append(f"   → {item.action}  (dismiss: memdir review --dismiss {item.key})")
    count = len(data.items)
    return "\n".join(lines + [f"{count} item{'s' if count != 1 else ''} to review"])


def restored(data: Restored) -> str:
    return f"restored [id:{data.id}] {quote(data.title, 120)} to {data.restored_to}"


def full_memory(view: MemoryView) -> str:
    body = "\n".join("│ " + line for line in neutral(view.content).splitlines())
    head = f"[{place(view)}] ({stats_label(view) or 'no age'}) [id:{view.id}] {quote(view.title, 200)}"
    lines = [DATA_NOTE, head, f"type: {view.type} · path: {view.path} · status: {view.status}"]
    if view.tags:
        lines.append("tags: " + ", ".join(view.tags))
    if view.successor:
        lines.append(f"superseded by [id:{view.successor}]")
    if view.stale:
        lines.append(stale_label(view.stale))
    return "\n".join(lines + ["text:", body])


def score_answer(data: ScoreResult) -> str:
    lines = []
    for item in data.scored:
        change = ", ".join(f"{k} {v}" for k, v in item.changes.items() if k in ("score", "uses"))
        lines.append(f"[id:{item.id}] {item.outcome}: {change or item.note}")
    if data.exchange:
        lines.append(f"(the previous exchange is [id:{data.exchange}])")
    if data.verify:
        lines.append("Worked, but the code they cite changed since they were written: if they still hold, "
                     "verify_memory(ids=[" + ", ".join(f'"{i}"' for i in data.verify) + "])")
    if data.unscored:
        lines.append("Still waiting for a score (shown last turn): " + ", ".join(f"[id:{i}]" for i in data.unscored))
    return "\n".join(lines) or "nothing to score"


def linked(data: Mapping[str, Any]) -> str:
    if not data["results"]:
        return f"No memory links to {data['target']}."
    return "\n".join([DATA_NOTE, f"Memories linking to {data['target']}:"] + hit_lines(data["results"]))


def suggested_merges(groups: Sequence[Cluster]) -> str:
    """The suggest_memory_merges tool's rendering (titles quoted as data)."""
    if not groups:
        return "No groups of near-duplicate memories."
    lines = []
    for number, cluster in enumerate(groups, 1):
        lines.append(f"{number}. similarity ≥ {cluster.similarity:.2f}: "
                     + "; ".join(f"[id:{i}] {quote(t, 80)}" for i, t in zip(cluster.ids, cluster.titles)))
    return "\n".join(lines)


def count(number: int, noun: str) -> str:
    """`1 memory`, `2 memories`, `0 problems`: a count and its noun (plural by `s`, or `y` -> `ies`)."""
    if number == 1:
        return f"1 {noun}"
    return f"{number} {noun[:-1]}ies" if noun.endswith("y") else f"{number} {noun}s"


def stats(data: Stats) -> str:
    collections = ", ".join(f"{k} {v}" for k, v in sorted(data.collections.items()))
    types = ", ".join(f"{k} {v}" for k, v in sorted(data.types.items()))
    counted = f" ({collections}); types: {types}" if collections else ""  # an empty vault: no "(); types: ;"
    text = (f"{count(data.memories, 'memory')}{counted}; {data.scored_memories} scored, "
            f"{data.superseded} superseded, {count(data.problems, 'problem file')}")
    private = data.private
    if private and private.get("user_vault"):
        text += f"\nuser vault (private, not counted above): {count(private['user_memories'], 'memory')} in {private['user_vault']}"
    if private and private.get("project_memories"):
        marked = private["project_memories"]
        text += (f"\n{count(marked, 'file')} in this project vault {'says' if marked == 1 else 'say'} privacy: private "
                 "(see memdir doctor)")
    return text


def ingested(results: Sequence[Ingested]) -> str:
    lines = []
    for r in results:
        if r.status == "error":
            lines.append(f"error      {r.reason}")
            continue
        if r.status == "skipped":
            lines.append(f"skipped    {r.source}: {r.reason}")
            continue
        parts = f", {sections(r.parts, r.kind)}" if r.kind else ""
        where = f" [id:{r.id}] {r.path}" if r.id else ""
        lines.append(f"{r.status:<10} {r.source}{where} ({quote(r.title or '', 80)}{parts})")
    return "\n".join(lines) or "no documents found"


def books(listed: Sequence[Book]) -> str:
    if not listed:
        return "No books yet: `memdir ingest PATH` brings in PDF, HTML, text and Markdown documents."
    return "\n".join(f"[id:{b.id}] {quote(b.title, 80)} · {b.path} · {b.chars:,} chars, "
                     f"{sections(b.sections, b.kind)} · {f'from {b.source}' if b.source else 'hand-written'}" for b in listed)


def sections(count: int, kind: str | None) -> str:
    """"1 section", "3 sections"; a PDF's sections are its pages."""
    unit = "page" if kind == "pdf" else "section"
    return f"{count} {unit}{'s' if count != 1 else ''}"


def servers(served: Sequence[Mapping[str, Any]]) -> str:
    if not served:
        return "no memdir server is running for this user"

    def minutes(seconds: float | None) -> str:
        return "?" if seconds is None else f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"

    return "\n".join(
        f"{s['vault']}  pid {s['pid']}  port {s['port'] or '?'}  {s['rss_mb'] or '?'} MB  up {minutes(s['uptime_s'])}  "
        + (f"{s['memories'] if s['memories'] is not None else '?'} memories  " if s.get("kind", "vault") == "vault" else "")
        + (f"embedding {s['unembedded']} units  " if s.get("unembedded") else "")
        + f"idle {minutes(s['idle_s'])}"
        for s in served)


def as_of(commit: Mapping[str, Any]) -> str:
    return f"as of {commit['commit'][:10]} ({commit['date'][:10]}, {commit['author']}): {commit['subject']}\n"


def memory_log(report: LogResult) -> str:
    lines = [f"{report.id}  {report.path}"]
    if report.uncommitted_changes:
        lines.append("  (the file has uncommitted changes)")
    for v in report.versions:
        if v.get("error"):
            what = f"unreadable: {v['error']}"
        elif v["created"]:
            what = "created"
        else:
            parts = (["body"] if v["body_changed"] else []) + [k for k in v["keys_changed"] if k not in v["counters_changed"]]
            if v["counters_changed"]:
                parts.append("counters (" + ", ".join(v["counters_changed"]) + ")")
            what = "changed " + ", ".join(parts) if parts else "moved" if v["path"] != report.path else "no change"
        state = f"  score {v['score']:.2f}, {v['uses']} use{'' if v['uses'] == 1 else 's'}" if "score" in v else ""
        lines.append(f"  {v['commit'][:10]}  {v['date'][:10]}  {v['author']}: {what}{state}  ({v['subject']})")
    if not report.versions:
        lines.append("  never committed")
    return "\n".join(lines)
