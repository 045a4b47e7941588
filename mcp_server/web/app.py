"""The /ui/ routes: sign-in by one-time code, then pages read through the vault's MemoryService and actions
that call the very service operations the CLI calls (`memdir verify`, `delete`, `link --as supersedes`,
`review --dismiss`).

Every page needs the session cookie (else a sign-in page with no data); every action is a POST carrying
the session's CSRF token (the server's Guard has already refused a foreign Origin or Host). The vault is
the session's; ids from the URL are checked as memory ids before any lookup, so no path from a URL is
ever opened.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from vault import VaultError
from vault.ids import check_id

from . import pages
from .sessions import COOKIE, Session, UiSessions

log = logging.getLogger("memdir.server")
MAX_FORM = 16_384
HEADERS = {
    # No script may run even if some value escaped escaping; no framing; no Referer leaves the site
    # (same-origin, not no-referrer: under no-referrer the browser sends "Origin: null" and the Guard refuses).
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin", "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}
ServiceFor = Callable[[Any], Awaitable[Any]]  # the session's vault root -> its MemoryService (raises VaultError)


def html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def ui_app(sessions: UiSessions, service_for: ServiceFor) -> Starlette:
    notices: dict[str, str] = {}  # session id -> what the last action did (shown once, after the redirect)

    def signed_in(request: Request) -> tuple[str, Session] | None:
        sid = request.cookies.get(COOKIE)
        session = sessions.session(sid)
        return (sid, session) if session is not None and sid else None

    def guarded(render: Callable[[Request, str, Session, Any], Any]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            found = signed_in(request)
            if found is None:
                return html(pages.login_page("You are not signed in to this memdir view."), 401)
            sid, session = found
            try:
                service = await service_for(session.root)
                return await anyio.to_thread.run_sync(lambda: render(request, sid, session, service))
            except VaultError as exc:
                return html(pages.error_page(str(exc)), 404)
        return endpoint

    async def login(request: Request) -> Response:
        sid = sessions.exchange(request.query_params.get("code", ""))
        if sid is None:
            return html(pages.login_page("This sign-in link was already used or has expired."), 403)
        response = RedirectResponse("/ui/", status_code=303, headers=HEADERS)
        response.set_cookie(COOKIE, sid, httponly=True, samesite="strict", path="/ui", secure=False)
        return response

    def inbox(request: Request, sid: str, session: Session, service: Any) -> Response:
        items = service.review()["items"]
        counts: dict[str, int] = {}
        for item in items:
            counts[item["kind"]] = counts.get(item["kind"], 0) + 1
        kind = request.query_params.get("kind")
        shown = [i for i in items if i["kind"] == kind] if kind in counts else items
        shown.sort(key=lambda i: pages.KIND_ORDER.index(i["kind"]) if i["kind"] in pages.KIND_ORDER else len(pages.KIND_ORDER))
        start = _page_number(request.query_params.get("page")) * pages.PAGE_SIZE
        window = shown[start:start + pages.PAGE_SIZE]  # a synthetic 10k vault lists 5,000 items: 4.5 MB in one page
        titles = {m_id: m.title for item in window for m_id in item.get("ids") or []
                  if (m := service.find(m_id)) is not None}
        return html(pages.inbox_page(window, titles, session.csrf, notices.pop(sid, None), counts=counts,
                                     kind=kind if kind in counts else None, start=start, total=len(shown)))

    def memory(request: Request, sid: str, session: Session, service: Any) -> Response:
        memory_id = check_id(request.path_params["memory_id"])
        shown = service.read(memory_id)
        relations = service.relationships(memory_id=memory_id)
        try:
            history = service.log(memory_id)
        except VaultError as exc:  # no git repository, say: the page shows why instead of the versions
            history = {"versions": [], "error": str(exc)}
        return html(pages.memory_page(shown, relations, resolver(service), session.csrf, notices.pop(sid, None),
                                      history))

    def search(request: Request, sid: str, session: Session, service: Any) -> Response:
        query = request.query_params.get("q", "").strip()
        if not query:
            return html(pages.search_page("", None))
        try:
            results = service.search(query=query[:500], limit=20)["results"]
        except VaultError as exc:
            return html(pages.search_page(query, None, str(exc)), 400)
        return html(pages.search_page(query, results))

    def turns(request: Request, sid: str, session: Session, service: Any) -> Response:
        wanted = request.query_params.get("memory", "").strip()
        memory_filter = check_id(wanted) if wanted else None
        records = sorted(service.sessions.all(), key=lambda s: s.updated, reverse=True)
        if memory_filter:
            records = [s for s in records if memory_filter in s.shown]
        ids = {i for s in records for i in (*s.shown, *s.awaiting, *s.turn_shown, *([s.last_exchange] if s.last_exchange else []))}
        titles = {i: m.title for i in ids | ({memory_filter} if memory_filter else set()) if (m := service.find(i)) is not None}
        return html(pages.turns_page(records[:100], titles, memory_filter))

    async def action(request: Request) -> Response:
        found = signed_in(request)
        if found is None:
            return html(pages.login_page("You are not signed in to this memdir view."), 401)
        sid, session = found
        raw = await request.body()
        if len(raw) > MAX_FORM:
            return html(pages.error_page("form too large"), 413)
        form = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace")).items()}
        if not sessions.csrf_ok(session, form.get("csrf")):
            log.warning("web view: an action without a valid CSRF token was refused")
            return html(pages.error_page("This form is out of date or did not come from this page; reload it."), 403)
        try:
            service = await service_for(session.root)
            notice, back = await anyio.to_thread.run_sync(lambda: perform(service, form))
        except VaultError as exc:
            notices[sid] = f"{type(exc).__name__}: {exc}"
            return RedirectResponse("/ui/", status_code=303, headers=HEADERS)
        notices[sid] = notice
        return RedirectResponse(back, status_code=303, headers=HEADERS)

    return Starlette(routes=[
        Route("/login", login, methods=["GET"]),
        Route("/", guarded(inbox), methods=["GET"]),
        Route("/memory/{memory_id}", guarded(memory), methods=["GET"]),
        Route("/search", guarded(search), methods=["GET"]),
        Route("/turns", guarded(turns), methods=["GET"]),
        Route("/action", action, methods=["POST"]),
    ])


def _page_number(text: str | None) -> int:
    return int(text) if text and text.isdigit() and len(text) < 7 else 0


def perform(service: Any, form: dict[str, str]) -> tuple[str, str]:
    """Run one inbox action through the service operation the CLI runs; (what happened, where to go next)."""
    kind = form.get("action")
    if kind == "verify":
        memory_id = check_id(form.get("id", ""))
        report = service.verify(ids=[memory_id])["verified"][0]
        still = report.get("still_stale")
        return (f"Verified {report['title']}" + (" (still stale: a cited file or symbol is gone)" if still else ""),
                pages.memory_url(memory_id) if form.get("back") == "memory" else "/ui/")
    if kind == "delete":
        done = service.delete(memory_id=check_id(form.get("id", "")))
        return f"Deleted {done['title']} (moved to {done['moved_to']}; `memdir restore {done['id']}` brings it back)", "/ui/"
    if kind == "supersede":  # `memdir link NEWER OLDER --as supersedes`
        source, target = check_id(form.get("source", "")), check_id(form.get("target", ""))
        service.link(source=source, target=target, relation="supersedes")
        return f"Recorded that {source} supersedes {target}", "/ui/"
    if kind == "dismiss":
        service.review(dismiss=[form.get("key", "")])
        return "Dismissed until what it is about changes", "/ui/"
    from vault.errors import ValidationError

    raise ValidationError(f"unknown action {kind!r}")


def resolver(service: Any) -> Callable[[str], str | None]:
    """[[target]] -> the id of the memory it names: as the link graph reads it (an id, a path, a file name),
    else by title or alias (case-insensitive)."""
    files: dict[str, str] = {}
    names: dict[str, str] = {}
    for side in service.app.sides(include_user=True):
        for memory in side.index.memories.values():
            path = memory.path.lower().removesuffix(".md")
            files.setdefault(path, memory.id)
            files.setdefault(path.rsplit("/", 1)[-1], memory.id)
            for name in (memory.title, *memory.aliases):
                if name:
                    names.setdefault(name.strip().lower(), memory.id)

    def resolve(target: str) -> str | None:
        if service.find(target) is not None:
            return target
        key = target.strip().lower().removesuffix(".md")
        return files.get(key) or names.get(key)
    return resolve
