"""A long prompt is read by its salient parts too: the error lines and the user's own sentences of a paste.

Embedded whole, a pasted traceback or log is mostly frames, timestamps and paths; read from its beginning,
a 10 kB paste is only log, and its failure and its question (which come last) are not read at all
(bench/results/search.md, issue 26 session 8: 24 pastes of 10 kB, MRR@10 0.05 -> 0.80)."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from indexer.embed import make_embedder
from indexer.index import Index
from indexer.salient import salient_text
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from vault import Vault

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/site-packages/starlette/routing.py", line 74, in app\n'
    "    response = await func(request)\n"
    '  File "billing/webhooks.py", line 41, in stripe_webhook\n'
    "    event = stripe.Webhook.construct_event(payload, sig_header, secret)\n"
    "stripe.error.SignatureVerificationError: No signatures found matching the expected signature for payload\n"
    "we read await request.json() first to log the event type, what is wrong here?")
ACCESS_LOG = "".join(f'INFO:     10.4.0.{n % 250}:{40000 + n} - "GET /api/v2/clinics/{n % 40}/practitioners?page={n % 5} '
                     f'HTTP/1.1" 200 OK\n' for n in range(110))


def test_a_traceback_is_read_by_its_exception_line_and_the_users_question():
    assert salient_text(TRACEBACK).splitlines() == [
        "stripe.error.SignatureVerificationError: No signatures found matching the expected signature for payload",
        "we read await request.json() first to log the event type, what is wrong here?"]


def test_a_failure_a_log_repeats_a_thousand_times_is_read_once():
    log = "2026-11-25T07:00:04Z ERROR send failed: TwilioRestException HTTP 429 Too Many Requests\n" * 1000
    assert salient_text(log + "how are we supposed to pace the morning batch?").splitlines() == [
        "2026-11-25T07:00:04Z ERROR send failed: TwilioRestException HTTP 429 Too Many Requests",
        "how are we supposed to pace the morning batch?"]


def test_a_paste_that_names_no_failure_is_read_whole_unless_it_is_too_long_to_read():
    diff = ("+    offset = (page - 1) * 50\n+    rows = select(Slot).offset(offset).limit(50)\n"
            "Maya left a comment on this diff saying we don't page like that. what's the convention?")
    assert salient_text(diff) == ""  # its code says what it is about
    assert salient_text(diff, failure_only=False) == "Maya left a comment on this diff saying we don't page like that. what's the convention?"


@pytest.mark.parametrize("prompt", [
    "why does the nightly invoice run sometimes send every clinic two invoices after we added a second replica",
    "INFO: 10.4.0.1 GET /api/v2/slots 200 OK\nINFO: 10.4.0.2 GET /api/v2/slots 200 OK"])
def test_a_prompt_with_nothing_to_set_apart_has_no_salient_part(prompt):
    assert salient_text(prompt) == ""  # all of it a question, or no failure and no sentence: the whole prompt reads it


def test_a_ten_kilobyte_paste_is_asked_by_its_failure_and_question_not_by_its_beginning(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Stripe signature check",
                                                     "SignatureVerificationError: the webhook route must read the raw body"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Practitioner pages",
                                                     "GET api v2 clinics practitioners page returns 200 OK"))
    index = open_index(hashing_root)
    paste = ACCESS_LOG * 2 + TRACEBACK
    assert len(paste) > 10_000
    hits = Searcher(index, SearchSettings()).search(SearchRequest(query=paste, now=NOW))
    assert hits[0].memory.id == "m-0000000a"
    beginning = Searcher(index, SearchSettings(salient_weight=0)).search(SearchRequest(query=paste, now=NOW))
    assert beginning[0].memory.id == "m-0000000b"  # read from its beginning, the paste is a page of access log
    index.close()


STRIPE_NOTES = [
    ("c016", "Stripe webhooks are idempotent by event id",
     "The Stripe webhook handler (`billing/webhooks.py`) stores `event.id` in `processed_stripe_events` in the same "
     "transaction as the effect; a duplicate delivery is acknowledged and skipped."),
    ("c017", "Stripe signature check needs the raw body",
     "`SignatureVerificationError` in production came from nginx and our own JSON parsing touching the body. The "
     "webhook route reads the raw bytes (`await request.body()`) and verifies them before anything parses them."),
    ("c041", "Slot search needs the composite index",
     "GET /api/v2/slots was slow (1.8 s p95) from a sequential scan on appointments; fixed with an index on "
     "`(clinic_id, practitioner_id, starts_at)`."),
    ("c042", "N+1 queries in the practitioner list",
     "The practitioner list endpoint issued one query per practitioner for their services; load them with "
     "`selectinload(Practitioner.services)`."),
]


@pytest.fixture(scope="module")
def real_index(tmp_path_factory) -> Index:
    root = tmp_path_factory.mktemp("long-parts") / ".memories"
    for memory_id, title, body in STRIPE_NOTES:
        write(root, f"patterns/{memory_id}.md", memory_text(f"m-{memory_id:0>8}", title, body))
    index = Index.open(Vault(root), make_embedder("all-MiniLM-L6-v2"))
    yield index
    index.close()
    shutil.rmtree(root, ignore_errors=True)


def _vector_scores(index: Index, query: str, settings: SearchSettings) -> dict[str, float]:
    hits = Searcher(index, settings).search(SearchRequest(query=query, mode="vector", now=NOW))
    return {h.memory.id: h.vector_score for h in hits}


def test_minilm_reads_a_pasted_traceback_closer_to_the_note_naming_its_exception_when_its_parts_count(real_index):
    pooled = _vector_scores(real_index, TRACEBACK, SearchSettings())
    whole = _vector_scores(real_index, TRACEBACK, SearchSettings(salient_weight=0))
    answer, same_file = "m-0000c017", "m-0000c016"  # the note sharing only billing/webhooks.py with the paste
    assert pooled[answer] - pooled[same_file] > whole[answer] - whole[same_file]


def test_minilm_finds_the_answer_to_a_ten_kilobyte_paste_first(real_index):
    paste = ACCESS_LOG * 2 + TRACEBACK
    assert [h.memory.id for h in Searcher(real_index, SearchSettings()).search(
        SearchRequest(query=paste, now=NOW))][:1] == ["m-0000c017"]
    beginning = Searcher(real_index, SearchSettings(salient_weight=0)).search(SearchRequest(query=paste, now=NOW))
    assert beginning[0].memory.id != "m-0000c017"  # read from its beginning, the paste is a page of access log


def test_a_negative_salient_weight_is_refused_naming_the_setting():
    from indexer.settings import InvalidSetting

    with pytest.raises(InvalidSetting) as refused:
        SearchSettings(salient_weight=-1)
    assert refused.value.key == "salient_weight"


def test_pooling_keeps_the_query_vector_a_unit_vector(real_index):
    from concurrent.futures import Future

    from indexer.search import _pooled

    part: Future = Future()
    part.set_result(real_index.embedder.embed_query("SignatureVerificationError"))
    vector = _pooled(real_index.embedder, TRACEBACK, part, 1.0)
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-5)
