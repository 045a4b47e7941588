"""HTML for the pages: escaping, the frame every page shares, Markdown, diffs and the SVG score plot.

Everything that comes from a memory (body, title, frontmatter, paths) passes through `esc` or through
markdown-it with raw HTML off (it escapes tags and refuses javascript: links); no script is served.
"""

from __future__ import annotations

import difflib
import html
import re
from typing import Any, Callable, Iterable, Sequence
from urllib.parse import quote

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_WIKILINK = re.compile(r"\[\[([^\]\|#\n]+)(?:#[^\]\|\n]*)?(?:\|([^\]\n]*))?\]\]")

STYLE = """
*{box-sizing:border-box}body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:.6em 1em;display:flex;flex-wrap:wrap;gap:.4em 1.2em;align-items:center}
header a{color:#cfe0ff;text-decoration:none}header b{margin-right:1em}
main{max-width:1100px;margin:0 auto;padding:1em}
section,.item{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:.8em 1em;margin:.8em 0;overflow-wrap:anywhere}
h1{font-size:1.4em;margin:.3em 0}h2{font-size:1.1em;margin:.2em 0 .5em}
.kind{display:inline-block;font-size:.8em;padding:0 .5em;border-radius:3px;background:#e7ecf5;margin-right:.5em}
.kind.stale{background:#ffe7c2}.kind.contradiction{background:#ffd6d6}.kind.duplicates{background:#dff3e3}
.kind.supersede{background:#e6ddff}
form.act{display:inline-flex;gap:.3em;margin:.3em .4em 0 0;flex-wrap:wrap}
button{font:inherit;padding:.2em .8em;border:1px solid #8a94a6;border-radius:4px;background:#fff;cursor:pointer}
button.danger{border-color:#c33;color:#c33}input[type=text]{font:inherit;padding:.15em .4em;max-width:100%}
pre{background:#f1f3f6;padding:.6em;overflow-x:auto;font-size:.85em}
.diff .add{color:#065f14}.diff .del{color:#a1141a}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e3e6ea;padding:.25em .4em;text-align:left;vertical-align:top}
.muted{color:#667085;font-size:.9em}.note{background:#e9f7ec;border-color:#9fd3aa}.error{background:#fdecec;border-color:#e8a3a3}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.1em 1em;margin:0}dt{color:#667085}dd{margin:0}
svg{max-width:100%;height:auto}
@media (max-width:600px){body{font-size:14px}main{padding:.5em}dl{grid-template-columns:1fr}
table,tbody,tr,td{display:block}th{display:none}tr{border-bottom:1px solid #e3e6ea;padding:.3em 0}td{border:0;padding:.05em 0}}
"""

NAV = (("inbox", "/ui/"), ("turns", "/ui/turns"), ("search", "/ui/search"), ("vault", "/ui/vault"))


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def frame(title: str, body: str, *, vault: str = "", message: str = "", failed: bool = False, reload: int | None = None) -> str:
    nav = "".join(f'<a href="{href}">{name}</a>' for name, href in NAV)
    note = f'<section class="{"error" if failed else "note"}">{esc(message)}</section>' if message else ""
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width,initial-scale=1">'
            + (f'<meta http-equiv=refresh content="{reload}">' if reload else "") +  # asks again with no script
            f"<title>{esc(title)} · memdir</title><style>{STYLE}</style></head><body>"
            f'<header><b>memdir</b>{nav}<span class=muted>{esc(vault)}</span></header>'
            f"<main>{note}<h1>{esc(title)}</h1>{body}</main></body></html>")


def memory_href(memory_id: str) -> str:
    return "/ui/m/" + quote(memory_id, safe="")


def markdown(text: str, resolve: Callable[[str], str | None]) -> str:
    """A memory body as HTML; a [[wikilink]] to a known memory becomes a link to its page (`resolve`
    maps a link target to a memory id), any other wikilink stays plain text."""
    def link(match: re.Match[str]) -> str:
        target = match.group(1).strip()
        label = (match.group(2) or target).strip()
        found = resolve(target)
        shown = label.replace("[", "\\[").replace("]", "\\]")
        return f"[{shown}]({memory_href(found)})" if found else f"\\[\\[{shown}\\]\\]"

    return _MD.render(_WIKILINK.sub(link, text))


def form(action: str, csrf: str, fields: dict[str, str], label: str, *, danger: bool = False, extra: str = "") -> str:
    hidden = "".join(f'<input type=hidden name="{esc(k)}" value="{esc(v)}">' for k, v in {**fields, "csrf": csrf}.items())
    cls = ' class="danger"' if danger else ""
    return f'<form class=act method=post action="{esc(action)}">{hidden}{extra}<button{cls}>{esc(label)}</button></form>'


def diff(before: str, after: str, before_name: str, after_name: str, limit: int = 200) -> str:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), before_name, after_name, lineterm="", n=2))
    if not lines:
        return '<p class=muted>no difference</p>'
    shown = []
    for line in lines[:limit]:
        cls = "add" if line.startswith("+") and not line.startswith("+++") else \
              "del" if line.startswith("-") and not line.startswith("---") else ""
        shown.append(f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line))
    more = f"\n… {len(lines) - limit} more lines" if len(lines) > limit else ""
    return '<pre class=diff>' + "\n".join(shown) + esc(more) + "</pre>"


def table(head: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Cells are HTML already (escape them when building the rows)."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return "<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + f"</tr>{body}</table>"


def plot(points: Sequence[tuple[str, float]], *, label: str, marks: Sequence[str] = (), width: int = 520,
         height: int = 160, low: float = 0.0, high: float = 1.0) -> str:
    """A line of (x label, value) points, value in [low, high]; `marks` (one per point or fewer, the last
    ones) colour the points: worked green, partial amber, failed red."""
    if not points:
        return '<p class=muted>nothing recorded yet</p>'
    pad, inner_w, inner_h = 30, width - 40, height - 40
    step = inner_w / max(1, len(points) - 1)
    span = (high - low) or 1.0

    def xy(n: int, value: float) -> tuple[float, float]:
        return pad + n * step, 10 + inner_h * (1 - (min(high, max(low, value)) - low) / span)

    coords = [xy(n, v) for n, (_, v) in enumerate(points)]
    colours = {"worked": "#1a7f37", "partial": "#bf8700", "failed": "#cf222e"}
    offset = len(points) - len(marks)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colours.get(marks[n - offset], "#3b6fd6") if n >= offset else "#3b6fd6"}">'
        f"<title>{esc(points[n][0])}: {points[n][1]:.2f}</title></circle>" for n, (x, y) in enumerate(coords))
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
    axis = (f'<line x1="{pad}" y1="{10 + inner_h}" x2="{pad + inner_w}" y2="{10 + inner_h}" stroke="#999"/>'
            f'<text x="2" y="14" font-size="10">{high:g}</text><text x="2" y="{10 + inner_h}" font-size="10">{low:g}</text>'
            f'<text x="{pad}" y="{height - 8}" font-size="10">{esc(points[0][0])}</text>'
            f'<text x="{pad + inner_w}" y="{height - 8}" font-size="10" text-anchor="end">{esc(points[-1][0])}</text>')
    return (f'<svg class=plot role=img aria-label="{esc(label)}" viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
            f'{axis}<polyline fill="none" stroke="#3b6fd6" stroke-width="2" points="{line}"/>{dots}</svg>')
