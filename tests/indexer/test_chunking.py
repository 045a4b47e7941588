from __future__ import annotations

from types import MappingProxyType

import pytest

from indexer.chunking import (
    MAX_SENTENCE_UNITS,
    NEXT,
    PREVIOUS,
    SENTENCE,
    WHOLE,
    Neighbours,
    chunks_for,
    previous_key,
    sentence_groups,
)
from vault.model import Memory


def memory(body: str, *, collection: str = "history", previous: object = None, memory_id: str = "m-0000000a") -> Memory:
    frontmatter = {"previous": previous} if previous is not None else {}
    return Memory(id=memory_id, path=f"{collection}/{memory_id}.md", collection=collection, type="history",
                  title="Caroline, 8 May 2023", body=body, frontmatter=MappingProxyType(frontmatter))


def roles(chunk) -> list[str]:
    return [unit.role for unit in chunk.units]


def test_a_short_memory_is_embedded_whole_and_by_sentence_and_each_sentence_keeps_its_speaker():
    [chunk] = chunks_for(memory("Caroline: I went to a support group yesterday. It was powerful! [shares a photo]"))
    assert roles(chunk) == [WHOLE, SENTENCE, SENTENCE, SENTENCE]
    assert chunk.units[0].text == "Caroline, 8 May 2023\n" + chunk.text
    assert [u.text for u in chunk.units[1:]] == ["Caroline: I went to a support group yesterday.",
                                                  "Caroline: It was powerful!", "Caroline: [shares a photo]"]


def test_a_memory_of_one_sentence_has_only_its_whole_unit():
    [chunk] = chunks_for(memory("Dana prefers uv over pip for every project."))
    assert roles(chunk) == [WHOLE]


def test_fragments_join_the_sentence_before_and_code_fences_are_not_sentences():
    text = "Why:\nRetries multiply side effects. Thanks!\n```python\ntotal = sum(amounts)\n```"
    assert sentence_groups(text) == ["Why: Retries multiply side effects. Thanks!", "total = sum(amounts)"]


def test_more_sentences_than_units_are_merged_in_order_into_the_unit_budget():
    sentences = [f"Sentence number {i} is long enough." for i in range(20)]
    groups = sentence_groups(" ".join(sentences))
    assert len(groups) == MAX_SENTENCE_UNITS and " ".join(groups) == " ".join(sentences)


def test_neighbours_add_previous_and_next_units_and_a_context_for_the_keyword_index():
    [chunk] = chunks_for(memory("Melanie: A sunset over the lake."),
                         Neighbours(previous="Caroline: What did you paint?", next="Caroline: Lovely!"))
    assert roles(chunk) == [WHOLE, PREVIOUS, NEXT]
    assert chunk.units[1].text == "Caroline, 8 May 2023\nCaroline: What did you paint?\nMelanie: A sunset over the lake."
    assert chunk.units[2].text == "Caroline, 8 May 2023\nMelanie: A sunset over the lake.\nCaroline: Lovely!"
    assert chunk.context == "Caroline: What did you paint?\nCaroline: Lovely!"


def test_a_long_document_keeps_one_unit_per_section_and_takes_no_neighbours():
    body = "\n".join(f"# Part {i}\n" + "A sentence that fills the section. " * 20 for i in range(3))
    chunks = chunks_for(memory(body, collection="books"), Neighbours("before", "after"))
    assert len(chunks) == 3 and all(roles(c) == [WHOLE] and c.context == "" for c in chunks)


def test_a_heading_with_no_text_of_its_own_is_no_chunk_and_lives_on_in_its_subsections_paths():
    body = "# Runbook\n\n## Deploying\n\n### Normal deploy\n\nMerge, then watch the release.\n\n### Rollback\n\nRedeploy the image."
    chunks = chunks_for(memory(body, collection="books"))
    assert [c.heading for c in chunks] == ["Runbook > Deploying > Normal deploy", "Runbook > Deploying > Rollback"]
    assert all(c.text for c in chunks)


def test_a_section_is_embedded_under_its_own_heading_path_and_the_text_before_any_under_the_books_title():
    body = "Read me first.\n\n# Caroline, 8 May 2023\n\nIntro.\n\n## Deploying\n\n### Rollback\n\nRedeploy the image."
    whole = {c.heading: c.units[0].text for c in chunks_for(memory(body, collection="books"))}
    assert whole == {"": "Caroline, 8 May 2023\nRead me first.",
                     "Caroline, 8 May 2023": "Caroline, 8 May 2023\nIntro.",
                     "Caroline, 8 May 2023 > Deploying > Rollback": "Deploying > Rollback\nRedeploy the image."}


def test_a_document_of_headings_alone_is_still_one_chunk():
    [chunk] = chunks_for(memory("# Runbook\n\n## Deploying\n", collection="books"))
    assert chunk.heading == "" and roles(chunk) == [WHOLE]


def test_unit_ids_are_stable_and_distinct_by_memory_role_and_number():
    first = chunks_for(memory("One sentence here. Another sentence there."), Neighbours("a", "b"))[0]
    again = chunks_for(memory("One sentence here. Another sentence there."), Neighbours("a", "b"))[0]
    other = chunks_for(memory("One sentence here. Another sentence there.", memory_id="m-0000000b"))[0]
    ids = [u.unit_id for u in first.units]
    assert ids == [u.unit_id for u in again.units] and len(set(ids)) == len(ids)
    assert not set(ids) & {u.unit_id for u in other.units}


@pytest.mark.parametrize(
    "value, key",
    [("m-1234ABCD", "m-1234abcd"), ("[[m-1234abcd]]", "m-1234abcd"), ("[[m-1234abcd|the exchange before]]", "m-1234abcd"),
     ([["m-1234abcd"]], "m-1234abcd"), ("  ", None), (42, None), ("[[a]] and [[b]]", None)],
)
def test_previous_names_a_memory_by_id_or_by_a_quoted_link(value, key):
    assert previous_key(memory("text", previous=value)) == key


def test_a_memory_of_a_hundred_thousand_headings_is_read_by_a_bounded_number_of_chunks_every_word_kept():
    # 300,000 one-line headings (1.8 MB, under the file size limit) were 300,000 chunks: as many vectors to embed and
    # keyword documents to write, for one file.
    from indexer.chunking import MAX_CHUNK_CHARS, MAX_SECTIONS

    body = "".join(f"# heading {n}\nword{n}\n" for n in range(100_000))
    chunks = chunks_for(memory(body))
    assert len(chunks) <= MAX_SECTIONS + len(body) // (MAX_CHUNK_CHARS // 2)
    assert len(chunks) < 20_000
    text = "\n".join(chunk.text for chunk in chunks)
    assert all(f"word{n}" in text for n in (0, MAX_SECTIONS - 2, MAX_SECTIONS, 99_999))
    assert "heading 99999" in text and chunks[MAX_SECTIONS - 2].heading == f"heading {MAX_SECTIONS - 2}"
