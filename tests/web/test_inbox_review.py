"""The inbox's review runs in the background: a page never waits for it past its budget, and once it is done
the inbox lists exactly what `memdir review` lists, also right after a change."""

from __future__ import annotations

import gc
import json
import re
import threading
import weakref
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcp_server.cli.commands import cli
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from mcp_server.web import inbox_review, pages
from mcp_server.service import operations as ops


def inbox_keys(page: str) -> list[str]:
    return re.findall(r'id="item-([0-9a-f]+)"', page)


def cli_review_keys(vault: Path) -> list[str]:
    result = CliRunner().invoke(cli, ["review", "--json", "--vault", str(vault)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [item["key"] for item in json.loads(result.output)["items"]]


def test_after_a_change_the_inbox_lists_exactly_what_memdir_review_lists(logged_in):
    browser, root, ids = logged_in
    vault = root / ".memories"
    before = inbox_keys(browser.get("/ui/")[1])
    assert before == cli_review_keys(vault) and before
    added = CliRunner().invoke(cli, ["add", "The nightly ledger export runs at 02:00 UTC from the reports worker host.",
                                     "--type", "fact", "--vault", str(vault)], catch_exceptions=False)
    assert added.exit_code == 0, added.output
    after = inbox_keys(browser.get("/ui/")[1])
    assert after != before  # the new near-duplicate changed the duplicates item
    assert after == cli_review_keys(vault)


@pytest.fixture
def service(hashing_example: Path):
    app = App(hashing_example)
    try:
        yield MemoryService(app)
    finally:
        app.close()
        inbox_review.forget()


def test_a_slow_review_leaves_the_inbox_saying_still_checking_and_reloading_until_it_is_done(service, monkeypatch):
    release, started = threading.Event(), threading.Event()
    review = service.review

    def slow_review(*args, **kwargs):
        started.set()
        assert release.wait(30)
        return review(*args, **kwargs)

    monkeypatch.setattr(service, "review", slow_review)
    page = pages.inbox(service, "csrf", message="verified: X")  # returns while the review is blocked
    assert started.is_set() and not release.is_set()
    count = service.app.index.memory_count()
    assert f"Still checking {count} memories" in page and '<meta http-equiv=refresh content="1">' in page
    assert "verified: X" in page  # an action's outcome is shown meanwhile
    release.set()
    items = pages.review_items(service, wait=30)
    assert [item.key for item in items] == [item.key for item in review().items]
    assert "id=checking" not in pages.inbox(service, "csrf")


def test_a_review_that_fails_is_reported_by_the_page_that_waits_and_tried_again_by_the_next(service, monkeypatch):
    calls = []

    def failing_review(*args, **kwargs):
        calls.append(1)
        raise OSError("the index went away")

    monkeypatch.setattr(service, "review", failing_review)
    with pytest.raises(OSError, match="the index went away"):
        pages.review_items(service, wait=30)
    with pytest.raises(OSError):
        pages.review_items(service, wait=30)
    assert len(calls) == 2


def test_the_inbox_keeps_no_closed_vaults_service_alive(hashing_example: Path):
    app = App(hashing_example)
    service = MemoryService(app)
    assert pages.review_items(service, wait=30) == service.review(ops.Review()).items
    gone = weakref.ref(service)
    app.close()
    del service
    gc.collect()
    assert gone() is None  # the server closes idle vaults; their indices must not stay in memory for the inbox


def test_the_inbox_supersede_button_orders_two_memories_of_the_same_second_by_their_own_words(hashing_root: Path):
    # The page had its own copy of the order (creation time, then the random id): half such pairs got the button
    # the wrong way round, whatever `memdir review` said.
    from tests.conftest import write

    decision = "---\nid: {id}\ncollection: memory_bank\ntype: decision\ntitle: {title}\ncreated_at: 2026-11-02T09:00:00Z\n---\n{body}\n"
    write(hashing_root, "memory_bank/yes.md", decision.format(id="m-ffffffff", title="Postgres for billing",
                                                              body="We use Postgres for the billing service."))
    write(hashing_root, "memory_bank/no.md", decision.format(id="m-00000001", title="No Postgres for billing",
                                                             body="We no longer use Postgres for the billing service."))
    app = App(hashing_root)
    try:
        service = MemoryService(app)
        [item] = [i for i in service.review(ops.Review()).items if i.kind == "contradiction"]
        html = pages._item(service, item, "csrf")
        assert 'name="source" value="m-00000001"' in html and 'name="target" value="m-ffffffff"' in html
        assert "delete «Postgres for billing»" not in html  # the delete button names the newer one
    finally:
        app.close()
