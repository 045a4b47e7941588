from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import frontmatter as fm

SAMPLE = (
    "---\n"
    "id: m-7f3a9c2e   # stable; never reused\n"
    "collection: patterns\n"
    'title: "JWT refresh: fixes"\n'
    "tags:\n"
    "- auth\n"
    "- jwt\n"
    "# a comment line between keys\n"
    "created_at: 2026-11-20T14:03:11Z\n"
    "score: 0.72\n"
    "uses: 8\n"
    "outcomes: [worked, worked, partial, failed]\n"
    'related: "[[auth-service]]"\n'
    "version: 1.10\n"
    "flag: yes\n"
    "empty:\n"
    "---\n"
    "Body with [[links]] and trailing spaces   \n"
    "no final newline"
)


def test_split_and_join_give_back_every_character():
    for text in (SAMPLE, "\ufeff" + SAMPLE, SAMPLE.replace("\n", "\r\n"), "no frontmatter\n", "---\n---\n", ""):
        assert fm.split(text).text() == text


def test_unclosed_frontmatter_is_an_error_on_line_one():
    with pytest.raises(fm.FrontmatterError) as caught:
        fm.split("---\ntitle: x\nbody\n")
    assert caught.value.line == 1


def test_changing_one_key_changes_only_its_line():
    doc = fm.split(SAMPLE)
    patched = fm.patch(doc.frontmatter, {"uses": 9})
    before, after = doc.frontmatter.splitlines(), patched.splitlines()
    assert len(before) == len(after)
    assert [(b, a) for b, a in zip(before, after) if b != a] == [("uses: 8", "uses: 9")]


def test_comments_quotes_flow_lists_and_links_survive_a_patch():
    doc = fm.split(SAMPLE)
    patched = fm.patch(doc.frontmatter, {"score": 0.8, "outcomes": ["worked", "partial", "failed", "worked"]})
    assert "id: m-7f3a9c2e   # stable; never reused" in patched
    assert 'title: "JWT refresh: fixes"' in patched
    assert "outcomes: [worked, partial, failed, worked]" in patched
    assert 'related: "[[auth-service]]"' in patched
    assert "version: 1.10" in patched and "flag: yes" in patched
    assert "# a comment line between keys" in patched


def test_a_trailing_comment_on_a_changed_key_is_kept():
    patched = fm.patch("score: 0.81   # bumped after review\n", {"score": 0.9})
    assert patched.startswith("score: 0.9") and "# bumped after review" in patched


def test_block_lists_keep_their_indentation_when_changed():
    patched = fm.patch("tags:\n  - a\n  - b\nuses: 1\n", {"tags": ["a", "b", "c"]})
    assert patched == "tags:\n  - a\n  - b\n  - c\nuses: 1\n"


def test_new_keys_are_appended_and_timestamps_use_iso_with_t_and_z():
    moment = datetime(2026, 11, 21, 9, 12, tzinfo=timezone.utc)
    patched = fm.patch("a: 1\n", {"last_used_at": moment, "outcomes": ["worked"]})
    assert patched == "a: 1\nlast_used_at: 2026-11-21T09:12:00Z\noutcomes: [worked]\n"


def test_crlf_frontmatter_stays_crlf():
    doc = fm.split(SAMPLE.replace("\n", "\r\n"))
    patched = fm.patch(doc.frontmatter, {"uses": 9, "new_key": "x"}, newline=doc.newline)
    assert "\n" not in patched.replace("\r\n", "")


def test_strings_that_yaml_would_retype_are_quoted():
    patched = fm.patch("a: 1\n", {"title": "yes", "code": "0042", "when": "2026-01-01"})
    assert 'title: "yes"' in patched and 'code: "0042"' in patched and 'when: "2026-01-01"' in patched
    loaded = fm.load(patched)
    assert loaded.data["title"] == "yes" and loaded.data["code"] == "0042"


def test_removing_a_key_removes_only_its_lines():
    assert fm.patch("a: 1\nb:\n  - x\n  - y\nc: 3\n", {}, removals=("b",)) == "a: 1\nc: 3\n"


def test_flow_style_mappings_fall_back_to_a_whole_block_rewrite_that_still_parses():
    patched = fm.patch("{a: 1, b: [x, y]}\n", {"b": ["z"]})
    assert fm.load(patched).data == {"a": 1, "b": ["z"]}


def test_load_reports_the_file_line_of_a_yaml_error():
    with pytest.raises(fm.FrontmatterError) as caught:
        fm.load("a: 1\nb: [unclosed\nc: 3\n")
    assert caught.value.line >= 3


@pytest.mark.parametrize(
    "text, reason",
    [
        ("a: &x 1\nb: *x\n", "aliases"),
        ("a: !!python/object:os.system x\n", "tag"),
        ("a: !custom x\n", "tag"),
        ("a: 1\na: 2\n", "duplicate key 'a'"),
        ("base: &b {x: 1}\nother:\n  <<: *b\n", "merge keys"),
        ("- just\n- a list\n", "mapping"),
        ("a: " + "[" * 40 + "]" * 40 + "\n", "nested"),
    ],
)
def test_load_refuses_unsafe_or_ambiguous_yaml(text, reason):
    with pytest.raises(fm.FrontmatterError) as caught:
        fm.load(text)
    assert reason in caught.value.reason


@pytest.mark.timeout(10)
def test_an_alias_bomb_is_refused_without_expanding_it():
    levels = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        levels.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    bomb = "\n".join(levels) + "\n"
    started = time.perf_counter()
    with pytest.raises(fm.FrontmatterError, match="aliases"):
        fm.load(bomb)
    assert time.perf_counter() - started < 1.0  # 9**9 leaves would take minutes and gigabytes


def test_oversized_frontmatter_is_refused():
    with pytest.raises(fm.FrontmatterError, match="limit"):
        fm.load("a: " + "x" * (fm.MAX_FRONTMATTER_CHARS + 1) + "\n")


keys = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
scalars = st.one_of(
    st.integers(-1000, 1000),
    st.booleans(),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30),
    st.floats(0, 1, allow_nan=False).map(lambda x: round(x, 4)),
)
values = st.one_of(scalars, st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=10), max_size=4))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(keys, values, max_size=6), st.dictionaries(keys, values, max_size=4))
def test_patching_never_disturbs_other_keys_and_always_reads_back_what_was_set(original, updates):
    base = fm.patch("", original)
    patched = fm.patch(base, updates)
    loaded = fm.load(patched).data
    for key, value in updates.items():
        assert loaded[key] == (list(value) if isinstance(value, (list, tuple)) else value)
    for key, value in original.items():
        if key not in updates:
            assert loaded[key] == fm.load(base).data[key]


def test_a_list_that_starts_empty_stays_on_one_line_when_it_gets_items():
    created = fm.render_new({"id": "m-1", "outcomes": [], "tags": [], "uses": 0}, "body\n")
    before = fm.split(created).frontmatter
    assert "outcomes: []\n" in before
    scored = fm.patch(before, {"outcomes": ["worked"], "uses": 1, "tags": ["celery", "retries"]})
    changed = [line for line in scored.splitlines() if line not in before.splitlines()]
    assert changed == ["outcomes: [worked]", "tags: [celery, retries]", "uses: 1"]
    assert fm.load(scored).data["outcomes"] == ["worked"]
