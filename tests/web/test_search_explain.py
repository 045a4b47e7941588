"""The Search page's explanation: each ranked hit carries the terms its final score was made of, and
the shares drawn from them add back up to that score (ranking itself is untouched)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.search import SearchRequest
from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService
from mcp_server.web.pages import channel_shares, search_page


@pytest.fixture
def service(hashing_example: Path):
    app = App(hashing_example)
    yield MemoryService(app)
    app.close()


@pytest.mark.parametrize("query", ["database migrations", "how do we deploy", "pytest fixtures"])
def test_every_ranked_hit_explains_its_final_score_exactly(service, query):
    hits = service.hits(SearchRequest(query=query, limit=10))
    assert hits
    for hit in hits:
        parts = hit.explain
        assert parts is not None
        rebuilt = (parts["order"] * parts["quality"] + parts["recency"]) * parts["stale_factor"]
        assert rebuilt == pytest.approx(hit.final, abs=1e-12)
        shares = channel_shares(hit)
        assert sum(abs(v) for v in shares.values()) == pytest.approx(1.0)
        assert set(shares) <= {"vector", "keyword", "graph", "quality", "recency"}


def test_the_search_page_lists_results_with_their_channel_shares_and_escapes_the_query(service):
    page = search_page(service, 'database <script>alert(1)</script>')
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert page.count("<svg class=shares") >= 1 and ("vector +" in page or "keyword +" in page)
