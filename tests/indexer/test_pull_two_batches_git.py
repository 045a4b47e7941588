"""A real `git pull` that reaches a served vault in two watcher batches (issue 32 item 4): the second part is read
and staged while Whoosh commits the first, searches go on throughout, nothing pulled is lost, and the index,
vectors included, ends equal to a rebuild.

Real git, real watchdog, real Whoosh. Two fast-forwards of a teammate's two commits stand for a pull written
over more than `max_wait`; the first part's Whoosh commit is held open (test_pull_two_batches.commit_held_open)
so that the second batch certainly arrives while it commits: on an idle machine a commit of a few hundred
documents can end before the watcher's next batch is due. Waits are bounded waits on events and syncs.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from indexer.embed import HashingEmbedder
from indexer.index import KEYWORD_BESIDE_SEARCHES, Index
from indexer.live import LiveIndex
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import fresh_rebuild, state, top_ids
from tests.indexer.test_pull_folders import FAST, git, shared_with_a_teammate, wait_until
from tests.indexer.test_pull_two_batches import BOUND, commit_held_open, staged_until
from vault import Vault

# watchdog 7.1 warns on its reader thread when `mkdir -p` races its recursive walk (see test_watcher.py)
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

PART = KEYWORD_BESIDE_SEARCHES + 30  # each part a big keyword write: committed with the index lock let go


def teammate_commits(root: Path, tmp_path: Path) -> tuple[str, str, dict[str, str]]:
    """A base vault pushed to a bare remote; a teammate's two commits on it. Returns both commits' hashes and the
    memories the vault holds after both (id -> the word only its body has)."""
    remote, teammate = tmp_path / "remote.git", tmp_path / "teammate"
    expected = {}
    for i in range(20):
        write(root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"postgres lock base{i}"))
        expected[f"m-{i:08x}"] = f"base{i}"
    shared_with_a_teammate(root, remote, teammate)

    for i in range(PART):  # new folders, a changed note, a deleted one
        write(teammate, f"pulled/team{i % 3}/p{i}.md", memory_text(f"m-p{i:07x}", f"Pulled {i}", f"kafka kiwi{i}"))
        expected[f"m-p{i:07x}"] = f"kiwi{i}"
    write(teammate, "history/n0.md", memory_text("m-00000000", "Note 0", "changed by a teammate mango0"))
    expected["m-00000000"] = "mango0"
    (teammate / "history" / "n1.md").unlink()
    del expected["m-00000001"]
    git(teammate, "add", "-A")
    git(teammate, "commit", "-qm", "first part")
    first = git_out(teammate, "rev-parse", "HEAD")

    for i in range(PART):  # more new folders; one of the first part's memories changed again, one deleted
        write(teammate, f"pulled/late/week{i % 2}/q{i}.md", memory_text(f"m-q{i:07x}", f"Later {i}", f"quince{i}"))
        expected[f"m-q{i:07x}"] = f"quince{i}"
    write(teammate, "pulled/team2/p5.md", memory_text("m-p0000005", "Pulled 5", "wombat moved to port 9005"))
    expected["m-p0000005"] = "wombat"
    (teammate / "pulled" / "team0" / "p6.md").unlink()
    del expected["m-p0000006"]
    git(teammate, "add", "-A")
    git(teammate, "commit", "-qm", "second part")
    git(teammate, "push", "-q", "origin", "main")
    git(root, "fetch", "-q", "origin")
    return first, git_out(teammate, "rev-parse", "HEAD"), expected


def git_out(cwd: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=60).stdout.strip()


def test_a_git_pull_in_two_batches_loses_nothing_answers_throughout_and_ends_as_a_rebuild(hashing_root: Path,
                                                                                         tmp_path: Path):
    first, second, expected = teammate_commits(hashing_root, tmp_path)
    index = Index.open(Vault(hashing_root), HashingEmbedder(), defer_embedding=True)
    committing, release, staged_ahead = commit_held_open(index)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256"))
    stop, answer, failures = threading.Event(), threading.Event(), []

    def searching() -> None:  # a prompt hook's searches all along: none may fail
        while not stop.is_set():
            try:
                searcher.search(SearchRequest(query="kafka postgres quince wombat", limit=10))
                answer.set()
            except Exception as error:  # noqa: BLE001 - any failure is what this test looks for
                failures.append(repr(error))
            stop.wait(0.01)

    live = LiveIndex(index, FAST).start()
    searches = threading.Thread(target=searching, daemon=True)
    searches.start()
    try:
        git(hashing_root, "merge", "-q", "--ff-only", first)
        assert committing.wait(BOUND), "the first part's keyword write never committed"
        answer.clear()
        git(hashing_root, "merge", "-q", "--ff-only", second)
        assert staged_ahead.wait(BOUND), "the second batch waited for the first one's commit"
        # the second part is searchable while the first still commits (in one batch or several, each staged ahead),
        # and searches answer meanwhile
        staged_until(index, staged_ahead, {"quince7": ["m-q0000007"], "wombat": ["m-p0000005"], "kiwi6": []})
        assert answer.wait(BOUND), "no search answered while the first part committed"
        release.set()
        wait_until(live, lambda: {m.id for m in index.all_memories()} == set(expected))
        assert live.backfill is not None and live.backfill.wait_done(BOUND)
    finally:
        release.set()
        stop.set()
        searches.join(BOUND)
        live.stop()
    try:
        lost = [i for i, word in expected.items() if top_ids(index, word, mode="keyword")[:1] != [i]]
        after = state(index)
    finally:
        index.close()
    assert failures == []
    assert lost == []
    rebuilt = fresh_rebuild(hashing_root)
    try:
        assert after == state(rebuilt)  # vectors included: every pulled memory embedded, none left behind
    finally:
        rebuilt.close()
