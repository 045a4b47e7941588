"""The thread lift (indexer/multihop.py): the turns around the best hit in its captured conversation rise with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from indexer.multihop import lift_thread, thread
from indexer.search import SearchRequest
from tests.conftest import memory_text, write
from tests.indexer.test_search import concept_index, ids, searcher


def _turn(root: Path, memory_id: str, body: str, previous: str | None = None) -> None:
    extra = f"previous: {previous}\n" if previous else ""
    write(root, f"history/{memory_id}.md", memory_text(memory_id, memory_id, body, extra=extra))


def _two_conversations(root: Path) -> None:
    # Two captured sessions whose third turns say the same thing; only the first session holds the best hit.
    _turn(root, "a1", "the car broke down again, the car")
    _turn(root, "a2", "coffee first", previous="a1")
    _turn(root, "a3", "the sedan and the espresso and the database", previous="a2")
    _turn(root, "b1", "postgres backups")
    _turn(root, "b2", "coffee first", previous="b1")
    _turn(root, "b3", "the sedan and the espresso and the database", previous="b2")


def test_a_thread_is_the_memory_and_the_turns_up_to_reach_links_before_and_after_it(tmp_path: Path):
    for number in range(1, 7):
        _turn(tmp_path, f"t{number}", f"turn {number}", previous=f"t{number - 1}" if number > 1 else None)
    _turn(tmp_path, "alone", "a note in no conversation")
    index = concept_index(tmp_path)
    assert thread(index, "t3", 2) == {"t1", "t2", "t3", "t4", "t5"}
    assert thread(index, "t1", 2) == {"t1", "t2", "t3"}  # the chain's start ends the walk back
    assert thread(index, "t6", 1) == {"t5", "t6"}
    assert thread(index, "alone", 2) == {"alone"}
    index.close()


def test_the_turn_near_the_best_hit_ranks_above_the_same_words_in_another_conversation(tmp_path: Path):
    _two_conversations(tmp_path)
    index = concept_index(tmp_path)
    question = SearchRequest(query="automobile")
    # The conversation lift (tests/indexer/test_conversation_lift.py) is off: this is the thread's own effect.
    off = {h.memory.id: h for h in searcher(index, thread_lift=0.0, conversation_lift=0.0).search(question)}
    hits = searcher(index, conversation_lift=0.0).search(question)
    on = {h.memory.id: h for h in hits}
    assert off["a3"].final == off["b3"].final  # without the lift the two are tied
    assert ids(hits)[0] == "a1" and ids(hits).index("a3") < ids(hits).index("b3")
    assert on["a3"].final > on["b3"].final and on["a3"].explain["thread_factor"] > 1.0
    assert "thread_factor" not in on["b3"].explain
    index.close()


def test_memories_in_no_conversation_keep_their_order_and_scores(tmp_path: Path):
    write(tmp_path, "history/a.md", memory_text("m-a", "Car", "the car broke down"))
    write(tmp_path, "history/b.md", memory_text("m-b", "Sedan", "the sedan and the espresso"))
    write(tmp_path, "history/c.md", memory_text("m-c", "Vehicle", "a vehicle, coffee and postgres"))
    index = concept_index(tmp_path)
    question = SearchRequest(query="automobile")
    off = searcher(index, thread_lift=0.0, conversation_lift=0.0).search(question)
    on = searcher(index).search(question)
    assert [(h.memory.id, h.final) for h in on] == [(h.memory.id, h.final) for h in off]
    index.close()


@dataclass(frozen=True)
class _Hit:
    memory: object
    final: float
    explain: dict | None = None


@dataclass(frozen=True)
class _Memory:
    id: str


def test_only_hits_in_the_best_hits_thread_are_lifted_and_the_best_stays_first(tmp_path: Path):
    _two_conversations(tmp_path)
    index = concept_index(tmp_path)
    ranked = [_Hit(_Memory("a1"), 1.0), _Hit(_Memory("b3"), 0.9), _Hit(_Memory("a3"), 0.85), _Hit(_Memory("b1"), 0.5)]
    lifted = {h.memory.id: h.final for h in lift_thread(index, ranked, reach=2, lift=0.1)}
    assert lifted == {"a1": 1.1, "b3": 0.9, "a3": 0.85 * 1.1, "b1": 0.5}
    assert lift_thread(index, ranked, reach=1, lift=0.1)[2].final == 0.85  # a3 is two turns away
    assert lift_thread(index, ranked, reach=2, lift=0.0) == ranked
    index.close()


def test_with_the_real_model_the_answer_two_turns_after_the_match_passes_a_look_alike_from_another_day(tmp_path: Path):
    from indexer.embed import make_embedder
    from indexer.index import Index
    from indexer.search import Searcher
    from indexer.settings import SearchSettings
    from vault import Vault

    turns = [("c1", "Dana", "I finally signed up for the pottery class downtown.", None),
             ("c2", "Lee", "Nice! How did the first evening go?", "c1"),
             ("c3", "Dana", "I made a lopsided bowl and a mug for my sister.", "c2"),
             ("d1", "Dana", "My sister visited last weekend.", None),
             ("d2", "Lee", "How was it?", "d1"),
             ("d3", "Dana", "My sister made a bowl at a class downtown.", "d2")]
    for memory_id, who, text, previous in turns:
        extra = f"speaker: {who}\n" + (f"previous: {previous}\n" if previous else "")
        write(tmp_path, f"history/{memory_id}.md", memory_text(memory_id, f"{who}, 1 May", f"{who}: {text}", extra=extra))
    index = Index.open(Vault(tmp_path), make_embedder("all-MiniLM-L6-v2"))
    question = SearchRequest(query="What did Dana make at her pottery class?")
    off = ids(Searcher(index, SearchSettings(thread_lift=0.0, conversation_lift=0.0)).search(question))
    on = ids(Searcher(index, SearchSettings()).search(question))
    assert off[0] == on[0] == "c1"
    assert off.index("d3") < off.index("c3")  # the look-alike's words win without the thread
    assert on.index("c3") < on.index("d3")
    index.close()
