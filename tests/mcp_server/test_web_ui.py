"""The web view (`memdir ui`): sign-in by a one-time code, pages that show nothing without the session,
actions that refuse a forged POST, values that render inert, ids that never reach outside the vault, and
inbox actions that change the file exactly as the CLI's service call does."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlencode

import anyio
import pytest

from mcp_server.server.process import Guard
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from mcp_server.web.app import ui_app
from mcp_server.web.sessions import COOKIE, UiSessions
from starlette.applications import Starlette
from starlette.routing import Mount
from tests.conftest import memory_text, write

from .test_stale import AUTH, project, service  # noqa: F401  (fixtures)

PORT = 45678
TOKEN = "bearer-token-never-in-a-page"
HOST = f"127.0.0.1:{PORT}"


class Browser:
    """Requests through the server's real Guard and the /ui mount, as a browser on this machine sends them."""

    def __init__(self, service: MemoryService) -> None:
        self.sessions = UiSessions()
        self.root = service.app.root

        async def service_for(root: Path) -> MemoryService:
            assert root == self.root
            return service

        self.app = Guard(Starlette(routes=[Mount("/ui", app=ui_app(self.sessions, service_for))]), TOKEN, lambda: PORT)
        self.cookie: str | None = None

    def request(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
                cookie: bool = True) -> tuple[int, dict[str, str], str]:
        sent: list[dict] = []
        hdrs = {"host": HOST, **({"cookie": f"{COOKIE}={self.cookie}"} if cookie and self.cookie else {}),
                **{k.lower(): v for k, v in (headers or {}).items()}}
        if body:
            hdrs.setdefault("content-type", "application/x-www-form-urlencoded")
        raw_path, _, query = path.partition("?")
        scope = {"type": "http", "method": method, "path": unquote(raw_path), "raw_path": raw_path.encode(),
                 "query_string": query.encode(), "root_path": "", "scheme": "http", "http_version": "1.1",
                 "server": ("127.0.0.1", PORT), "client": ("127.0.0.1", 5555),
                 "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in hdrs.items()]}
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        anyio.run(self.app, scope, receive, send)
        start = sent[0]
        out_headers: dict[str, str] = {}
        for k, v in start["headers"]:
            out_headers.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))
        return start["status"], out_headers, b"".join(m.get("body", b"") for m in sent[1:]).decode()

    def sign_in(self) -> tuple[int, dict[str, str]]:
        code = self.sessions.new_code(self.root)
        status, headers, _ = self.request("GET", f"/ui/login?code={code}", cookie=False)
        if "set-cookie" in headers:
            self.cookie = re.match(rf"{COOKIE}=([^;]+)", headers["set-cookie"]).group(1)
        return status, headers

    def csrf(self, page: str = "/ui/") -> str:
        return re.search(r'name=csrf value="([^"]+)"', self.request("GET", page)[2]).group(1)

    def post(self, fields: dict[str, str], headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        return self.request("POST", "/ui/action", urlencode(fields).encode(), headers)


def stale_vault(service: MemoryService, project: Path) -> str:
    memory_id = service.add("Token lifetime lives in `services/auth.py`.", type="fact")["memory"]["id"]
    write(project, "services/auth.py", AUTH.replace("15", "30"))
    return memory_id


def test_a_one_time_code_signs_in_once_with_a_strict_httponly_cookie_and_a_url_without_the_code(service):
    browser = Browser(service)
    status, headers = browser.sign_in()
    assert status == 303 and headers["location"] == "/ui/"
    cookie = headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
    assert browser.request("GET", "/ui/")[0] == 200
    code = browser.sessions.new_code(browser.root)
    assert browser.request("GET", f"/ui/login?code={code}", cookie=False)[0] == 303
    status, headers, body = browser.request("GET", f"/ui/login?code={code}", cookie=False)
    assert status == 403 and "set-cookie" not in headers and "already used" in body


def test_without_the_cookie_every_page_is_a_sign_in_page_with_no_data(service, project):
    memory_id = stale_vault(service, project)
    browser = Browser(service)
    for path in ("/ui/", f"/ui/memory/{memory_id}", "/ui/search?q=token"):
        status, _, body = browser.request("GET", path)
        assert status == 401 and "memdir ui" in body
        assert memory_id not in body and "Token lifetime" not in body
    browser.cookie = "forged-session-id"
    assert browser.request("GET", "/ui/")[0] == 401
    assert TOKEN not in browser.request("GET", "/ui/")[2]


def test_a_forged_cross_site_post_is_refused_and_changes_nothing(service, project):
    memory_id = stale_vault(service, project)
    path = project / ".memories" / service.find(memory_id).path
    before = path.read_bytes()
    browser = Browser(service)
    browser.sign_in()
    csrf = browser.csrf()
    assert browser.post({"action": "delete", "id": memory_id})[0] == 403  # no CSRF token
    assert browser.post({"action": "delete", "id": memory_id, "csrf": "guessed"})[0] == 403
    assert browser.post({"action": "delete", "id": memory_id, "csrf": csrf},
                        {"origin": "https://evil.example"})[0] == 403  # a foreign page, even with the token
    assert browser.post({"action": "delete", "id": memory_id, "csrf": csrf}, {"host": f"evil.example:{PORT}"})[0] == 403
    other = Browser(service)  # another session's token does not work in this one
    other.sign_in()
    assert browser.post({"action": "delete", "id": memory_id, "csrf": other.csrf()})[0] == 403
    assert path.read_bytes() == before
    assert browser.request("GET", "/ui/action")[0] == 405  # a link or an <img> cannot act


HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>'


def test_html_and_script_in_title_body_and_frontmatter_render_inert(service, project):
    root = project / ".memories"
    write(root, "history/hostile.md", memory_text(
        "m-0badc0de", f'Title {HOSTILE}', f'Body {HOSTILE} and [[x" onmouseover="alert(3)]]',
        extra=f"owner: '{HOSTILE}'\ntags: ['\"><script>alert(4)</script>']\n"))
    service.index.sync(["history/hostile.md"])
    browser = Browser(service)
    browser.sign_in()
    pages = [browser.request("GET", "/ui/memory/m-0badc0de"), browser.request("GET", "/ui/search?q=Title+alert"),
             browser.request("GET", "/ui/search?q=" + "%3Cscript%3Ealert(5)%3C%2Fscript%3E")]
    assert pages[0][0] == 200 and "m-0badc0de" in pages[1][2]
    for status, headers, body in pages:
        assert "<script" not in body.lower() and "<img" not in body.lower() and 'onmouseover="' not in body
        assert "&lt;script&gt;" in body
        assert "script-src" not in headers["content-security-policy"] and "default-src 'none'" in headers["content-security-policy"]


@pytest.mark.parametrize("ref", ["..%2F..%2Fetc%2Fpasswd", "../../secret", "%2Fetc%2Fpasswd", "history%2Fnote.md",
                                 "m-00000000", "..", "%00"])
def test_an_id_from_the_url_never_reaches_outside_the_vault(service, project, ref):
    (project / "secret").write_text("outside the vault: TOP-SECRET")
    write(project / ".memories", "history/note.md", memory_text("m-1234abcd", "Note", "inside"))
    service.index.sync(["history/note.md"])
    browser = Browser(service)
    browser.sign_in()
    status, _, body = browser.request("GET", f"/ui/memory/{ref}")
    assert status == 404 and "TOP-SECRET" not in body and "root:" not in body
    csrf = browser.csrf("/ui/memory/m-1234abcd")
    browser.post({"action": "delete", "id": "../secret", "csrf": csrf})
    assert (project / "secret").exists()
    assert "Error" in browser.request("GET", "/ui/")[2]


def test_verify_delete_and_dismiss_change_the_files_exactly_as_the_cli_service_calls_do(service, project, tmp_path):
    memory_id = stale_vault(service, project)
    twin = service.add("Deploys go out on Tuesdays from the release branch.", type="fact")["memory"]["id"]
    root = project / ".memories"
    service.app.close()
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    web_app, cli_app = App(root), App(copy / ".memories")
    web, cli = MemoryService(web_app), MemoryService(cli_app)
    try:
        browser = Browser(web)
        browser.sign_in()
        inbox = browser.request("GET", "/ui/")[2]
        assert 'data-kind="stale"' in inbox and memory_id in inbox
        status, headers, _ = browser.post({"action": "verify", "id": memory_id, "csrf": browser.csrf()})
        assert status == 303
        assert "Verified" in browser.request("GET", headers["location"])[2]
        cli.verify(ids=[memory_id])
        path = web.find(memory_id).path
        assert (root / path).read_bytes() == (copy / ".memories" / path).read_bytes()
        assert 'data-kind="stale"' not in browser.request("GET", "/ui/")[2]

        twin_path = web.find(twin).path
        browser.post({"action": "delete", "id": twin, "csrf": browser.csrf(f"/ui/memory/{twin}")})
        cli.delete(memory_id=twin)
        assert not (root / twin_path).exists() and not (copy / ".memories" / twin_path).exists()
        assert [p.read_bytes() for p in (root / ".trash").rglob("*.md")] == \
            [p.read_bytes() for p in (copy / ".memories" / ".trash").rglob("*.md")]  # names carry the moment
    finally:
        web_app.close()
        cli_app.close()


def test_dismiss_hides_an_item_as_review_dismiss_does(service, project):
    stale_vault(service, project)
    browser = Browser(service)
    browser.sign_in()
    key = re.search(r'name="key" value="([^"]+)"', browser.request("GET", "/ui/")[2]).group(1)
    assert browser.post({"action": "dismiss", "key": key, "csrf": browser.csrf()})[0] == 303
    assert "Nothing to review." in browser.request("GET", "/ui/")[2]
    assert service.review()["items"] == []


def test_a_memory_page_links_its_wikilinks_and_plots_its_outcomes(service):
    target = service.add("Postgres runs the billing service.", title="Billing database", type="fact")["memory"]["id"]
    source = service.add("See [[billing-database]], [[Billing database|the database]] and [[no such note]].", title="Index", type="fact")["memory"]["id"]
    service.score(memory_scores={source: "worked"})
    service.score(memory_scores={source: "failed"})
    browser = Browser(service)
    browser.sign_in()
    status, _, body = browser.request("GET", f"/ui/memory/{source}")
    assert status == 200
    assert body.count(f'href="/ui/memory/{target}"') == 3  # two in the body, one under Links
    assert ">the database</a>" in body and "[[no such note]]" in body
    assert body.count("<circle") == 2 and "<svg" in body
    assert f'href="/ui/memory/{source}"' in browser.request("GET", f"/ui/memory/{target}")[2]  # backlink


def test_the_turns_page_shows_what_each_session_was_shown_and_filters_by_memory(service):
    shown = service.add("The release train leaves on Thursdays.", title="Release day", type="fact")["memory"]["id"]
    other = service.add("Staging is rebuilt nightly <b>at 3</b>.", title="Staging <b>rebuild</b>", type="fact")["memory"]["id"]
    service.read(shown, session="sess-one")
    service.read(other, session="sess-two")
    service.sessions.update("sess-one", lambda s: setattr(s, "prompt", "When is the release?\nsecond line"))
    browser = Browser(service)
    assert browser.request("GET", "/ui/turns")[0] == 401
    browser.sign_in()
    status, _, body = browser.request("GET", "/ui/turns")
    assert status == 200 and "sess-one" in body and "sess-two" in body and "When is the release?" in body
    assert "second line" not in body and "Staging &lt;b&gt;rebuild&lt;/b&gt;" in body
    body = browser.request("GET", f"/ui/turns?memory={shown}")[2]
    assert "sess-one" in body and "sess-two" not in body
    assert browser.request("GET", "/ui/turns?memory=../../x")[0] == 404


def test_a_long_inbox_is_paged_and_filtered_by_kind_most_urgent_first(service, project):
    stale_vault(service, project)
    broken = [f"history/broken-{n}.md" for n in range(60)]
    for relative in broken:
        write(project / ".memories", relative, "---\nid: m-0bad0bad\nscore: 7\n---\nBody.\n")
    service.index.sync(broken)
    browser = Browser(service)
    browser.sign_in()
    kinds = [i["kind"] for i in service.review()["items"]]
    first = browser.request("GET", "/ui/")[2]
    assert first.count('class="card item"') == 50 and 'href="/ui/?page=1"' in first
    assert first.index('data-kind="stale"') < first.index('data-kind="invalid"')
    assert f"invalid {kinds.count('invalid')}" in first and kinds.count("invalid") >= 60
    only = browser.request("GET", "/ui/?kind=stale")[2]
    assert only.count('class="card item"') == 1
    assert browser.request("GET", "/ui/?page=99999999999&kind=<x>")[0] == 200


def test_supersede_on_a_contradiction_writes_the_file_as_memdir_link_does(service, project, tmp_path):
    yes = service.add("We use Postgres for the billing service.", type="decision")["memory"]["id"]
    no = service.add("We do not use Postgres for the billing service.", type="decision")["memory"]["id"]
    item = next(i for i in service.review()["items"] if i["kind"] in ("contradiction", "supersede"))
    newer, older = re.search(r"memdir link (\S+) (\S+) --as supersedes", item["action"]).groups()
    assert {newer, older} == {yes, no}
    service.app.close()
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    web_app, cli_app = App(project / ".memories"), App(copy / ".memories")
    web, cli = MemoryService(web_app), MemoryService(cli_app)
    try:
        browser = Browser(web)
        browser.sign_in()
        inbox = browser.request("GET", "/ui/")[2]
        assert 'data-action="supersede"' in inbox
        fields = dict(re.findall(r'name="(source|target)" value="([^"]+)"', inbox))
        assert (fields["source"], fields["target"]) == (newer, older)
        assert browser.post({"action": "supersede", **fields, "csrf": browser.csrf()})[0] == 303
        cli.link(source=newer, target=older, relation="supersedes")
        path = web.find(newer).path
        assert (project / ".memories" / path).read_bytes() == (copy / ".memories" / path).read_bytes()
        assert "supersedes" in (project / ".memories" / path).read_text()
    finally:
        web_app.close()
        cli_app.close()


def test_a_memory_page_lists_its_committed_versions_with_what_changed(service, project):
    from tests.vault.test_anchors import git

    memory_id = service.add("The cache <expires> hourly.", title="Cache expiry", type="fact")["memory"]["id"]
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "remember the <cache>")
    service.update(memory_id, content="The cache expires every 30 minutes.")
    git(project, "commit", "-qam", "cache: 30 minutes")
    browser = Browser(service)
    browser.sign_in()
    body = browser.request("GET", f"/ui/memory/{memory_id}")[2]
    versions = body.split("<h2>Versions</h2>")[1]
    assert versions.count("<tr><td>") == 2 and "cache: 30 minutes" in versions and "created" in versions
    assert "remember the &lt;cache&gt;" in versions and "body" in versions
