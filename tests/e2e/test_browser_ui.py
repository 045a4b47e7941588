"""`memdir ui` in a real browser: Debian's Chromium (`apt-get install chromium`) driven by Playwright's
Python driver (no browser download: `executable_path`). Run with `pytest -k browser` under MEMDIR_E2E=1
(or `-m e2e`); without Chromium or Playwright these skip and say so. MEMDIR_UI_SCREENSHOTS=docs/ui keeps
the screenshots (else they go to the test's temporary folder)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.web.conftest import login_url, make_project

CHROMIUM = os.environ.get("MEMDIR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
SHOTS = os.environ.get("MEMDIR_UI_SCREENSHOTS")  # read at import: each test runs in a cleaned environment
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("chromium")]  # under `pytest -n`: one worker, one Chromium


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module (each test opens its own pages, each page its own context and cookies):
    a launch took 2-5 s of each test on a loaded machine."""
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium: apt-get install -y chromium (or set MEMDIR_CHROMIUM)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="no Playwright: pip install -e '.[test]'")
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def made() -> dict[Path, dict[str, str]]:
    """The module's one project (root -> its memory ids), made by the first test that asks for it."""
    return {}


@pytest.fixture
def inbox(made, warm, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The project the tests that only read, or add what the others do not count, share: made once (8-10 s of
    set-up per test on a loaded machine with a server of its own) and opened in the warm tests' server."""
    if not made:
        root = tmp_path_factory.mktemp("browsed") / "project"
        made[root] = make_project(root)
    [(root, ids)] = made.items()
    warm(root / ".memories")
    return root, ids


@pytest.fixture
def own_inbox(warm, tmp_path) -> tuple[Path, dict[str, str]]:
    """A project of the test's own, for a test that changes what the others read (verifying the stale memory)."""
    root = tmp_path / "project"
    ids = make_project(root)
    warm(root / ".memories")
    return root, ids


def shots(tmp_path: Path) -> Path:
    folder = Path(SHOTS or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def settled(page) -> None:
    """The inbox once its review is done: a "still checking" page reloads itself each second (waits survive navigations)."""
    page.locator("#checking").wait_for(state="detached", timeout=60_000)


def blob_id(path: Path) -> str:
    return subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout.strip()


def test_browser_verifies_a_stale_memory_with_a_click_and_the_file_is_reanchored(browser, own_inbox, tmp_path):
    root, ids = own_inbox
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(login_url(root / ".memories"))
    assert page.url.endswith("/ui/") and "code=" not in page.url  # the code is not in the history
    settled(page)
    stale = page.locator(".item", has=page.locator(".kind.stale"))
    assert stale.count() == 1 and "+TTL_MINUTES = 30" in stale.inner_text()
    page.screenshot(path=str(shots(tmp_path) / "inbox.png"), full_page=True)
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
    phone.context.add_cookies(page.context.cookies())
    phone.goto(page.url)
    phone.screenshot(path=str(shots(tmp_path) / "inbox-phone.png"), full_page=False)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone

    memory_file = next((root / ".memories").rglob("token-lifetime*.md"))
    assert blob_id(root / "services/auth.py")[:12] not in memory_file.read_text()
    stale.get_by_role("button", name="verify: it still holds").click()
    page.wait_for_load_state()
    settled(page)
    assert "verified: Token lifetime" in page.locator("section.note").inner_text()
    assert page.locator(".item", has=page.locator(".kind.stale")).count() == 0
    assert f"services/auth.py@{blob_id(root / 'services/auth.py')[:12]}" in memory_file.read_text()


def test_browser_opens_a_memory_page_from_the_inbox_and_sees_its_score_plot(browser, inbox, tmp_path):
    root, ids = inbox
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(login_url(root / ".memories"))
    settled(page)
    page.locator(".item", has=page.locator(".kind.stale")).get_by_role("link", name="Token lifetime").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Token lifetime"
    plot = page.locator("svg.plot")
    box = plot.bounding_box()
    assert plot.is_visible() and box["width"] > 200 and box["height"] > 100
    assert plot.locator("circle").count() >= 2  # the committed version's score and now's
    page.locator("section p").get_by_role("link", name="Billing database").click()  # a wikilink in the body
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Billing database"
    page.go_back()
    page.screenshot(path=str(shots(tmp_path) / "memory.png"), full_page=True)


def test_browser_shows_turns_search_and_vault_pages_readable_on_a_phone(browser, inbox, tmp_path):
    from mcp_server import client

    root, ids = inbox
    vault = root / ".memories"
    info = client.ensure(vault)
    client.request(info, "POST", "/api/hook/prompt", {"session_id": "s-shot", "prompt": "How long is the token lifetime?"},
                   vault=vault)
    client.request(info, "POST", "/api/hook/stop", {"session_id": "s-shot",
                   "last_assistant_message": "Fifteen minutes, set in services/auth.py."}, vault=vault)
    client.call(vault, "score", {"memory_scores": {ids["stale"]: "worked"}, "session": "s-shot"})
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(login_url(vault))
    settled(page)
    for name, path, needle in (("turns", "/ui/turns", "How long is the token lifetime?"),
                               ("search", "/ui/search?q=token+lifetime", "share of the final score"),
                               ("vault", "/ui/vault", "Growth")):
        page.get_by_role("link", name=name, exact=True).click() if name != "search" else page.goto(page.url.split("/ui/")[0] + path)
        page.wait_for_load_state()
        assert needle in page.content(), name
        page.screenshot(path=str(shots(tmp_path) / f"{name}.png"), full_page=True)
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        phone.context.add_cookies(page.context.cookies())
        phone.goto(page.url)
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390, name  # nothing wider than the phone
        phone.close()
