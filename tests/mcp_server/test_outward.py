"""The one vocabulary every renderer shares: hook lines, tool results and CLI labels call a memory the same."""

from __future__ import annotations

from datetime import datetime, timezone

from mcp_server import context, outward, render
from vault.model import BANK_DEFAULT, Memory
from vault.normalize import normalize

NOW = datetime(2026, 11, 25, tzinfo=timezone.utc)


def shape(**fields):
    memory = Memory(id="m-1", path="notes/a.md", collection=fields.pop("collection", "patterns"), type="fact",
                    title="A «title»", body="Some » text", created_at=datetime(2026, 11, 20, tzinfo=timezone.utc),
                    **fields)
    return normalize(memory, NOW)


def test_a_real_zero_importance_stays_zero_in_the_hook_the_cli_and_the_tools():
    bank = shape(collection="memory_bank", importance=0.0, confidence=0.0)
    assert "imp:0.0" in context.memory_line(bank, 0.9, 200)
    assert "imp:0.0" in render.stats_label(bank) and "conf:0.0" in render.stats_label(bank)
    assert outward.hit(bank).track == "uncertain: importance 0.0"


def test_a_bank_fact_without_weights_reads_as_stated_at_the_default():
    bank = shape(collection="memory_bank")
    assert bank["importance"] == bank["confidence"] == BANK_DEFAULT
    assert outward.hit(bank).track == f"stated: importance {BANK_DEFAULT:.1f}"


def test_the_hook_and_the_tools_use_the_same_word_for_a_track_record():
    for uses, word in ((0, "unproven"), (1, "emerging"), (3, "established"), (10, "proven")):
        memory = shape(uses=uses)
        assert f", {word}, " in context.memory_line(memory, 0.6, 200)
        assert outward.hit({**memory, "relevance": 0.6}).track.startswith(f"{word}: ")


def test_a_hit_quotes_title_and_text_so_neither_can_close_its_quote():
    view = outward.hit({**shape(), "relevance": 0.42, "successor": "m-2", "status": "stale"})
    assert view.title == "«A ‹title›»" and view.text == "«Some › text»"
    line = outward.hit_line(1, view)
    assert line.startswith("1. [id:m-1] (patterns, fact, 5d, relevance 0.42, unproven: 0 uses)")
    assert line.endswith("[stale] (superseded by [id:m-2])")
