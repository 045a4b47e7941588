"""The /ui app the user's server mounts: login by one-time code, the pages, and POST actions.

The server's Guard has already refused a foreign Host or Origin (as for the API); here a page needs the
session cookie, and a POST also needs an Origin header (browsers send one on every POST) and the
session's CSRF token. Codes, cookies and tokens are never logged and never put in a URL after login.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs, quote

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from vault.errors import NotFoundError, VaultError

from . import pages
from .auth import COOKIE, SESSION_SECONDS, Session, WebAuth
from .markup import esc, frame

log = logging.getLogger("memdir.web")
MAX_FORM = 100_000
HEADERS = {
    # No script at all, styles inline only, forms post only here, never framed; nothing cached, nothing referred to another site.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",  # no-referrer would make Chromium send `Origin: null` on our own forms
    "X-Content-Type-Options": "nosniff",
}

ServiceFor = Callable[[Path], Awaitable[Any]]  # the vault's MemoryService (raises VaultError when it cannot open)


def login_page(status: int = 401) -> HTMLResponse:
    body = ("<p>This page needs a login link. Run <code>memdir ui</code> in the project: it opens the browser "
            "with a one-time link (or prints it with <code>--no-browser</code>).</p>")
    return HTMLResponse(frame("Log in with memdir ui", body), status_code=status, headers=HEADERS)


def web_app(auth: WebAuth, service_for: ServiceFor) -> Starlette:
    async def login(request: Request) -> Response:
        exchanged = auth.exchange(request.query_params.get("code", ""))
        if exchanged is None:
            return login_page()
        cookie, _ = exchanged
        response = RedirectResponse("/ui/", status_code=303, headers=HEADERS)  # the code leaves the address bar
        response.set_cookie(COOKIE, cookie, max_age=int(SESSION_SECONDS), path="/ui", httponly=True, samesite="strict")
        return response

    def page(render: Callable[[Any, Session, Request], str]) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            session = auth.session(request.cookies.get(COOKIE))
            if session is None:
                return login_page()
            try:
                service = await service_for(session.root)
                text = await anyio.to_thread.run_sync(lambda: render(service, session, request))
            except NotFoundError as exc:
                return _error(session, str(exc), 404)
            except VaultError as exc:
                return _error(session, str(exc), 400)
            return HTMLResponse(text, headers=HEADERS)
        return handle

    async def action(request: Request) -> Response:
        session = auth.session(request.cookies.get(COOKIE))
        if session is None:
            return login_page()
        if request.headers.get("origin") is None:
            return HTMLResponse("a form must come from this page (no Origin header)", status_code=403, headers=HEADERS)
        raw = await request.body()
        if len(raw) > MAX_FORM:
            return HTMLResponse("form too large", status_code=413, headers=HEADERS)
        fields = {k: v[0] for k, v in parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True).items()}
        if not auth.csrf_ok(session, fields.get("csrf")):
            return HTMLResponse("stale or forged form (CSRF check failed); reload the page", status_code=403, headers=HEADERS)
        name = request.path_params["action"]
        try:
            service = await service_for(session.root)
            message = await anyio.to_thread.run_sync(lambda: pages.act(service, name, fields))
            failed = False
        except VaultError as exc:
            message, failed = f"{name} refused: {exc}", True
        back = "/ui/?" + ("failed=" if failed else "done=") + quote(message[:500])
        return RedirectResponse(back, status_code=303, headers=HEADERS)

    def inbox(service: Any, session: Session, request: Request) -> str:
        done, failed = request.query_params.get("done"), request.query_params.get("failed")
        start = request.query_params.get("start", "0")
        return pages.inbox(service, session.csrf, message=(failed or done or "")[:500], failed=failed is not None,
                           kind=request.query_params.get("kind") or None, start=int(start) if start.isdigit() else 0)

    def memory(service: Any, session: Session, request: Request) -> str:
        return pages.memory_page(service, request.path_params["memory_id"], session.csrf)

    def turns(service: Any, session: Session, request: Request) -> str:
        return pages.turns_page(service, request.query_params.get("memory") or None)

    def search(service: Any, session: Session, request: Request) -> str:
        return pages.search_page(service, request.query_params.get("q", ""))

    def vault(service: Any, session: Session, request: Request) -> str:
        return pages.vault_page(service)

    def _error(session: Session, message: str, status: int) -> HTMLResponse:
        return HTMLResponse(frame("Not here", f"<p>{esc(message)}</p>", vault=str(session.root)),
                            status_code=status, headers=HEADERS)

    return Starlette(routes=[
        Route("/login", login, methods=["GET"]),
        Route("/", page(inbox), methods=["GET"]),
        Route("/m/{memory_id}", page(memory), methods=["GET"]),
        Route("/turns", page(turns), methods=["GET"]),
        Route("/search", page(search), methods=["GET"]),
        Route("/vault", page(vault), methods=["GET"]),
        Route("/act/{action}", action, methods=["POST"]),
    ])
