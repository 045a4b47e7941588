"""Wikilink parsing: every Obsidian form, code skipped, and relations typed by the prose before a link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.links import Link, frontmatter_links, links_in_string, parse_links
from vault import Vault

EXAMPLE_VAULT = Path(__file__).resolve().parents[2] / ".memories-example"


def only(text: str) -> Link:
    links = parse_links(text)
    assert len(links) == 1, links
    return links[0]


# -- link forms ---------------------------------------------------------------------------


def test_a_plain_link_names_its_target_and_nothing_else():
    link = only("See [[auth-service]] first.")
    parts = (link.target, link.heading, link.block, link.display, link.embed)
    assert parts == ("auth-service", None, None, None, False)


def test_a_link_with_the_md_extension_keeps_it_in_the_target():
    assert only("[[decimal-for-money.md]]").target == "decimal-for-money.md"


def test_a_link_with_a_folder_keeps_the_folder_in_the_target():
    assert only("[[memory_bank/python-311-only]]").target == "memory_bank/python-311-only"


def test_a_link_with_an_alias_separates_target_and_display_text():
    link = only("Owner: [[dana-okafor-profile|Dana]].")
    assert (link.target, link.display) == ("dana-okafor-profile", "Dana")


def test_a_heading_link_keeps_the_heading():
    link = only("[[tidewater-operations-runbook#Deploying]]")
    assert (link.target, link.heading, link.block) == ("tidewater-operations-runbook", "Deploying", None)


def test_a_nested_heading_link_keeps_the_whole_heading_path():
    assert only("[[runbook#Deploying#Rolling back]]").heading == "Deploying#Rolling back"


def test_a_block_link_keeps_the_block_id_without_its_caret():
    link = only("[[timezone-bug-statement-dates#^tz-rule]]")
    assert (link.target, link.heading, link.block) == ("timezone-bug-statement-dates", None, "tz-rule")


def test_a_heading_link_with_display_text_keeps_both():
    link = only("[[ledger-schema-reference#Constraints and indexes|the schema constraints]]")
    assert (link.target, link.heading, link.display) == (
        "ledger-schema-reference",
        "Constraints and indexes",
        "the schema constraints",
    )


def test_a_same_note_heading_link_has_an_empty_target():
    link = only("Quick links: [[#Deploying]]")
    assert (link.target, link.heading) == ("", "Deploying")


def test_a_same_note_block_link_has_an_empty_target():
    link = only("As above: [[#^balanced-entries]]")
    assert (link.target, link.block) == ("", "balanced-entries")


def test_an_embed_is_marked_and_typed_as_an_embed():
    link = only("Steps:\n![[ledger-v2-migration-plan]]")
    assert (link.target, link.embed, link.relation) == ("ledger-v2-migration-plan", True, "embeds")


def test_an_image_embed_keeps_its_extension_and_its_size():
    link = only("![[architecture-diagram.png|100x145]]")
    assert (link.target, link.display, link.embed) == ("architecture-diagram.png", "100x145", True)


def test_an_embed_with_a_page_fragment_keeps_the_fragment_as_its_heading():
    link = only("![[statement.pdf#page=3]]")
    assert (link.target, link.heading, link.embed) == ("statement.pdf", "page=3", True)


def test_a_link_inside_a_table_with_an_escaped_bar_separates_target_and_display():
    link = only("| date | see [[timezone-bug-statement-dates\\|the BST bug]] |")
    assert (link.target, link.display) == ("timezone-bug-statement-dates", "the BST bug")


def test_spaces_around_the_parts_of_a_link_are_trimmed():
    link = only("[[ ledger-glossary # Posting | posting ]]")
    assert (link.target, link.heading, link.display) == ("ledger-glossary", "Posting", "posting")


def test_empty_or_unclosed_brackets_are_not_links():
    assert parse_links("[[]] and [[ ]] and [[|x]] and [[open and [[x\ny]] and [x]") == []


def test_links_are_returned_in_the_order_they_appear():
    text = "[[a]] then ![[b]] then [[c#H]] then [[#Top]]"
    assert [link.target for link in parse_links(text)] == ["a", "b", "c", ""]


def test_start_is_the_offset_of_the_link_and_of_the_bang_for_an_embed():
    text = "ab [[x]] cd ![[y]]"
    assert [link.start for link in parse_links(text)] == [3, 12]
    assert text[12:18] == "![[y]]"


def test_the_context_holds_the_words_around_a_link_with_whitespace_collapsed():
    text = "First line.\n\n   The   fix   lives in [[parser]]   and\n\tis tested.\n" + "x" * 200
    context = only(text).context
    assert context.startswith("First line. The fix lives in [[parser]] and is tested.")
    assert "  " not in context and "\n" not in context
    assert len(context) <= 60 + len("[[parser]]") + 60


# -- code is not prose --------------------------------------------------------------------


def test_links_inside_backtick_fenced_code_blocks_are_ignored():
    text = "Before [[a]].\n```python\nx = '[[not-a-link]]'\n```\nAfter [[b]]."
    assert [link.target for link in parse_links(text)] == ["a", "b"]


def test_links_inside_tilde_fenced_code_blocks_are_ignored():
    text = "~~~\n[[not-a-link]]\n~~~\n[[b]]"
    assert [link.target for link in parse_links(text)] == ["b"]


def test_a_fence_closes_only_with_the_same_character_and_at_least_its_length():
    text = "````\n```\n[[inside]]\n~~~~\n````\n[[outside]]"
    assert [link.target for link in parse_links(text)] == ["outside"]


def test_an_unclosed_fence_runs_to_the_end_of_the_text():
    assert [link.target for link in parse_links("[[a]]\n```\n[[b]]\n[[c]]")] == ["a"]


def test_a_fenced_block_inside_a_list_item_or_a_quote_is_ignored():
    text = "- step\n  ```\n  [[in-list]]\n  ```\n> ```\n> [[in-quote]]\n> ```\n[[after]]"
    assert [link.target for link in parse_links(text)] == ["after"]


def test_links_inside_inline_code_spans_are_ignored():
    text = "Write `[[name]]` or ``a ` [[tricky]]`` to link, like [[real]]."
    assert [link.target for link in parse_links(text)] == ["real"]


def test_a_lone_backtick_does_not_hide_the_links_after_it():
    assert [link.target for link in parse_links("A stray ` here, then [[a]] and [[b]].")] == ["a", "b"]


def test_a_code_span_does_not_reach_across_a_blank_line():
    text = "An open ` tick\n\nthen [[a]] and a ` close."
    assert [link.target for link in parse_links(text)] == ["a"]


def test_fences_are_found_in_files_with_windows_line_endings():
    text = "a\r\n```\r\n[[inside]]\r\n```\r\n[[outside]]\r\n"
    assert [link.target for link in parse_links(text)] == ["outside"]


def test_offsets_are_those_of_the_original_text_even_after_code():
    text = "```\ncode\n```\n`x` [[a]]"
    assert text[only(text).start :].startswith("[[a]]")


# -- relation typing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phrase", "relation"),
    [
        ("supersedes", "supersedes"),
        ("replaces", "supersedes"),
        ("depends on", "depends_on"),
        ("requires", "depends_on"),
        ("contradicts", "contradicts"),
        ("disagrees with", "contradicts"),
        ("conflicts with", "contradicts"),
    ],
)
def test_a_relation_phrase_before_a_link_types_it(phrase: str, relation: str):
    assert only(f"This {phrase} [[other]].").relation == relation


@pytest.mark.parametrize("text", ["Dana updates [[other]] monthly.", "The import needs [[other]] less now."])
def test_everyday_verbs_do_not_type_a_relation(text: str):
    assert only(text).relation == "links_to"


def test_a_link_with_no_relation_phrase_links_to_its_target():
    assert only("See [[other]] for details.").relation == "links_to"


def test_relation_phrases_are_matched_regardless_of_case_and_spacing():
    assert only("It DEPENDS\tOn [[a]]").relation == "depends_on"
    assert only("Disagrees  With [[a]]").relation == "contradicts"


def test_relation_phrases_must_be_whole_words():
    assert only("The requirements kneeds, dependson [[a]]").relation == "links_to"
    assert only("unreplaces and prerequires [[a]]").relation == "links_to"


def test_depends_on_types_every_link_that_follows_in_the_sentence():
    links = parse_links("This depends on [[a]] and [[b]].")
    assert [(link.target, link.relation) for link in links] == [("a", "depends_on"), ("b", "depends_on")]


def test_the_last_relation_phrase_before_a_link_wins():
    links = parse_links("This replaces [[old]] but depends on [[base]] and contradicts [[rival]].")
    assert [link.relation for link in links] == ["supersedes", "depends_on", "contradicts"]
    assert only("It supersedes nothing; well, it requires and then replaces [[x]]").relation == "supersedes"


@pytest.mark.parametrize("end", [". ", "! ", "? ", "; ", "\n", ".\n", ";"])
def test_a_relation_phrase_does_not_reach_past_the_end_of_its_sentence(end: str):
    links = parse_links(f"This replaces [[a]]{end}See [[b]]")
    assert [link.relation for link in links] == ["supersedes", "links_to"]


def test_a_dot_inside_a_name_or_number_does_not_end_the_sentence():
    assert only("This replaces v1.2 and parser.py with [[v2]]").relation == "supersedes"


def test_a_supersession_phrase_after_a_link_does_not_type_it():
    assert only("[[a]] replaces the old flow").relation == "links_to"
    assert only("[[a]] supersedes it").relation == "links_to"


def test_relation_words_inside_code_or_inside_other_links_do_not_type_a_link():
    assert only("Run `pip needs x` then [[a]]").relation == "links_to"
    links = parse_links("See [[requires-python|replaces]] and [[b]]")
    assert [link.relation for link in links] == ["links_to", "links_to"]


def test_letters_that_case_fold_to_ascii_type_a_link_instead_of_failing():
    # Python's case-insensitive matching lets the long s "ſ" stand for "s".
    assert only("It needs nothing and ſupersedes [[x]]").relation == "supersedes"


def test_an_embed_after_a_relation_phrase_takes_that_relation_and_stays_an_embed():
    link = only("This supersedes ![[old-diagram.png]]")
    assert (link.relation, link.embed) == ("supersedes", True)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("[]!#|^`~ \n\r.;aXſ-/\\"), max_size=80))
def test_any_text_parses_into_links_that_start_where_a_link_is_written(text: str):
    for link in parse_links(text):
        assert text.startswith("![[" if link.embed else "[[", link.start)
        assert "\n" not in link.target and "[" not in link.target and "]" not in link.target
        assert link.relation in ("links_to", "embeds", "supersedes", "depends_on", "contradicts")


# -- frontmatter --------------------------------------------------------------------------


def test_frontmatter_links_come_from_quoted_link_strings_and_lists_of_them():
    assert frontmatter_links("[[job-locking-v2]]") == ["job-locking-v2"]
    assert frontmatter_links(["[[a]]", "plain text", "[[b#Heading|shown]] and [[c]]"]) == ["a", "b", "c"]


def test_frontmatter_values_without_quoted_links_give_no_links():
    # Unquoted [[x]] is YAML for a nested list: Obsidian does not see a link there either.
    assert frontmatter_links([["x"]]) == []
    assert frontmatter_links(None) == []
    assert frontmatter_links(42) == []
    assert frontmatter_links({"nested": "[[x]]"}) == []
    assert frontmatter_links("[[#Heading]]") == []


def test_links_in_a_string_keep_their_heading_block_and_display():
    assert links_in_string('"[[a#^blk|shown]]"') == [("a", None, "blk", "shown")]


# -- the example vault --------------------------------------------------------------------


def test_every_link_in_the_example_vault_is_found_with_its_relation_and_no_more():
    memories = Vault(EXAMPLE_VAULT).scan().memories
    naive = re.compile(r"!?\[\[[^\]]+\]\]")
    for memory in memories:
        # The example vault keeps no links inside code, so a naive count is the right count.
        assert len(parse_links(memory.body)) == len(naive.findall(memory.body)), memory.path
    relations = {
        (memory.path, link.target): link.relation for memory in memories for link in parse_links(memory.body)
    }
    assert relations["history/keep-migration-commits-unsquashed.md", "prefer-squash-merges"] == "contradicts"
    assert relations["patterns/job-locking-v2-redis-lock-extend.md", "job-locking-v1-redis-setnx"] == "supersedes"
    assert relations["history/fx-rates-from-ecb.md", "decimal-for-money"] == "depends_on"
    assert relations["history/fx-rates-from-ecb.md", "ship-multi-currency-by-december"] == "links_to"
    assert relations["memory_bank/tidewater-project-context.md", "architecture-diagram.png"] == "embeds"


# -- seed 004 relations -------------------------------------------------------------------


def test_a_memory_prefixed_link_names_the_memory_after_the_prefix():
    assert only("See [[memory:m-1a2b3c4d]] first.").target == "m-1a2b3c4d"
    assert only("See [[Memory: auth-plan|the plan]].").target == "auth-plan"


@pytest.mark.parametrize("text, relation", [
    ("See [[jwt-research]], which this depends on.", "depends_on"),
    ("The old note [[session-auth]] contradicts what we measured.", "contradicts"),
    ("Derived from [[incident-14-nov]].", "derives_from"),
    ("These numbers are based on [[load-test-oct]].", "derives_from"),
    ("[[v2]] replaces it.", "links_to"),  # read after a link, supersession would hide the newer memory
    ("[[jwt-research]] was useful. This depends on nothing else.", "links_to"),  # another sentence
])
def test_a_relation_phrase_after_a_link_types_it_except_supersession(text: str, relation: str):
    assert only(text).relation == relation


def test_a_text_with_more_links_than_the_budget_is_read_up_to_the_last_link_the_budget_allows():
    from indexer.links import MAX_LINKS, within_link_budget

    text = " ".join(f"[[t-{i}]]" for i in range(MAX_LINKS + 50)) + " tail"
    cut = within_link_budget(text)
    assert cut.endswith(f"[[t-{MAX_LINKS - 1}]]") and "tail" not in cut
    links = parse_links(text)
    assert len(links) == MAX_LINKS and links[-1].target == f"t-{MAX_LINKS - 1}"
    small = "see [[a]] and [[b]] then more"
    assert within_link_budget(small) == small


def test_many_links_on_one_line_are_typed_like_the_same_links_one_per_sentence():
    """The typing looks each link's sentence up in one pass over the text (it used to rescan the line
    from its start for every link); the result must be what a link-by-link reading gives."""
    line = " ".join(f"Then [[t-{i}]] depends on [[u-{i}]]." if i % 3 == 0 else f"See [[t-{i}]]." for i in range(300))
    typed = {(link.target, link.relation) for link in parse_links(line) if link.relation != "links_to"}
    assert typed == {(f"{side}-{i}", "depends_on") for i in range(0, 300, 3) for side in "tu"}
