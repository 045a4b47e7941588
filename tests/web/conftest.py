"""A real `memdir serve` over a git project with a stale memory, a contradiction and a hostile memory,
and a browser-less client that logs in the way `memdir ui` does."""

from __future__ import annotations

import http.client
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from click.testing import CliRunner

from mcp_server.service.app import App
from mcp_server.cli.commands import cli
from mcp_server.service.memory_service import MemoryService
from tests.conftest import HASHING_TOML, write
from tests.mcp_server.processes import start_server, stop_all
from tests.vault.test_anchors import git
from vault import init_vault
from mcp_server.service import operations as ops

AUTH = "TTL_MINUTES = 15\n\ndef issue_token(user):\n    return sign(user, TTL_MINUTES)\n"
HOSTILE_TITLE = '<script>alert("title")</script>'


def make_project(root: Path) -> dict[str, str]:
    """A git project whose vault holds a stale memory, a contradicting pair and a memory full of markup."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "services/auth.py", AUTH)
    init_vault(root / ".memories", HASHING_TOML)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code")
    app = App(root / ".memories")
    service = MemoryService(app)
    try:
        billing = service.add(ops.Add(content="We use Postgres for the billing service.", type="decision", title="Billing database")).memory
        ids = {
            "stale": service.add(ops.Add(content=f"Token lifetime lives in `services/auth.py`, see [[{Path(billing.path).stem}|Billing database]].",
                                 type="fact", title="Token lifetime")).memory.id,
            "yes": billing.id,
            "no": service.add(ops.Add(content="We do not use Postgres for the billing service.", type="decision")).memory.id,
            "twin_a": service.add(ops.Add(content="The nightly ledger export runs at 02:00 UTC from the reports worker.", type="fact")).memory.id,
            "twin_b": service.add(ops.Add(content="The nightly ledger export runs at 02:00 UTC from the reports worker node.", type="fact")).memory.id,
            "hostile": service.add(ops.Add(content='<img src=x onerror="alert(1)"> <script>alert("body")</script> [x](javascript:alert(2))',
                                   type="context", title=HOSTILE_TITLE, tags=["<b>tag</b>"])).memory.id,
        }
        service.score(ops.Score(memory_scores={ids["stale"]: "worked"}))
    finally:
        app.close()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memories")
    write(root, "services/auth.py", AUTH.replace("15", "30"))  # the stale memory's code moves on
    return ids


@dataclass
class Browserless:
    """HTTP like a browser on the page: a cookie jar of one, and Origin on its POSTs."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def request(self, method: str, path: str, body: dict | None = None, headers: dict | None = None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = urlencode(body).encode() if body is not None else None
        if data is not None:
            sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
            sent.setdefault("Origin", f"http://127.0.0.1:{self.port}")
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        text = response.read().decode()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";")[0]
        connection.close()
        return response, text

    def get(self, path: str):
        """As a browser shows it: a "still checking" inbox asks again, as its refresh does (bounded)."""
        deadline = time.monotonic() + 60
        while True:
            response, text = self.request("GET", path)
            if "id=checking" not in text:
                return response, text
            assert time.monotonic() < deadline, "the inbox's review did not finish within 60 s"
            # no pause needed: the server holds each page up to inbox_review.PAGE_WAIT for the review

    def post(self, path: str, body: dict, **headers):
        return self.request("POST", path, body, headers)

    def csrf(self, page: str) -> str:
        return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def login_url(root: Path) -> str:
    result = CliRunner().invoke(cli, ["ui", "--no-browser", "--vault", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output.strip()


@pytest.fixture
def served(tmp_path: Path):
    root = tmp_path / "project"
    ids = make_project(root)
    copy_project(root, tmp_path / "cli-copy")  # the same vault, for the CLI to act on beside the pages
    process = start_server(root / ".memories")
    try:
        yield root, ids, process
    finally:
        stop_all(root / ".memories", process)


@pytest.fixture
def logged_in(served):
    root, ids, _ = served
    url = urlsplit(login_url(root / ".memories"))
    browser = Browserless(url.port)
    response, _ = browser.get(f"{url.path}?{url.query}")
    assert response.status == 303 and response.getheader("Location") == "/ui/"
    return browser, root, ids


def copy_project(root: Path, to: Path) -> Path:
    shutil.copytree(root, to, symlinks=True, ignore=shutil.ignore_patterns("server.lock"))
    return to
