"""The one-pass analysis gives what Whoosh's analyzer chain gives, term for term, so staged and written
postings are unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from whoosh.fields import TEXT

from indexer.keyword import ANALYZER, QUERY_ANALYZER, index_analysis, schema

REPO = Path(__file__).resolve().parents[2]
ODD = [
    "", "   ", "a", "I am a an the", "sms_outbox.dedupe_key and SMS_OUTBOX.Dedupe_Key again sms_outbox.dedupe_key",
    "__init__ _private_ a.b.c a..b trailing. .leading _ __ x_y.z_w.x_y", "İstanbul ǅemal ΣΊΣΥΦΟΣ straße ﬁnance naïve café",
    "running runs ran runner's caresses ponies ties caress cats", "3.14 v2.0.1 1_000_000 e=mc² x*y foo*bar* **",
    "It's the 2nd time: he said \"no\" — twice; and then… again!", "日本語のテキスト 中文 한국어 עברית العربية",
    "line one\nline two\ttabbed\r\nwindows", "the the the the cat cat", "a_b_c_d.e_f.g", "I_a.B_i",
]


def corpus() -> list[str]:
    texts = list(ODD)
    for path in sorted([*REPO.glob("docs/*.md"), *REPO.glob("indexer/*.py")])[:40]:
        text = path.read_text(encoding="utf-8")
        texts += [text, *text.split("\n\n")[:30]]
    return texts


@pytest.mark.parametrize("field_name", ["title", "body", "context"])
def test_each_searched_field_is_analysed_exactly_as_whoosh_does(field_name: str) -> None:
    field = schema()[field_name]
    fast = index_analysis(field)
    assert fast is not None and getattr(fast, "__name__", "") == "index"  # the one-pass path, not Whoosh's
    for text in corpus():
        assert fast(text) == list(field.index(text)), text[:80]


def test_a_field_analysed_otherwise_keeps_whooshs_own_analysis() -> None:
    for field in (TEXT(analyzer=QUERY_ANALYZER), TEXT(analyzer=ANALYZER, phrase=False)):
        analyse = index_analysis(field)
        text = "sms_outbox.dedupe_key runs twice"
        assert analyse(text) == list(field.index(text))
        assert getattr(analyse, "__name__", "") != "index"


def test_the_stored_schema_of_a_created_index_takes_the_one_pass_path(tmp_path: Path) -> None:
    from indexer.keyword import KeywordIndex
    index = KeywordIndex.create(tmp_path / "kw")
    stored = index._ix.schema  # unpickled from the table of contents, as every open reads it
    assert all(getattr(index_analysis(stored[f]), "__name__", "") == "index" for f in ("title", "body", "context"))
    index.close()
