"""The conversation lift (indexer/multihop.py): the session of the strong hit nearest the question in meaning rises."""

from __future__ import annotations

from dataclasses import replace

from pathlib import Path

from indexer.multihop import lift_conversation, nearest_whole
from indexer.search import SearchRequest
from tests.conftest import memory_text, write
from tests.indexer.test_search import ConceptEmbedder, concept_index, ids, searcher
from tests.indexer.test_thread import _Hit, _Memory, _turn

AUTOMOBILE = ConceptEmbedder().embed_query("automobile")


def _two_sessions(root: Path) -> None:
    # Session a speaks of the car and, four turns later, says what session b says in its third turn; session b
    # opens with words that only half match.
    _turn(root, "a1", "the car broke down again, the car")
    _turn(root, "a2", "coffee first", previous="a1")
    _turn(root, "a3", "coffee again", previous="a2")
    _turn(root, "a4", "more coffee", previous="a3")
    _turn(root, "a5", "the sedan and the espresso and the database", previous="a4")
    _turn(root, "b1", "the car and the espresso and the database and postgres")
    _turn(root, "b2", "coffee first", previous="b1")
    _turn(root, "b3", "the sedan and the espresso and the database", previous="b2")


def test_the_memory_nearest_the_query_is_read_by_its_whole_text_not_by_its_place_in_the_list(tmp_path: Path):
    _two_sessions(tmp_path)
    index = concept_index(tmp_path)
    assert nearest_whole(index, ["b1", "a5", "a1"], AUTOMOBILE) == "a1"  # only the car, nothing else
    assert nearest_whole(index, ["a5", "b3"], AUTOMOBILE) == "a5"  # the same text: the earlier one
    assert nearest_whole(index, ["not-indexed"], AUTOMOBILE) is None
    index.close()


def test_the_nearest_hits_session_rises_within_reach_and_other_sessions_keep_their_scores(tmp_path: Path):
    _two_sessions(tmp_path)
    index = concept_index(tmp_path)
    ranked = [_Hit(_Memory("b1"), 1.0), _Hit(_Memory("b3"), 0.8), _Hit(_Memory("a5"), 0.8), _Hit(_Memory("a1"), 0.7)]
    lifted = {h.memory.id: h.final for h in lift_conversation(index, ranked, AUTOMOBILE, reach=4, lift=0.1)}
    assert lifted == {"b1": 1.0, "b3": 0.8, "a5": 0.8 * 1.1, "a1": 0.7 * 1.1}
    assert lift_conversation(index, ranked, AUTOMOBILE, reach=3, lift=0.1)[2].final == 0.8  # a5 is four turns on
    assert lift_conversation(index, ranked, AUTOMOBILE, reach=4, lift=0.0) == ranked
    assert lift_conversation(index, ranked, None, reach=4, lift=0.1) == ranked  # keyword mode: no query vector
    # Only the strongest `pool` hits are looked at: with one, b1 is the nearest, and its session rises.
    assert [h.final for h in lift_conversation(index, ranked, AUTOMOBILE, reach=4, lift=0.1, pool=1)] == [1.1, 0.8 * 1.1, 0.8, 0.7]
    index.close()


def test_in_a_search_a_turn_far_from_the_match_passes_the_same_words_in_a_session_about_something_else(tmp_path: Path):
    _two_sessions(tmp_path)
    index = concept_index(tmp_path)
    question = SearchRequest(query="automobile")
    off = {h.memory.id: h for h in searcher(index, thread_lift=0.0, conversation_lift=0.0).search(question)}
    hits = searcher(index, thread_lift=0.0).search(question)
    on = {h.memory.id: h for h in hits}
    assert off["a5"].final == off["b3"].final  # without the lift the two are tied
    assert ids(hits).index("a5") < ids(hits).index("b3")
    assert on["a5"].explain["conversation_factor"] > 1.0 and "conversation_factor" not in on["b3"].explain
    index.close()


def test_with_the_real_model_a_list_item_in_the_session_nearest_the_question_passes_the_best_hits_neighbour(tmp_path: Path):
    from indexer.embed import make_embedder
    from indexer.index import Index
    from indexer.search import Searcher
    from indexer.settings import SearchSettings
    from vault import Vault

    turns = [("c1", "Dana", "We spent the whole weekend camping by the lake with the kids.", None),
             ("c2", "Lee", "That sounds lovely, how was the weather?", "c1"),
             ("c3", "Dana", "Sunny, we swam every morning.", "c2"),
             ("c4", "Lee", "Did the kids sleep well in the tent?", "c3"),
             ("c5", "Dana", "They did! We also roasted marshmallows and told stories by the fire.", "c4"),
             ("d1", "Dana", "My weekend was busy with work, no family time at all.", None),
             ("d2", "Lee", "Too bad.", "d1"),
             ("d3", "Dana", "The neighbours roasted marshmallows and told stories by their fire.", "d2")]
    for memory_id, who, text, previous in turns:
        extra = f"speaker: {who}\n" + (f"previous: {previous}\n" if previous else "")
        write(tmp_path, f"history/{memory_id}.md", memory_text(memory_id, f"{who}, 1 May", f"{who}: {text}", extra=extra))
    index = Index.open(Vault(tmp_path), make_embedder("all-MiniLM-L6-v2"))
    question = SearchRequest(query="What activities did Dana enjoy with her family?")
    # The keyword channel is heard however little of the question it covers ("family" of "activities ... enjoy ...
    # family"): with keyword_question_low's default it counts for nothing here and the camping weekend leads at once.
    # The lift's own effect, on the hand-made order it was tuned on (the learned order alone puts the swim higher).
    heard = SearchSettings(keyword_question_low=0.0, learned_order=False)
    assert ids(Searcher(index, SearchSettings()).search(question))[0] == "c1"
    off = ids(Searcher(index, replace(heard, conversation_lift=0.0)).search(question))
    hits = Searcher(index, heard).search(question)
    on = ids(hits)
    # "family time" matches best by words, and the thread lifts its session's third turn with it ...
    assert off[0] == on[0] == "d1" and off.index("d3") < off.index("c3")
    # ... but the camping weekend is nearest the question as a whole, and its swim passes the neighbours' fire.
    assert on.index("c3") < on.index("d3")
    assert "conversation_factor" in hits[on.index("c3")].explain and "conversation_factor" not in hits[on.index("d3")].explain
    index.close()
