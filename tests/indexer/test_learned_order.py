"""The learned order (SearchSettings.learned_order, indexer/ranking.py LEARNED_ORDER): where the keyword channel
covers little of a question, a short note that shares a weak word with it falls behind what is near in meaning;
what the order must keep (code-like words, superseded memories, staleness) it keeps."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from indexer import multihop
from indexer.ranking import learned_features
from indexer.search import SearchRequest, relearned
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from tests.indexer.test_search import NOW, concept_index, ids, searcher

PARAPHRASE = "what is the quickest way to get a database going on my laptop"


def _paraphrase_vault(root: Path) -> None:
    write(root, "patterns/a.md", memory_text("m-0000000a", "Local setup", "Bring up postgres with docker compose"))
    write(root, "patterns/b.md", memory_text("m-0000000b", "Stickers", "Stickers on my laptop lid"))
    write(root, "patterns/c.md", memory_text("m-0000000c", "Espresso", "Grind finer for espresso"))


def test_a_short_note_sharing_one_weak_word_falls_further_behind_the_note_nearest_in_meaning(hashing_root: Path):
    _paraphrase_vault(hashing_root)
    index = concept_index(hashing_root)
    request = SearchRequest(query=PARAPHRASE, now=NOW)
    hand = {h.memory.id: h for h in searcher(index, learned_order=False).search(request)}
    learned = {h.memory.id: h for h in searcher(index).search(request)}  # on by default
    assert ids(searcher(index, learned_order=True).search(request))[0] == "m-0000000a"
    assert learned["m-0000000b"].channel == "keyword" or learned["m-0000000b"].channel == "both"
    assert learned["m-0000000b"].final / learned["m-0000000a"].final < hand["m-0000000b"].final / hand["m-0000000a"].final
    assert learned["m-0000000a"].explain["hand_order"] == hand["m-0000000a"].explain["order"]
    index.close()


def test_the_learned_order_leaves_a_question_the_keyword_channel_covers_to_its_words(hashing_root: Path):
    _paraphrase_vault(hashing_root)
    index = concept_index(hashing_root)
    hits = searcher(index, learned_order=True).search(SearchRequest(query="laptop lid stickers", now=NOW))
    assert ids(hits)[0] == "m-0000000b"
    index.close()


def test_a_code_like_word_still_finds_its_memory_under_the_learned_order(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Car upkeep", "Service the sedan every spring"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Importer", "The importer fails with ERR_4711"))
    index = concept_index(hashing_root)
    hits = searcher(index, learned_order=True).search(SearchRequest(query="ERR_4711", now=NOW))
    assert ids(hits)[0] == "m-0000000b"
    index.close()


def test_superseded_memories_stay_hidden_under_the_learned_order(example_root: Path):
    index = open_index(example_root)
    hits = searcher(index, learned_order=True).search(
        SearchRequest(query="Redis SET NX lock statement imports", limit=20, now=NOW))
    assert "m-1b6e2d90" not in ids(hits) and "m-8e2c4b07" in ids(hits)
    index.close()


@pytest.mark.model
def test_with_the_real_model_a_note_sharing_one_word_and_further_in_meaning_falls_further_behind(tmp_path: Path):
    from indexer.embed import make_embedder
    from indexer.index import Index
    from indexer.search import Searcher
    from indexer.settings import SearchSettings
    from vault import Vault

    root = tmp_path / "vault"
    write(root, "patterns/compose.md", memory_text(
        "m-0000000a", "Local development", "Local development uses docker compose with the postgres:16 image; "
        "run make up and the service listens on 5432."))
    write(root, "patterns/stickers.md", memory_text("m-0000000b", "Laptop stickers", "Stickers on my laptop lid."))
    write(root, "patterns/coffee.md", memory_text("m-0000000c", "Coffee", "Grind finer for espresso."))
    write(root, "patterns/battery.md", memory_text(
        "m-0000000d", "Laptop battery", "The laptop battery lasts four hours when the screen is dim."))
    index = Index.open(Vault(root), make_embedder("all-MiniLM-L6-v2"))
    request = SearchRequest(query="how do I get a database running on my laptop", now=NOW)
    hand = {h.memory.id: h for h in Searcher(index, SearchSettings(learned_order=False)).search(request)}
    learned = {h.memory.id: h for h in Searcher(index, SearchSettings()).search(request)}  # on by default
    nearer, further = "m-0000000b", "m-0000000d"  # both share only "laptop"; the stickers note is nearer in meaning
    assert hand[nearer].vector_score > hand[further].vector_score
    assert learned[further].final / learned[nearer].final < hand[further].final / hand[nearer].final
    index.close()


def test_a_single_channel_keeps_its_own_order_under_the_learned_order(hashing_root: Path):
    _paraphrase_vault(hashing_root)
    index = concept_index(hashing_root)
    for mode in ("keyword", "vector"):
        request = SearchRequest(query=PARAPHRASE, mode=mode, now=NOW)
        hand = [(h.memory.id, h.final) for h in searcher(index).search(request)]
        assert [(h.memory.id, h.final) for h in searcher(index, learned_order=True).search(request)] == hand
    index.close()


def test_a_word_one_memory_holds_reads_rarer_than_one_every_memory_holds(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Compose", "docker compose brings up postgres"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Pruning", "docker image pruning weekly"))
    write(hashing_root, "patterns/c.md", memory_text("m-0000000c", "Host", "docker runs on the zanzibar host"))
    index = concept_index(hashing_root)
    hits = {h.memory.id: h for h in searcher(index).search(SearchRequest(query="zanzibar docker", now=NOW,
                                                                           features=True))}
    assert hits["m-0000000c"].explain["keyword_rarity"] > hits["m-0000000a"].explain["keyword_rarity"] > 0.0
    assert hits["m-0000000a"].explain["keyword_rarest"] == hits["m-0000000c"].explain["keyword_rarity"]
    index.close()


def test_with_the_learned_order_off_and_unasked_a_search_reads_none_of_its_features(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Compose", "docker compose brings up postgres"))
    index = concept_index(hashing_root)
    hits = searcher(index, learned_order=False).search(SearchRequest(query="docker", now=NOW))
    assert hits and not {"keyword_rarity", "keyword_covered", "sectioned"} & set(hits[0].explain)
    index.close()


def test_a_weak_keyword_hit_on_a_word_no_other_memory_holds_is_not_held_against_it():
    common = learned_features(0.5, 0.1, 0.2, 0.1, True, 1.0, 4.0, rarity=0.5)
    rare = learned_features(0.5, 0.1, 0.2, 0.1, True, 1.0, 4.0, rarity=1.0)
    assert common[2] > 0.0 and rare[2] == 0.0


def test_a_memory_with_no_vector_yet_is_not_held_behind_for_it():
    # after a pull, a memory whose vectors the backfill has not reached yet is found by its words alone
    assert learned_features(0.5, None, 0.4, 0.1, False, 2.0, 2.0)[1] == 0.0
    assert learned_features(0.5, 0.1, 0.4, 0.1, False, 2.0, 2.0)[1] < 0.0


def test_with_no_vector_for_any_hit_the_hand_made_order_stands(hashing_root: Path):
    _paraphrase_vault(hashing_root)
    index = concept_index(hashing_root)
    hits = searcher(index, learned_order=False).search(SearchRequest(query=PARAPHRASE, now=NOW, features=True))
    unembedded = [replace(h, vector_score=None) for h in hits]  # the query's vector never came (vector_wait)
    assert [h.final for h in relearned(unembedded)] == [h.final for h in hits]
    index.close()


def test_a_long_pasted_question_keeps_the_hand_made_order(hashing_root: Path):
    _paraphrase_vault(hashing_root)
    index = concept_index(hashing_root)
    pasted = PARAPHRASE + " " + " ".join(f"word{n}" for n in range(40))  # past long_query_full words
    request = SearchRequest(query=pasted, now=NOW)
    hand = [(h.memory.id, h.final) for h in searcher(index).search(request)]
    assert [(h.memory.id, h.final) for h in searcher(index, learned_order=True).search(request)] == hand
    index.close()


@dataclass(frozen=True)
class _Turn:
    memory: SimpleNamespace
    final: float
    explain: dict


class _Chain:
    """Turns t1 <- t2 <- t3 of one captured conversation, and a lone note."""
    links = {"t2": "t1", "t3": "t2"}

    def previous_of(self, memory_id):
        return SimpleNamespace(id=self.links[memory_id]) if memory_id in self.links else None

    def next_of(self, memory_id):
        after = [k for k, v in self.links.items() if v == memory_id]
        return SimpleNamespace(id=after[0]) if after else None


def test_the_thread_lift_is_anchored_where_the_hand_made_order_put_the_best_hit():
    # the learned order put the lone note first; the hand order had t1 first, and its thread is lifted
    hits = [_Turn(SimpleNamespace(id=i), final, {"hand_final": hand})
            for i, final, hand in (("lone", 0.9, 0.5), ("t1", 0.8, 0.7), ("t2", 0.3, 0.2))]
    lifted = {h.memory.id: h.final for h in multihop.lift_thread(_Chain(), hits, reach=1, lift=0.5)}
    assert lifted == {"lone": 0.9, "t1": pytest.approx(1.2), "t2": pytest.approx(0.45)}
