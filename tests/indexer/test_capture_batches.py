"""Captured exchanges arriving together share one sync and one keyword commit, after the searches already running;
a server killed between a capture's write and its sync loses nothing (issue 32 item 6: under nine sessions each
capture's own sync, ~110 ms of server CPU under the index lock, queued ahead of the prompts)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from indexer.curator import Curator
from indexer.embed import HashingEmbedder
from indexer.group_sync import GroupSync
from indexer.index import Index
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from vault import Vault

from .helpers import default_curator

BOUND = 60.0  # seconds: never reached unless something waits for what it must not
SESSIONS = 9
REPO = Path(__file__).resolve().parents[2]


def opened(root: Path, embedder: HashingEmbedder | None = None) -> Index:
    return Index.open(Vault(root), embedder or HashingEmbedder(), defer_embedding=True)


def capture(curator: Curator, n: int) -> str:
    """Session n's exchange, stored as the Stop hook stores one (no comparison; its vectors come later)."""
    return curator.add(f"User: why does the walrus{n} deploy fail\n\nAssistant: the walrus{n} image was stale.",
                       title=f"Exchange: walrus{n}", type="history", collection="working",
                       extra={"session": f"s{n}"}, compare=False).memory.id


def keyword_ids(index: Index, query: str) -> set[str]:
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    return {h.memory.id for h in searcher.search(SearchRequest(query=query, mode="keyword", limit=50))}


def patient(curator: Curator) -> GroupSync:
    """The curator's captures wait for running searches for as long as the test holds one (never the bound)."""
    curator._later = GroupSync(curator.index, searches_first=BOUND)
    return curator._later


def test_captures_from_nine_sessions_arriving_together_are_all_searchable_after_one_sync(hashing_example: Path):
    index = opened(hashing_example)
    curator = default_curator(index)
    grouped = patient(curator)
    syncs: list[int] = []
    real_sync = index.sync
    index.sync = lambda paths=None, **kw: (syncs.append(len(list(paths or []))), real_sync(paths, **kw))[1]
    segments = index.keyword_segments()
    try:
        with ThreadPoolExecutor(SESSIONS) as pool:
            with index.searches.running():  # a prompt's search runs: the nine captures queue behind it
                stored = [pool.submit(capture, curator, n) for n in range(SESSIONS)]
                assert grouped.wait_queued(SESSIONS, BOUND)
            ids = [f.result(BOUND) for f in stored]
        assert syncs == [SESSIONS]  # one sync took all nine files
        assert grouped.syncs == 1
        assert index.keyword_segments() == segments + 1  # one Whoosh commit
        for n, memory_id in enumerate(ids):
            assert memory_id in keyword_ids(index, f"walrus{n}")
    finally:
        index.close()


class HeldQueries(HashingEmbedder):
    """A model host busy elsewhere: a query's vector comes when the test lets it."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()
        self.answer = threading.Event()

    def embed_query(self, text: str) -> np.ndarray:
        self.asked.set()
        assert self.answer.wait(BOUND)
        return super().embed_query(text)


def test_a_prompt_asked_before_a_capture_is_answered_before_that_capture_is_indexed(hashing_example: Path):
    embedder = HeldQueries()
    index = opened(hashing_example, embedder)
    while index.backfill(limit=256):  # its vectors in: a prompt's search asks for its query's vector
        pass
    curator = default_curator(index)
    grouped = patient(curator)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    searches_at_sync: list[int] = []
    real_sync = index.sync
    index.sync = lambda paths=None, **kw: (searches_at_sync.append(index.searches.count()), real_sync(paths, **kw))[1]
    try:
        with ThreadPoolExecutor(2) as pool:
            asked = pool.submit(searcher.search, SearchRequest(query="why does the walrus7 deploy fail", limit=10, vector_wait=BOUND))
            assert embedder.asked.wait(BOUND)  # the prompt's search is running, waiting for its query vector
            stored = pool.submit(capture, curator, 7)
            assert grouped.wait_queued(1, BOUND)  # the capture is written and waits for the next sync
            assert searches_at_sync == []  # ... which has not begun: the prompt is first
            embedder.answer.set()
            answered = asked.result(BOUND)
            memory_id = stored.result(BOUND)
        assert memory_id not in {h.memory.id for h in answered}  # answered from the index before the capture
        assert searches_at_sync == [0]  # the capture's sync began once the prompt's search had ended
        assert memory_id in keyword_ids(index, "walrus7")
    finally:
        embedder.answer.set()
        index.close()


# The server's part, in a process of its own: a capture written while a prompt's search runs, then killed -9 before
# its sync (it waits for that search). It prints the written file's path once the capture is queued.
KILLED_SERVER = """
import sys, threading
from pathlib import Path
from indexer.embed import HashingEmbedder
from indexer.group_sync import GroupSync
from indexer.index import Index
from tests.indexer.helpers import default_curator
from tests.indexer.test_capture_batches import capture
from vault import Vault

index = Index.open(Vault(Path(sys.argv[1])), HashingEmbedder(), defer_embedding=True)
curator = default_curator(index)
curator._later = GroupSync(index, searches_first=3600)
searching = index.searches.running()
searching.__enter__()  # a prompt's search that never ends: the capture waits for it
threading.Thread(target=capture, args=(curator, 42), daemon=True).start()
assert curator._later.wait_queued(1, 60)
written = [p for p in Path(sys.argv[1], "working").glob("*walrus42*.md")]
print(written[0], flush=True)
threading.Event().wait()
"""


def test_a_server_killed_after_a_capture_is_written_and_before_it_is_indexed_loses_nothing(hashing_example: Path):
    opened(hashing_example).close()  # the index exists, as a served vault's does
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    server = subprocess.Popen([sys.executable, "-c", KILLED_SERVER, str(hashing_example)], stdout=subprocess.PIPE,
                              text=True, cwd=REPO, env=env)
    try:
        ready, _, _ = select.select([server.stdout], [], [], BOUND)
        assert ready, "the capture was never written"
        written = Path(server.stdout.readline().strip())
        assert written.is_file()
        os.kill(server.pid, signal.SIGKILL)  # between the write and the index
        server.wait(BOUND)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(BOUND)
        server.stdout.close()
    index = opened(hashing_example)  # the next server's open reconciles what the killed one left unindexed
    try:
        found = keyword_ids(index, "walrus42")
        assert len(found) == 1
        (memory_id,) = found
        assert index.memory(memory_id).path == written.relative_to(hashing_example).as_posix()
    finally:
        index.close()
