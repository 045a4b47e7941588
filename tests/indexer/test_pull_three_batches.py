"""A pull the watcher cuts in three batches (a slow `git pull` on a busy machine, issue 32 item 4): the second and
the third batch are both read and keyword-searchable while Whoosh still commits the first, each answered by its
newest version, and the index, vectors included, ends equal to a rebuild."""

from __future__ import annotations

import threading
from pathlib import Path

from indexer.embed import HashingEmbedder
from indexer.index import Index
from vault import Vault

from .helpers import fresh_rebuild, state, top_ids
from .test_pull_two_batches import BOUND, PART, commit_held_open, first_part, note, second_part


def third_part(root: Path) -> list[str]:
    """New memories (one names a first-part memory as `previous:`), one of the second part's changed again, one of
    the first part's deleted."""
    for n in range(PART):
        note(root, f"third-{n}.md", f"m-third{n:04d}", f"Third note {n}", f"The yak{n} queue drains at night.",
             "previous: m-pull0001\n" if n == 0 else "")
    note(root, "later-3.md", "m-late0003", "Later note 3", "Edited again: the narwhal flag is set.")
    (root / "memory_bank" / "pulled-7.md").unlink()
    return [f"memory_bank/third-{n}.md" for n in range(PART)] + ["memory_bank/later-3.md", "memory_bank/pulled-7.md"]


def test_a_third_batch_is_searchable_while_the_first_still_commits_and_all_end_as_a_rebuild(hashing_example: Path,
                                                                                           tmp_path: Path):
    index = Index.open(Vault(hashing_example), HashingEmbedder(), defer_embedding=True)
    committing, release, _ = commit_held_open(index)
    handed_on = [threading.Event() for _ in range(3)]
    syncs: list[threading.Thread] = []

    def sync_in_background(paths: list[str], part: int) -> None:
        syncs.append(threading.Thread(target=index.sync, args=(paths,), kwargs={"keyword_commit_began": handed_on[part].set}))
        syncs[-1].start()

    try:
        sync_in_background(first_part(hashing_example), 0)
        assert committing.wait(BOUND) and handed_on[0].is_set()
        sync_in_background(second_part(hashing_example), 1)
        assert handed_on[1].wait(BOUND), "the second batch waited for the first one's commit"
        sync_in_background(third_part(hashing_example), 2)
        assert handed_on[2].wait(BOUND), "the third batch waited for the first one's commit"
        during = {query: top_ids(index, query, mode="keyword")
                  for query in ("yak4", "narwhal", "quokka3", "quokka5", "wombat", "zanzibar7", "zanzibar8")}
        release.set()
        for sync in syncs:
            sync.join(BOUND)
        assert not any(sync.is_alive() for sync in syncs)
        while index.backfill(64):  # every deferred vector, so that vectors are compared too
            pass
        after = state(index)
    finally:
        release.set()
        index.close()
    assert during == {"yak4": ["m-third0004"], "narwhal": ["m-late0003"], "quokka3": [], "quokka5": ["m-late0005"],
                      "wombat": ["m-pull0005"], "zanzibar7": [], "zanzibar8": ["m-pull0008"]}
    rebuilt = fresh_rebuild(hashing_example)
    try:
        assert after == state(rebuilt)
        assert rebuilt.previous_of("m-third0000").id == "m-pull0001"
    finally:
        rebuilt.close()
