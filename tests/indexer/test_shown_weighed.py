"""The relevance a result shows is what ranked it (issue 26 item 4): a memory that shares one word with a
long question has its keyword match discounted in the order (keyword_confidence), and it used to show the
undiscounted number anyway. On the served fresh set the example vault's runbook came first at 0.98 for
"what hosts our live data store" on the words it shares, where the answer showed 0.4-0.7: a high number was
right less often than a middle one."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def test_a_hit_on_one_shared_word_shows_no_more_than_what_ranked_it(hashing_root: Path):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Deploy runbook", "Deploys go out with the release command"))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "Espresso", "Grind finer for espresso"))
    settings = SearchSettings(embedder="hashing-256")
    index = open_index(hashing_root)
    try:
        question = "how should the quarterly planning meeting with the deploy team be organised next month"
        hit = next(h for h in Searcher(index, settings).search(SearchRequest(query=question, now=NOW))
                   if h.memory.id == "m-0000000a")
        ranked_by = hit.explain["weighed"]  # the calibrated relevance the order used
        assert hit.relevance > ranked_by + 0.1  # the keyword match counted in full, not in the order
        assert hit.shown <= ranked_by + 1e-9
    finally:
        index.close()
