"""`memdir ui` over HTTP against a real server: login, the inbox and its actions, a memory's page, and the
security checks (no cookie, forged POSTs, markup in memories, paths from the URL)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from click.testing import CliRunner

from mcp_server import client
from mcp_server.cli.commands import cli

from .conftest import HOSTILE_TITLE, Browserless, login_url


def vault_files(root: Path) -> dict[str, str]:
    """Every memory file and trashed file of a project's vault, by path (the index under .memdir/ aside)."""
    vault = root / ".memories"
    return {str(p.relative_to(vault)): p.read_text() for p in sorted(vault.rglob("*.md"))
            if ".memdir" not in p.relative_to(vault).parts}


def test_the_login_link_becomes_an_httponly_samesite_strict_cookie_and_the_code_works_once(served):
    root, ids, _ = served
    url = urlsplit(login_url(root / ".memories"))
    browser = Browserless(url.port)
    response, _ = browser.get(f"{url.path}?{url.query}")
    assert response.status == 303 and response.getheader("Location") == "/ui/"  # the code leaves the address bar
    cookie = response.getheader("Set-Cookie")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    page_response, page = browser.get("/ui/")
    assert page_response.status == 200 and "Token lifetime" in page
    again, text = Browserless(url.port).get(f"{url.path}?{url.query}")
    assert again.status == 401 and "Token lifetime" not in text and "memdir ui" in text


def test_without_the_cookie_every_page_is_the_login_page_and_shows_no_data(served):
    root, ids, _ = served
    port = client.ensure(root / ".memories").port
    for path in ("/ui/", f"/ui/m/{ids['stale']}", "/ui/login?code=guessed"):
        response, text = Browserless(port).get(path)
        assert response.status == 401, path
        assert "Token lifetime" not in text and ids["stale"] not in text and "memdir ui" in text
    forged, _ = Browserless(port, {"memdir_ui": "made-up"}).get("/ui/")
    assert forged.status == 401


def test_a_forged_or_cross_site_post_is_refused_and_changes_nothing(logged_in):
    browser, root, ids = logged_in
    before = vault_files(root)
    csrf = browser.csrf(browser.get("/ui/")[1])
    delete = {"id": ids["stale"], "csrf": csrf}
    assert browser.post("/ui/act/delete", delete, Origin="http://evil.example")[0].status == 403  # another site's form
    assert browser.post("/ui/act/delete", {**delete, "csrf": "forged"})[0].status == 403  # no valid token
    assert browser.post("/ui/act/delete", {"id": ids["stale"]})[0].status == 403
    assert Browserless(browser.port).post("/ui/act/delete", delete)[0].status == 401  # the token without the cookie
    no_origin = browser.request("POST", "/ui/act/delete", None, {"Content-Length": "0"})[0]
    assert no_origin.status == 403
    assert browser.get("/ui/act/delete")[0].status == 405  # a GET never changes state
    assert vault_files(root) == before


def test_markup_in_a_memorys_text_title_and_frontmatter_renders_inert(logged_in):
    browser, root, ids = logged_in
    response, page = browser.get(f"/ui/m/{ids['hostile']}")
    assert response.status == 200
    assert "<script" not in page and "<img" not in page and "<b>tag" not in page
    assert "&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt;" in page  # the title, shown as text
    assert "&lt;img src=x onerror=" in page and 'href="javascript:' not in page
    assert "script-src" not in response.getheader("Content-Security-Policy") and \
        "default-src 'none'" in response.getheader("Content-Security-Policy")  # no script would run anyway
    inbox = browser.get("/ui/")[1]
    assert HOSTILE_TITLE not in inbox


@pytest.mark.parametrize("path", [
    "/ui/m/..%2F..%2F..%2Fetc%2Fpasswd", "/ui/m/%2Fetc%2Fpasswd", "/ui/m/m-00000000", "/ui/m/..", "/ui/../api/health",
    "/ui/m/services%2Fauth.py",
])
def test_a_path_or_id_from_the_url_never_reaches_outside_the_vault(logged_in, path):
    browser, root, ids = logged_in
    response, text = browser.get(path)
    assert response.status in (400, 401, 404), (path, response.status)
    assert "root:" not in text and "TTL_MINUTES" not in text


def test_a_memory_page_shows_the_rendered_body_with_wikilinks_anchors_the_plot_and_links(logged_in):
    browser, root, ids = logged_in
    response, page = browser.get(f"/ui/m/{ids['stale']}")
    assert response.status == 200
    assert f'<a href="/ui/m/{ids["yes"]}">Billing database</a>' in page  # the wikilink, resolved
    assert "<code>services/auth.py</code>" in page
    assert '<svg class=plot role=img aria-label="score of Token lifetime over time"' in page
    assert "outcomes (oldest first): worked" in page
    assert "changed" in page and "-TTL_MINUTES = 15" in page and "+TTL_MINUTES = 30" in page  # the anchor's diff
    assert "memories" in page  # the commit subject of its version


def act(browser: Browserless, action: str, fields: dict) -> str:
    csrf = browser.csrf(browser.get("/ui/")[1])
    response, _ = browser.post(f"/ui/act/{action}", {**fields, "csrf": csrf})
    assert response.status == 303
    location = response.getheader("Location")
    assert "done=" in location, location
    return location


def normalized(files: dict[str, str], ids: dict[str, str]) -> dict[str, str]:
    """A merged memory gets a fresh id, and every write the clock: name those alike on both sides."""
    renamed = {}
    for path, text in files.items():
        path = re.sub(r"\.\d{8}T\d+Z\.md$", ".TIME.md", path)  # a trashed file's name holds the moment
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)
        fresh = re.search(r"^id: (m-[0-9a-f]+)$", text, re.M)
        if fresh and fresh.group(1) not in ids.values():
            text, path = text.replace(fresh.group(1), "NEW"), path.replace(fresh.group(1), "NEW")
        renamed[path] = text
    return renamed


@pytest.mark.parametrize("action", ["verify", "supersede", "delete", "merge", "dismiss"])
def test_each_inbox_action_changes_the_vault_exactly_as_the_cli_command_does(logged_in, tmp_path, action):
    browser, root, ids = logged_in
    copy = tmp_path / "cli-copy"
    forms = {
        "verify": ({"ids": ids["stale"]}, ["verify", ids["stale"]]),
        "supersede": ({"source": ids["no"], "target": ids["yes"]}, ["link", ids["no"], ids["yes"], "--as", "supersedes"]),
        "delete": ({"id": ids["no"]}, ["delete", ids["no"]]),
        "merge": ({"ids": f"{ids['twin_a']} {ids['twin_b']}", "title": "Ledger export"},
                  ["merge", ids["twin_a"], ids["twin_b"], "--into", "Ledger export"]),
    }
    if action == "dismiss":
        key = re.search(r'id="item-([0-9a-f]+)"', browser.get("/ui/")[1]).group(1)
        forms["dismiss"] = ({"key": key}, ["review", "--dismiss", key])
    fields, command = forms[action]
    before = vault_files(root)
    act(browser, action, fields)
    result = CliRunner().invoke(cli, [*command, "--vault", str(copy / ".memories")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    if action == "dismiss":
        assert vault_files(root) == before
        dismissed = (root / ".memories/.memdir/review-dismissed.json").read_text()
        assert key in dismissed and key in (copy / ".memories/.memdir/review-dismissed.json").read_text()
        assert f'id="item-{key}"' not in browser.get("/ui/")[1]
    else:
        assert vault_files(root) != before
        assert normalized(vault_files(root), ids) == normalized(vault_files(copy), ids)


def test_a_refused_action_is_reported_on_the_page_and_changes_nothing(logged_in):
    browser, root, ids = logged_in
    before = vault_files(root)
    csrf = browser.csrf(browser.get("/ui/")[1])
    response, _ = browser.post("/ui/act/delete", {"id": "m-00000000", "csrf": csrf})
    location = response.getheader("Location")
    assert response.status == 303 and "failed=" in location
    assert "delete refused" in browser.get(location)[1]
    assert browser.post("/ui/act/format-disk", {"csrf": csrf})[0].status == 303
    assert vault_files(root) == before


def test_no_code_cookie_or_csrf_token_reaches_the_server_log(logged_in):
    browser, root, ids = logged_in
    page = browser.get("/ui/")[1]
    act(browser, "verify", {"ids": ids["stale"]})
    log = client.log_file().read_text() if client.log_file().exists() else ""
    for secret in [*browser.cookies.values(), browser.csrf(page)]:
        assert secret not in log


def test_the_turns_page_shows_each_prompt_what_was_injected_why_the_scores_and_the_exchange(logged_in):
    browser, root, ids = logged_in
    vault = root / ".memories"
    info = client.ensure(vault)
    first = client.request(info, "POST", "/api/hook/prompt", {"session_id": "s-web-1",
                           "prompt": "How long is the token lifetime in services/auth.py?\nmore detail"}, vault=vault)
    assert ids["stale"] in first["shown"]
    client.request(info, "POST", "/api/hook/stop", {"session_id": "s-web-1",
                   "last_assistant_message": "The token lifetime is fifteen minutes, set in services/auth.py."}, vault=vault)
    client.call(vault, "score", {"memory_scores": {ids["stale"]: "worked"}, "session": "s-web-1"})
    client.request(info, "POST", "/api/hook/prompt", {"session_id": "s-web-1", "prompt": "Which database does billing use?"},
                   vault=vault)

    response, page = browser.get("/ui/turns")
    assert response.status == 200
    assert "How long is the token lifetime in services/auth.py?" in page and "more detail" not in page  # the first line
    assert "Which database does billing use?" in page
    token_turn = page[page.index("How long is the token"):]
    row = re.search(rf'<a href="/ui/m/{ids["stale"]}">Token lifetime</a></td><td>([0-9.]+)</td><td>(\w+)</td><td>([^<]*)</td><td>(\w+)</td>',
                    token_turn)
    assert row and 0 < float(row.group(1)) <= 1 and row.group(4) == "worked", token_turn[:2000]
    assert "exchange captured as" in token_turn

    filtered = browser.get(f"/ui/turns?memory={ids['stale']}")[1]
    assert "shown in 1 turn: 1 worked" in filtered and "Which database does billing use?" not in filtered
    assert browser.get("/ui/turns?memory=../../etc")[0].status == 400


def test_the_search_and_vault_pages_explain_ranking_and_count_the_vault(logged_in):
    browser, root, ids = logged_in
    response, page = browser.get("/ui/search?q=" + quote("token lifetime auth"))
    assert response.status == 200
    first = re.search(r'<td>1</td><td><a href="/ui/m/([^"]+)">', page)
    assert first and first.group(1) == ids["stale"]
    assert "<svg class=shares" in page and re.search(r"(vector|keyword) \+\d+%", page)

    client.call(root / ".memories", "score", {"memory_scores": {ids["stale"]: "worked"}})
    response, page = browser.get("/ui/vault")
    assert response.status == 200
    assert re.search(r"<td>decision</td><td>2</td>", page) and '<svg class=plot role=img aria-label="memories over time"' in page
    helped = page[page.index("Help most"):page.index("Help least")]
    assert f'<a href="/ui/m/{ids["stale"]}">Token lifetime</a>' in helped and "worked worked" in helped


def test_ui_on_a_folder_that_is_not_an_initialized_vault_says_how_to_make_one(served, tmp_path: Path):
    """Only a vault `init` made is served (every command follows the same rule, test_cli_vault.py), and `memdir ui`
    said so in a traceback (client.Unavailable) instead of one line."""
    plain = tmp_path / "notes"
    (plain / "history").mkdir(parents=True)
    (plain / "history" / "a.md").write_text("---\nid: m-0000000a\ntitle: A\n---\nalpha\n")
    result = CliRunner().invoke(cli, ["ui", "--no-browser", "--vault", str(plain)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert f"no initialized vault at {plain}" in result.output and f"memdir init {plain}" in result.output


def test_ui_where_no_browser_opens_prints_the_address_and_does_not_say_it_opened_one(served, monkeypatch):
    import webbrowser

    root, _, _ = served
    monkeypatch.setattr(webbrowser, "open", lambda url: False)  # a machine without a browser (ssh, a container)
    result = CliRunner().invoke(cli, ["ui", "--vault", str(root / ".memories")])
    assert result.exit_code == 0, result.output
    assert "/ui/login?code=" in result.output and "no browser to open here" in result.output
    assert "in the browser" not in result.output  # it said "opened the memdir pages ... in the browser"

