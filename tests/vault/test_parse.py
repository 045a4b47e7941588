from __future__ import annotations

import pytest

from vault import ParseError, parse
from vault.ids import derived_id

GOOD = b"""---
id: m-0000abcd
collection: history
type: learning
title: Celery retries need idempotent tasks
tags: [celery, retries]
created_at: 2026-11-02T10:00:00Z
score: 0.6
uses: 3
success_count: 2.5
outcomes: [worked, partial, worked]
---
Body text.
"""


def test_a_valid_file_becomes_a_memory_with_every_field():
    memory = parse(GOOD, "history/celery.md")
    assert (memory.id, memory.collection, memory.type) == ("m-0000abcd", "history", "learning")
    assert memory.tags == ("celery", "retries")
    assert memory.created_at.isoformat() == "2026-11-02T10:00:00+00:00"
    assert (memory.score, memory.uses, memory.success_count) == (0.6, 3, 2.5)
    assert memory.outcomes == ("worked", "partial", "worked")
    assert memory.body == "Body text.\n" and memory.scored


def test_a_file_without_frontmatter_is_a_books_document_titled_by_its_first_heading():
    memory = parse(b"intro\n# Postgres cheatsheet\n\n## Vacuum\n", "books/pg.md")
    assert memory.collection == "books" and not memory.has_frontmatter
    assert memory.title == "Postgres cheatsheet" and not memory.scored


def test_a_file_without_id_gets_a_stable_id_derived_from_its_path():
    memory = parse(b"---\ntitle: note\n---\nx\n", "notes/Note.md")
    assert memory.id_derived and memory.id == derived_id("notes/Note.md") == derived_id("notes/note.md")


def test_bom_and_crlf_files_are_read():
    memory = parse(b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n"), "h.md")
    assert memory.id == "m-0000abcd" and memory.body == "Body text.\r\n"


def test_titles_are_read_as_written_not_as_yaml_11_booleans():
    assert parse(b"---\ntitle: yes\n---\n", "a.md").title == "yes"


@pytest.mark.parametrize(
    "frontmatter, line, reason",
    [
        ("collection: archive", 2, "unknown value 'archive'; expected one of: working"),
        ("type: musing", 2, "unknown value 'musing'; expected one of: preference"),
        ("score: 1.5", 2, "out of range"),
        ("score: high", 2, "expected a number"),
        ("title: x\nuses: -1", 3, "negative"),
        ("uses: 2.5", 2, "whole number"),
        ("uses: 1\nsuccess_count: 2", 3, "exceeds uses"),
        ("outcomes: [worked, great]", 2, "unknown outcome 'great'"),
        ("created_at: yesterday", 2, "not an ISO 8601"),
        ("importance: true", 2, "expected a number"),
        ("always_inject: maybe", 2, "expected true or false"),
        ("supersedes: [[old-note]]", 2, "must be quoted"),
        ("id: ../../etc", 2, "may only contain"),
        ("title: [a, b]", 2, "expected text"),
    ],
)
def test_invalid_values_are_errors_naming_the_line_and_the_reason(frontmatter, line, reason):
    with pytest.raises(ParseError) as caught:
        parse(f"---\n{frontmatter}\n---\nbody\n".encode(), "notes/bad.md")
    error = caught.value
    assert error.path == "notes/bad.md" and error.line == line and reason in error.reason


def test_non_utf8_files_are_refused_with_the_line_of_the_bad_byte():
    with pytest.raises(ParseError) as caught:
        parse(b"---\ntitle: ok\n---\nline one\ncaf\xe9\n", "latin1.md")
    assert caught.value.line == 5 and "UTF-8" in caught.value.reason


def test_binary_files_are_refused():
    with pytest.raises(ParseError, match="binary"):
        parse(b"\x89PNG\r\n\x1a\n\x00\x00", "image.md")


def test_oversized_files_are_refused_before_reading_them_as_text():
    with pytest.raises(ParseError, match="limited"):
        parse(b"x" * 101, "big.md", max_bytes=100)


def test_a_body_opening_with_a_fenced_comment_takes_its_title_from_the_first_real_heading():
    body = "```bash\n# install the tools\nuv sync\n```\n\n# Local setup\nRun `make seed`.\n"
    assert parse(f"---\nid: m-0000c0de\n---\n{body}".encode(), "patterns/setup.md").title == "Local setup"
    only_code = "~~~python\n# not a title\n~~~\n"
    assert parse(f"---\nid: m-0000c0df\n---\n{only_code}".encode(), "patterns/only-code.md").title == "only-code"
