"""The web view in a real browser (headless Chromium from Debian, driven by Playwright) against a real
`memdir serve`: sign in with the link `memdir ui --no-browser` prints, verify a stale memory with a click
and see the file re-anchored, open a memory page and see its plot. With
MEMDIR_UI_SCREENSHOTS=1 the screenshots in docs/ui/ are refreshed.

Run with MEMDIR_E2E=1 (or -m e2e); `pytest -k browser` selects these. Skipped, saying why, without
chromium (`apt-get install chromium`) or the playwright package (`pip install -e '.[test]'`); the
browser Playwright downloads is never used (`playwright install` is not needed).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mcp_server import client
from tests.conftest import HASHING_TOML, write
from tests.mcp_server.processes import start_server, stop_all
from tests.vault.test_anchors import git
from vault import init_vault

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
# The committed screenshots are refreshed on request only, so a test run leaves the tree clean.
SHOTS = REPO / "docs" / "ui" if os.environ.get("MEMDIR_UI_SCREENSHOTS") == "1" else Path(tempfile.mkdtemp(prefix="memdir-ui-shots-"))
CHROMIUM = os.environ.get("MEMDIR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
AUTH = "TTL_MINUTES = 15\n\ndef issue_token(user):\n    return sign(user, TTL_MINUTES)\n"


@pytest.fixture
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing: pip install -e '.[test]'")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no chromium at {CHROMIUM}: apt-get install -y chromium (or set MEMDIR_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def served(tmp_path: Path):
    """A project whose vault holds a stale memory, a scored one linking to it, and a hostile one."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    write(project, "services/auth.py", AUTH)
    root = project / ".memories"
    init_vault(root, HASHING_TOML)
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "code")
    process = start_server(root)
    try:
        stale = client.call(root, "add", {"content": "Token lifetime is set in `services/auth.py` (15 minutes).",
                                          "title": "Token lifetime", "type": "fact"})["memory"]
        scored = client.call(root, "add", {"content": "Sessions expire with the token: see [[token-lifetime]].\n"
                                           "Renewal happens in the gateway.", "title": "Session expiry",
                                           "type": "learning", "collection": "history"})["memory"]
        for outcome in ("worked", "worked", "failed", "worked", "partial", "worked"):
            client.call(root, "score", {"memory_scores": {scored["id"]: outcome}})
        client.call(root, "add", {"content": "Shown as text: <script>alert('x')</script>", "title": "<b>markup</b> title",
                                  "type": "context", "collection": "history"})
        write(project, "services/auth.py", AUTH.replace("15", "30"))
        yield root, stale, scored
    finally:
        stop_all(root, process)


def sign_in_url(root: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "mcp_server", "ui", "--no-browser", "--vault", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return re.search(r"http://127\.0\.0\.1:\d+/ui/login\?code=\S+", done.stdout).group(0)


def test_browser_verifies_a_stale_memory_from_the_inbox_with_a_click(browser, served):
    root, stale, _ = served
    path = root / stale["path"]
    before = path.read_text()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    url = sign_in_url(root)
    page.goto(url)
    assert page.url.endswith("/ui/")  # the code is gone from the address (and from the history)
    cookie = next(c for c in page.context.cookies() if c["name"] == "memdir_ui")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    card = page.locator('.item[data-kind="stale"]')
    assert "services/auth.py" in card.inner_text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "inbox.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SHOTS / "inbox-phone.png"), full_page=True)
    card.locator('button[data-action="verify"]').click()
    page.wait_for_selector(".notice")
    assert "Verified Token lifetime" in page.locator(".notice").inner_text()
    assert page.locator('.item[data-kind="stale"]').count() == 0
    after = path.read_text()
    assert after != before and "anchors:" in after and before.split("---")[-1] == after.split("---")[-1]
    assert not [i for i in client.call(root, "review")["items"] if i["kind"] == "stale"]
    log = client.log_file().read_text() if client.log_file().is_file() else ""
    secrets = [url.split("code=")[1], client.running().token, cookie["value"]]
    assert log and not [s for s in secrets if s in log]  # neither the code, the server's token nor the session


def test_browser_opens_a_memory_page_with_its_plot_and_links(browser, served):
    root, stale, scored = served
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(sign_in_url(root))
    page.goto(page.url.replace("/ui/", f"/ui/memory/{scored['id']}"))
    plot = page.locator("svg.plot")
    assert plot.is_visible() and plot.locator("circle").count() == 6
    page.screenshot(path=str(SHOTS / "memory.png"), full_page=True)
    page.get_by_role("link", name="token-lifetime").first.click()
    assert page.url.endswith(f"/ui/memory/{stale['id']}") and "Token lifetime" in page.title()
    page.goto(page.url.split("/ui/")[0] + "/ui/search?q=token+lifetime")
    assert page.locator(".result").count() >= 1
    page.screenshot(path=str(SHOTS / "search.png"), full_page=True)
    client.call(root, "read", {"ref": scored["id"], "session": "session-from-an-assistant"})
    page.goto(page.url.split("/ui/")[0] + f"/ui/turns?memory={scored['id']}")
    assert "session-from-an-assistant" in page.locator(".session").first.inner_text()
    page.screenshot(path=str(SHOTS / "turns.png"), full_page=True)
    page.goto(page.url.split("/ui/")[0] + "/ui/search?q=markup")
    assert page.locator("script").count() == 0 and "<b>markup</b> title" in page.locator(".result").first.inner_text()
