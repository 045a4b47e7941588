"""What the review inbox keeps between processes is read back, dropped when its text leaves, and never trusted when damaged."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.review_memo import ReviewMemo
from vault.model import Memory


def memory(body: str, title: str = "T") -> Memory:
    return Memory(id="m-00000001", path="history/a.md", collection="history", type="learning", title=title, body=body)


def test_answers_are_read_back_by_a_new_process_without_computing_again(tmp_path: Path):
    path = tmp_path / "memo.json"
    a, b = memory("We use uv."), memory("We do not use uv.")
    first = ReviewMemo(path)
    assert first.reversal(a, b, lambda: "one says 'not'") == "one says 'not'"
    assert first.secrets(a, lambda: ["GitHub token"]) == ["GitHub token"]
    first.save([a, b])

    def never() -> str:
        raise AssertionError("computed again")

    second = ReviewMemo(path)
    assert second.reversal(a, b, never) == "one says 'not'" and second.secrets(a, never) == ["GitHub token"]
    assert second.imitation(memory("We use uv.", title="Other title"), lambda: "") == ""  # the title is part of the key


def test_saving_drops_what_is_about_texts_no_longer_in_the_vault(tmp_path: Path):
    path = tmp_path / "memo.json"
    a, b, c = memory("alpha"), memory("beta"), memory("gamma")
    memo = ReviewMemo(path)
    memo.reversal(a, b, lambda: "x")
    memo.reversal(a, c, lambda: "y")
    memo.save([a, c])
    calls = []
    reread = ReviewMemo(path)
    assert reread.reversal(a, c, lambda: calls.append("a-c") or "y") == "y"
    assert reread.reversal(a, b, lambda: calls.append("a-b") or "x") == "x"
    assert calls == ["a-b"]


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"format": 1, "secrets": {}}', b"[]"])
def test_a_damaged_or_older_memo_only_means_computing_again(tmp_path: Path, content: bytes):
    path = tmp_path / "memo.json"
    path.write_bytes(content)
    memo = ReviewMemo(path)
    assert memo.secrets(memory("body"), lambda: ["computed"]) == ["computed"]
    memo.save([memory("body")])
    assert ReviewMemo(path).secrets(memory("body"), lambda: ["again"]) == ["computed"]
