"""A query naming whose memories it asks about (indexer/people.py): the name is a field, not meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.people import People, authors
from indexer.search import SearchRequest
from tests.conftest import memory_text, write
from tests.indexer.test_search import ConceptEmbedder, concept_index, ids, searcher
from vault.model import Memory


def _memory(memory_id: str, **frontmatter) -> Memory:
    return Memory(id=memory_id, path=f"history/{memory_id}.md", collection="history", type="history", title=memory_id,
                  body="", frontmatter=frontmatter)


def test_a_memory_says_who_wrote_it_by_its_speaker_or_author_field():
    assert authors(_memory("a", speaker="Dana")) == {"Dana"}
    assert authors(_memory("b", author=["Lee", "Dana "])) == {"Lee", "Dana"}
    assert authors(_memory("c", speaker=3)) == frozenset() and authors(_memory("d")) == frozenset()


def test_the_name_and_its_possessive_leave_the_text_the_vector_channel_embeds():
    named = People().named("What are Melanie's pets called, and where did Melanie camp?",
                           frozenset({"Melanie", "Mel", "Caroline"}))
    assert named.people == {"Melanie"}
    assert named.embedded == "What are pets called, and where did camp?"


def test_names_match_as_written_so_a_common_word_is_not_a_person():
    people = People()
    assert not people.named("what will break if we ship", frozenset({"Will"})).people
    assert people.named("what did Will break", frozenset({"Will"})).people == {"Will"}


def test_a_query_that_is_only_a_name_or_names_nobody_known_is_left_as_it_is():
    people = People()
    assert not people.named("Dana", frozenset({"Dana"})).people
    assert not people.named("what did Lee say", frozenset({"Dana"})).people


def test_the_authors_names_follow_every_memory_written_edited_or_deleted(tmp_path: Path):
    write(tmp_path, "history/dana.md", memory_text("m-dana", "Deploy", "the deploy broke", extra="speaker: Dana\n"))
    index = concept_index(tmp_path)
    names = index.author_names()
    assert names == {"Dana"} and index.author_names() is names, "kept, not made again, while nothing changes"
    for body, extra, expected in [
        ("Lee moved the queue", "speaker: Lee\n", {"Dana", "Lee"}),  # a memory written
        ("the queue moved, said Lee", "speaker: Lee\nuses: 2\n", {"Dana", "Lee"}),  # edited
        ("the queue moved", "author: Sam\n", {"Dana", "Sam"}),  # its author changed
        ("the queue moved", "", {"Dana"}),  # nobody named any more
    ]:
        write(tmp_path, "history/lee.md", memory_text("m-lee", "Queue", body, extra=extra))
        index.sync()
        assert index.author_names() == expected, body
    write(tmp_path, "history/lee.md", memory_text("m-lee", "Queue", "Lee again", extra="speaker: Lee\n"))
    index.sync()
    (tmp_path / "history" / "dana.md").unlink()
    index.sync()
    assert index.author_names() == {"Lee"}, "a memory deleted"
    index.close()


class RecordingEmbedder(ConceptEmbedder):
    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed_query(self, text):
        self.queries.append(text)
        return super().embed_query(text)


def _two_speakers(root: Path) -> None:
    # Same words, same meaning: only the speaker field tells them apart (ties go to the larger id).
    write(root, "history/a.md", memory_text("m-a", "Morning", "espresso every morning", extra="speaker: Dana\n"))
    write(root, "history/b.md", memory_text("m-b", "Morning", "espresso every morning", extra="speaker: Lee\n"))


def test_the_person_a_query_names_has_their_memory_ranked_first(tmp_path: Path):
    _two_speakers(tmp_path)
    index = concept_index(tmp_path)
    assert ids(searcher(index, author_boost=0.0).search(SearchRequest(query="what coffee does Dana drink")))[0] == "m-b"
    hits = searcher(index).search(SearchRequest(query="what coffee does Dana drink"))
    assert ids(hits)[0] == "m-a" and hits[0].explain["author_factor"] > 1.0
    index.close()


def test_the_vector_channel_embeds_the_query_without_the_name_and_unchanged_when_off(tmp_path: Path):
    from indexer.index import Index
    from vault import Vault

    _two_speakers(tmp_path)
    embedder = RecordingEmbedder()
    index = Index.open(Vault(tmp_path), embedder)
    searcher(index).search(SearchRequest(query="what coffee does Dana drink"))
    searcher(index, author_boost=0.0).search(SearchRequest(query="what coffee does Dana drink"))
    assert embedder.queries == ["what coffee does drink", "what coffee does Dana drink"]
    index.close()


def test_a_vault_without_authors_searches_as_before(tmp_path: Path):
    write(tmp_path, "history/a.md", memory_text("m-a", "Coffee", "espresso every morning, says Dana"))
    embedder = RecordingEmbedder()
    from indexer.index import Index
    from vault import Vault

    index = Index.open(Vault(tmp_path), embedder)
    hits = searcher(index).search(SearchRequest(query="what coffee does Dana drink"))
    assert ids(hits) == ["m-a"] and hits[0].explain["author_factor"] == 1.0
    assert embedder.queries == ["what coffee does Dana drink"]
    index.close()


def test_the_learned_order_counts_the_named_persons_lift_once(tmp_path: Path):
    _two_speakers(tmp_path)
    index = concept_index(tmp_path)
    request = SearchRequest(query="espresso every morning Dana")  # its words cover it: the learned order says nothing
    hand = {h.memory.id: h.final for h in searcher(index, learned_order=False).search(request)}
    learned = {h.memory.id: h.final for h in searcher(index, learned_order=True).search(request)}
    assert learned == pytest.approx(hand)
    index.close()


def test_the_standing_facts_follow_every_memory_marked_unmarked_or_deleted(tmp_path: Path):
    write(tmp_path, "memory_bank/a.md", memory_text("m-a", "Push", "never force-push main", collection="memory_bank",
                                                    type="constraint", extra="always_inject: true\n"))
    write(tmp_path, "memory_bank/b.md", memory_text("m-b", "Style", "ruff formats the code", collection="memory_bank",
                                                    type="preference"))
    index = concept_index(tmp_path)
    assert index.standing_ids() == {"m-a"}
    for extra, expected in [("always_inject: true\n", {"m-a", "m-b"}),  # marked
                            ("always_inject: true\nuses: 2\n", {"m-a", "m-b"}),  # edited, still marked
                            ("always_inject: false\n", {"m-a"}),  # unmarked
                            ("", {"m-a"})]:
        write(tmp_path, "memory_bank/b.md", memory_text("m-b", "Style", "ruff formats the code",
                                                        collection="memory_bank", type="preference", extra=extra))
        index.sync()
        assert index.standing_ids() == expected, extra
        assert expected == {m.id for m in index.all_memories() if m.always_inject}, "as a scan of every memory finds"
    (tmp_path / "memory_bank" / "a.md").unlink()
    index.sync()
    assert index.standing_ids() == frozenset(), "a memory deleted"
    index.close()


def test_a_body_that_says_always_inject_is_not_a_standing_fact(tmp_path: Path):
    write(tmp_path, "patterns/a.md", memory_text("m-a", "Flags", 'set "always_inject": true in the frontmatter'))
    index = concept_index(tmp_path)
    assert index.standing_ids() == frozenset()
    index.close()


def test_the_private_marks_follow_every_memory_marked_unmarked_or_deleted(tmp_path: Path):
    write(tmp_path, "history/a.md", memory_text("m-a", "Move", "relocating next month", extra="privacy: private\n"))
    write(tmp_path, "history/b.md", memory_text("m-b", "Queue", "the queue moved"))
    index = concept_index(tmp_path)
    assert index.private_ids() == {"m-a"}
    for extra, expected in [("privacy: private\n", {"m-a", "m-b"}), ("privacy: shared\n", {"m-a"}), ("", {"m-a"})]:
        write(tmp_path, "history/b.md", memory_text("m-b", "Queue", "the queue moved", extra=extra))
        index.sync()
        assert index.private_ids() == expected == {m.id for m in index.all_memories() if m.privacy == "private"}
    (tmp_path / "history" / "a.md").unlink()
    index.sync()
    assert index.private_ids() == frozenset()
    index.close()
