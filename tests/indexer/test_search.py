from __future__ import annotations

import math

import os
import re
import statistics
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from indexer.index import Index
from indexer.search import Hit, SearchRequest, Searcher, order_hits
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from vault import ValidationError, Vault
from vault.errors import NotFoundError

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


class ConceptEmbedder:
    """Maps words to concepts, so texts can share meaning without sharing a single word."""

    id = "concepts-8"
    dim = 8
    CONCEPTS = {"car": 0, "automobile": 0, "vehicle": 0, "sedan": 0, "database": 1, "postgres": 1, "sql": 1,
                "coffee": 2, "espresso": 2, "deploy": 3, "release": 3, "ship": 3}

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                if word in self.CONCEPTS:
                    out[row, self.CONCEPTS[word]] += 1
            out[row, 7] += 0.05  # a small shared component keeps unrelated texts from being orthogonal zeros
            out[row] /= np.linalg.norm(out[row])
        return out

    def embed_query(self, text):
        return self.embed([text])[0]


def concept_index(root: Path) -> Index:
    return Index.open(Vault(root), ConceptEmbedder())


def searcher(index: Index, **overrides) -> Searcher:
    return Searcher(index, SearchSettings(**overrides))


def ids(hits) -> list[str]:
    return [h.memory.id for h in hits]


def test_vector_only_and_keyword_only_matches_both_reach_the_results(hashing_root: Path):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Car upkeep", "Service the sedan every spring"))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "Error code", "The importer fails with ERR_4711"))
    write(hashing_root, "history/c.md", memory_text("m-0000000c", "Espresso", "Grind finer for espresso"))
    index = concept_index(hashing_root)
    hits = searcher(index).search(SearchRequest(query="automobile maintenance ERR_4711", now=NOW))
    channels = {h.memory.id: h.channel for h in hits}
    assert channels["m-0000000a"] == "vector" and channels["m-0000000b"] == "keyword"
    assert "m-0000000c" not in channels or channels["m-0000000c"] != "both"
    index.close()


def test_filters_apply_before_top_k(hashing_root: Path):
    for i in range(30):
        write(hashing_root, f"history/h{i}.md", memory_text(f"m-{i:08x}", f"Postgres lock {i}", "postgres lock " * 5))
    write(hashing_root, "working/w.md",
          memory_text("m-000000ff", "Aside", "a passing mention of a postgres lock", collection="working"))
    index = concept_index(hashing_root)
    narrow = searcher(index, candidates=5)
    assert ids(narrow.search(SearchRequest(query="postgres lock", limit=1, now=NOW))) != ["m-000000ff"]
    assert ids(narrow.search(SearchRequest(query="postgres lock", limit=3, collections=("working",), now=NOW))) == ["m-000000ff"]
    index.close()


def test_type_tag_and_date_filters(hashing_root: Path):
    old = memory_text("m-00000001", "Old decision", "deploy on fridays", type="decision",
                      extra="tags: [ops]\n").replace("2026-11-01", "2026-01-01")
    write(hashing_root, "history/old.md", old)
    write(hashing_root, "history/new.md", memory_text("m-00000002", "New learning", "deploy with care", extra="tags: [Ops, ci]\n"))
    index = concept_index(hashing_root)
    s = searcher(index)
    assert ids(s.search(SearchRequest(query="deploy", types=("decision",), now=NOW))) == ["m-00000001"]
    assert ids(s.search(SearchRequest(query="deploy", tags=("ci",), now=NOW))) == ["m-00000002"]
    assert set(ids(s.search(SearchRequest(query="deploy", tags=("#ops",), now=NOW)))) == {"m-00000001", "m-00000002"}
    assert ids(s.search(SearchRequest(query="deploy", days_back=60, now=NOW))) == ["m-00000002"]
    assert ids(s.search(SearchRequest(query="deploy", before=datetime(2026, 6, 1, tzinfo=timezone.utc), now=NOW))) == [
        "m-00000001"]
    index.close()


def test_a_collection_or_type_no_memory_can_have_is_refused_naming_the_valid_ones(hashing_root: Path):
    write(hashing_root, "patterns/p.md", memory_text("m-00000001", "Lock", "postgres lock", collection="patterns"))
    index = concept_index(hashing_root)
    s = searcher(index)
    with pytest.raises(ValidationError, match="unknown collection 'pattern'; expected one of: working, history, patterns"):
        s.search(SearchRequest(query="postgres lock", collections=("pattern",), now=NOW))  # a typo, not "nothing found"
    with pytest.raises(ValidationError, match="unknown type 'learnin'; expected one of: preference, fact"):
        s.search(SearchRequest(query="postgres lock", types=("learnin",), now=NOW))
    assert ids(s.search(SearchRequest(query="postgres lock", collections=("patterns",), now=NOW))) == ["m-00000001"]
    index.close()


def test_superseded_memories_are_hidden_and_their_successor_stands_in(example_root: Path):
    index = open_index(example_root)
    s = searcher(index)
    v1, v3 = "m-1b6e2d90", "m-8e2c4b07"
    hits = s.search(SearchRequest(query="Redis SET NX lock statement imports", limit=20, now=NOW))
    assert v1 not in ids(hits) and "m-5d3f7a18" not in ids(hits) and v3 in ids(hits)
    everything = s.search(SearchRequest(query="Redis SET NX lock statement imports", limit=20, include_superseded=True, now=NOW))
    old = next(h for h in everything if h.memory.id == v1)
    assert old.successor == v3
    index.close()


def test_an_id_lookup_bypasses_search_and_unknown_ids_are_errors(example_root: Path):
    index = open_index(example_root)
    s = searcher(index)
    hit = s.search(SearchRequest(memory_id="m-1b6e2d90"))[0]
    assert hit.channel == "lookup" and hit.successor == "m-8e2c4b07"
    with pytest.raises(NotFoundError):
        s.search(SearchRequest(memory_id="m-00000000"))
    index.close()


def test_without_a_query_days_back_gives_a_timeline_newest_first(example_root: Path):
    index = open_index(example_root)
    s = searcher(index)
    hits = s.search(SearchRequest(days_back=3, now=datetime(2026, 11, 22, tzinfo=timezone.utc)))
    created = [h.memory.created_at for h in hits if h.memory.created_at is not None]
    assert hits and all(h.channel == "timeline" for h in hits) and created == sorted(created, reverse=True)
    assert all(c >= datetime(2026, 11, 19, tzinfo=timezone.utc) for c in created)
    assert s.search(SearchRequest()) == []  # nothing asked, no window: clearly empty, not an error (issue 26)
    index.close()


def test_bad_limits_are_refused(example_root: Path):
    index = open_index(example_root)
    s = searcher(index)
    for bad in (0, 101):
        with pytest.raises(ValidationError, match="limit"):
            s.search(SearchRequest(query="x", limit=bad))
    index.close()


def test_a_linked_memory_is_reached_through_the_graph(hashing_root: Path):
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Coffee", "espresso espresso, see [[b]]"))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "Unrelated words", "nothing in common here"))
    index = concept_index(hashing_root)
    hits = searcher(index, score_threshold=0.0).search(SearchRequest(query="espresso", now=NOW))
    graph_hit = next(h for h in hits if h.memory.id == "m-0000000b")
    assert graph_hit.channel == "graph" and graph_hit.via == "m-0000000a"
    index.close()


def test_recency_comes_from_created_at_never_from_the_file_mtime(hashing_root: Path):
    body = "deploy notes deploy"
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "A", body, type="journal").replace("2026-11-01", "2025-01-01"))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "B", body, type="journal").replace("2026-11-01", "2026-11-21"))
    os.utime(hashing_root / "history" / "a.md", (NOW.timestamp(), NOW.timestamp()))
    os.utime(hashing_root / "history" / "b.md", ((NOW - timedelta(days=900)).timestamp(),) * 2)
    index = concept_index(hashing_root)
    assert ids(searcher(index).search(SearchRequest(query="deploy notes", now=NOW)))[0] == "m-0000000b"
    index.close()


def test_a_decision_and_a_fact_written_the_same_minute_get_the_same_recency_lift(hashing_root: Path):
    # Served hold-out 4: a fresh fact was lifted over a fresh decision it matched no better, only for its type.
    body = "deploy notes deploy"
    for memory_id, kind in (("m-0000000a", "fact"), ("m-0000000b", "decision"), ("m-0000000c", "learning")):
        write(hashing_root, f"history/{memory_id}.md",
              memory_text(memory_id, "Deploy", body, type=kind).replace("2026-11-01", "2026-11-22"))
    index = concept_index(hashing_root)
    hits = searcher(index).search(SearchRequest(query="deploy notes", now=NOW))
    lifts = {h.memory.type: h.explain["recency"] for h in hits}
    assert lifts["fact"] > 0.0 and lifts["decision"] == lifts["fact"] == lifts["learning"], lifts
    index.close()


def test_a_proven_memory_outranks_an_equally_relevant_one_that_kept_failing(hashing_root: Path):
    good = memory_text("m-0000000a", "Deploy", "deploy release", extra="uses: 6\nsuccess_count: 6.0\nscore: 0.95\n")
    bad = memory_text("m-0000000b", "Deploy", "deploy release", extra="uses: 3\nsuccess_count: 0.0\nscore: 0.0\n")
    write(hashing_root, "history/a.md", good)
    write(hashing_root, "history/b.md", bad)
    index = concept_index(hashing_root)
    assert ids(searcher(index).search(SearchRequest(query="deploy", now=NOW))) == ["m-0000000a", "m-0000000b"]
    index.close()


def test_sort_by_score_and_recency(example_root: Path):
    index = open_index(example_root)
    s = searcher(index)
    by_score = s.search(SearchRequest(query="ledger", sort_by="score", limit=10, now=NOW))
    assert [h.memory.score for h in by_score] == sorted((h.memory.score for h in by_score), reverse=True)
    by_time = s.search(SearchRequest(query="ledger", sort_by="recency", limit=10, now=NOW))
    stamps = [h.memory.created_at for h in by_time if h.memory.created_at]
    assert stamps == sorted(stamps, reverse=True)
    index.close()


def test_a_turn_is_found_by_what_its_neighbours_said(hashing_root: Path):
    write(hashing_root, "history/q.md", memory_text("m-0000000a", "Dana", "Dana: What did you paint last week?"))
    write(hashing_root, "history/a.md", memory_text("m-0000000b", "Sam", "Sam: A sunset over the lake.",
                                                    extra="previous: m-0000000a\n"))
    write(hashing_root, "history/x.md", memory_text("m-0000000c", "Kim", "Kim: Nothing to see here."))
    index = concept_index(hashing_root)
    found = ids(searcher(index).search(SearchRequest(query="paint", mode="keyword", now=NOW)))
    assert found == ["m-0000000a", "m-0000000b"]  # its own words first, then the answer that followed
    assert ids(searcher(index, context_boost=0.0).search(SearchRequest(query="paint", mode="keyword", now=NOW))) == [
        "m-0000000a"]
    index.close()


def test_a_note_scores_its_best_sentence_together_with_the_whole_not_the_blur_alone(hashing_root: Path):
    body = "We drove a sedan to the coast. The database migration ran overnight. The deploy shipped at noon."
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Weekend", body))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "Garage", "The car and the sedan and the vehicle."))
    index = concept_index(hashing_root)
    [hit] = [h for h in searcher(index).search(SearchRequest(query="automobile", mode="vector", now=NOW))
             if h.memory.id == "m-0000000a"]
    query = ConceptEmbedder().embed(["automobile"])[0]
    whole, *sentences = [float(index.unit_vectors(np.array([u]))[0] @ query) for u in index.entry("history/a.md").unit_ids]
    # A note with no neighbours reads as a soft maximum of its whole and its sentences (one sentence alone
    # can sit close to a question by accident), and stands in for its own missing neighbours with the whole:
    # (soft + 0.5 whole + 0.3 whole) / 1.8 -- above the whole's blur, below the sentence. Of three sentences, the
    # soft maximum keeps 3/4 of its lift above the whole (pooling_lift_sentences: a long note's many chances).
    assert len(sentences) == 3 and max(sentences) > 0.95 > 0.7 > whole
    soft = whole + 3 / 4 * (_soft_maximum([whole, *sentences]) - whole)
    assert hit.vector_score == pytest.approx((soft + 0.8 * whole) / 1.8)
    assert whole < hit.vector_score < max(sentences)
    index.close()


def _soft_maximum(cosines: list[float], sharpness: float = SearchSettings().pooling_sharpness) -> float:
    """log(mean(exp(sharpness * cosine))) / sharpness, as a standalone note's text scores."""
    top = max(cosines)
    return top + math.log(sum(math.exp(sharpness * (c - top)) for c in cosines) / len(cosines)) / sharpness


def _reference_vector_score(index: Index, memory_id: str, query: np.ndarray, w_previous: float, w_next: float,
                            lead: float = 0.05, share: float = 0.5, standout: float = 2.0,
                            standout_share: float = 0.5) -> float:
    """The vector score as specified, one unit at a time: per chunk, the best sentence (else the whole
    chunk), blended with the best previous and next units (else the whole chunk); the best chunk wins, less
    `share` of what it lacks of leading the second best chunk by `lead`, and
    `standout_share` of what it lacks of standing `standout` standard deviations above the chunks' mean, when
    there are enough chunks for that to be reachable with a fifth to spare."""
    units = index.entry(index.memory(memory_id).path).units
    cosines = {u: float(index.unit_vectors(np.array([u]))[0] @ query) for u, _, _ in units}
    scores = []
    for chunk in dict.fromkeys(c for _, c, _ in units):
        def best(role: str) -> float | None:
            found = [cosines[u] for u, c, r in units if c == chunk and r == role]
            return max(found) if found else None
        whole = best("whole")
        text, before, after = (best(role) for role in ("sentence", "previous", "next"))
        if before is None and after is None and text is not None:  # a note with no neighbours: read as a whole
            text = _soft_maximum([cosines[u] for u, c, r in units if c == chunk and r in ("whole", "sentence")])
        text, before, after = (whole if v is None else v for v in (text, before, after))
        scores.append(((text + (w_previous * before + w_next * after)) / (1.0 + w_previous + w_next), -chunk))
    ordered = sorted(scores, reverse=True)
    if len(ordered) == 1:
        return ordered[0][0]
    shortfall = lead - (ordered[0][0] - ordered[1][0])
    score = ordered[0][0] - (share * shortfall if shortfall > 0 else 0.0)
    if len(ordered) >= 3 and math.sqrt(len(ordered) - 1) >= 1.2 * standout:  # below it the standard is out of reach
        values = [v for v, _ in ordered]
        behind = standout * statistics.pstdev(values) - (values[0] - statistics.fmean(values))
        score -= standout_share * behind if behind > 0 else 0.0
    return score


def test_every_candidates_vector_score_is_its_best_chunk_blended_with_its_neighbours(hashing_root: Path):
    book = "\n".join(f"## Part {n}\nThe {w} crew met at dawn. The {w} plan changed twice. Then the {w} shipped.\n"
                     for n, w in enumerate(["deploy", "database", "espresso", "release"]))
    write(hashing_root, "books/manual.md", memory_text("m-0000000a", "Manual", book, collection="books"))
    write(hashing_root, "history/q.md", memory_text("m-0000000b", "Q", "Did the deploy ship? Was the database fine?"))
    write(hashing_root, "history/a.md", memory_text("m-0000000c", "A", "It shipped. The release notes are out.",
                                                    extra="previous: m-0000000b\n"))
    write(hashing_root, "history/b.md", memory_text("m-0000000d", "B", "The espresso machine broke.",
                                                    extra="previous: m-0000000c\n"))
    index = open_index(hashing_root)
    assert len({c for _, c, _ in index.entry("books/manual.md").units}) >= 4  # several chunks
    roles = {r for e in index.all_entries() for _, _, r in e.units}
    assert roles == {"whole", "sentence", "previous", "next"}
    settings = SearchSettings(embedder=index.embedder.id)
    for text in ("deploy release", "database crew", "espresso machine", "notes"):
        query = index.embedder.embed_query(text)
        hits = Searcher(index, settings).search(SearchRequest(query=text, mode="vector", limit=10, now=NOW))
        assert hits
        for hit in hits:
            assert hit.vector_score == pytest.approx(_reference_vector_score(
                index, hit.memory.id, query, settings.previous_weight, settings.next_weight), rel=1e-12)
    index.close()


def test_a_neighbour_that_matches_lifts_a_memory_in_the_vector_channel(hashing_root: Path):
    write(hashing_root, "history/q.md", memory_text("m-0000000a", "Q", "What about the espresso machine?"))
    write(hashing_root, "history/a.md", memory_text("m-0000000b", "A", "It broke again.", extra="previous: m-0000000a\n"))
    write(hashing_root, "history/c.md", memory_text("m-0000000c", "C", "It broke again."))
    index = concept_index(hashing_root)
    scores = {h.memory.id: h.vector_score for h in searcher(index, score_threshold=0.0).search(
        SearchRequest(query="coffee", mode="vector", now=NOW))}
    assert scores["m-0000000b"] > scores.get("m-0000000c", 0.0) + 0.1
    index.close()


def test_embedding_the_query_alongside_the_keyword_search_gives_the_same_results_as_one_after_the_other(
        hashing_example: Path):
    index = open_index(hashing_example)
    s = searcher(index)
    for query in ("postgres advisory locks", "retries celery idempotent", "deploy"):
        request = SearchRequest(query=query, now=NOW)
        concurrent = s.search(request)
        index.embedder.forget_queries()
        allowed = s._allowed(request, NOW)
        candidates, query_vector = s._retrieve(request, allowed, None)
        sequential = order_hits(s._rank(candidates, allowed, request, NOW, query_vector=query_vector), "relevance",
                                NOW, s.settings.fresh_unscored_days)
        assert concurrent
        assert [(h.memory.id, h.final) for h in concurrent] == [(h.memory.id, h.final) for h in sequential[:len(concurrent)]]


def test_a_failing_query_embedding_fails_the_search(hashing_example: Path):
    index = open_index(hashing_example)

    def broken(text):
        raise RuntimeError("model unavailable")

    index.embedder.embed_query = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="model unavailable"):
        searcher(index).search(SearchRequest(query="postgres", now=NOW))
    assert searcher(index).search(SearchRequest(query="postgres", mode="keyword", now=NOW))


def test_the_unfiltered_candidate_set_follows_index_changes(hashing_root: Path):
    index = open_index(hashing_root)
    s = searcher(index)
    before = s.search(SearchRequest(query="zebra migration", mode="keyword", now=NOW))
    write(hashing_root, "patterns/zebra.md", memory_text("m-2ebra001", "Zebra migration", "zebra migration notes"))
    index.sync()
    after = s.search(SearchRequest(query="zebra migration", mode="keyword", now=NOW))
    assert "m-2ebra001" not in ids(before) and ids(after)[0] == "m-2ebra001"


def test_the_learners_constants_in_search_settings_decide_how_far_a_bad_record_demotes(hashing_root: Path):
    misled = "uses: 2\nsuccess_count: 0.0\noutcomes: [failed, failed]\n"
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Deploy", "Ship the release with fly deploy", extra=misled))
    write(hashing_root, "history/b.md", memory_text("m-0000000b", "Deploy", "Ship the release with the deploy script"))
    index = concept_index(hashing_root)
    request = SearchRequest(query="how do we deploy a release", now=NOW)
    assert ids(searcher(index).search(request))[0] == "m-0000000b"
    flat = {h.memory.id: h.final for h in searcher(index, quality_demotion=0.0, quality_weight_emerging=0.0).search(request)}
    default = {h.memory.id: h.final for h in searcher(index).search(request)}
    assert flat["m-0000000a"] > default["m-0000000a"] and flat["m-0000000b"] == default["m-0000000b"]



def test_a_question_whose_words_the_keyword_channel_barely_covers_is_ranked_by_meaning(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Local setup", "Bring up postgres with docker compose"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Stickers", "Stickers on my laptop lid"))
    write(hashing_root, "books/c.md", memory_text("m-0000000c", "Espresso", "Grind finer for espresso", collection="books"))
    index = concept_index(hashing_root)
    s = searcher(index)
    paraphrase = s.search(SearchRequest(query="what is the quickest way to get a database going on my laptop", now=NOW))
    assert ids(paraphrase)[0] == "m-0000000a"
    assert all(h.explain["keyword_mix"] == 0.0 for h in paraphrase)  # one shared word of nine says nothing
    named = s.search(SearchRequest(query="laptop lid stickers", now=NOW))
    assert ids(named)[0] == "m-0000000b" and named[0].explain["keyword_mix"] > 0.0
    index.close()


def test_a_code_like_word_keeps_the_keyword_channel_heard_however_little_of_the_question_it_is(hashing_root: Path):
    write(hashing_root, "patterns/a.md", memory_text("m-0000000a", "Car upkeep", "Service the sedan every spring"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Importer", "The importer fails with ERR_4711"))
    index = concept_index(hashing_root)
    hits = searcher(index).search(SearchRequest(
        query="the automobile dashboard showed ERR_4711 while we were driving home from the coast", now=NOW))
    [coded] = [h for h in hits if h.memory.id == "m-0000000b"]
    assert coded.explain["keyword_mix"] > 0.0
    index.close()


def test_memories_a_hub_links_to_get_their_own_relevance_not_one_value_lent_to_all(hashing_root: Path):
    notes = {"m-00000011": "The sql replica lags at night", "m-00000012": "Grind finer for espresso",
             "m-00000013": "Coffee beans from the corner shop", "m-00000014": "Ship the release on Fridays"}
    links = " ".join(f"[[{memory_id}]]" for memory_id in notes)
    write(hashing_root, "books/hub.md", memory_text("m-0000000a", "Runbook", f"Postgres database runbook. {links}",
                                                    collection="books"))
    for n, (memory_id, text) in enumerate(notes.items()):
        write(hashing_root, f"patterns/n{n}.md", memory_text(memory_id, f"Note {n}", text))
    index = concept_index(hashing_root)
    hits = searcher(index).search(SearchRequest(query="postgres database", limit=10, now=NOW))
    lent = {h.memory.id: h.relevance for h in hits if h.channel == "graph"}
    assert ids(hits)[0] == "m-0000000a" and set(lent) == set(notes) - {"m-00000011"} or set(lent) == set(notes)
    unrelated = [lent[i] for i in ("m-00000012", "m-00000013", "m-00000014")]
    assert all(value < hits[0].relevance * 0.5 for value in unrelated)
    if "m-00000011" in lent:  # linked and about databases itself: it keeps more of what the hub lends
        assert all(lent["m-00000011"] > value for value in unrelated)
    index.close()


def test_a_ranked_hit_explains_how_much_of_the_question_its_words_cover_and_whether_it_is_a_sectioned_document(
        hashing_root: Path):
    book = "\n".join(f"## Part {n}\nThe {w} crew met at dawn. The {w} plan changed twice. Then the {w} shipped.\n"
                     for n, w in enumerate(["deploy", "database", "espresso", "release"]))
    write(hashing_root, "books/manual.md", memory_text("m-0000000a", "Manual", book, collection="books"))
    write(hashing_root, "patterns/b.md", memory_text("m-0000000b", "Stickers", "Stickers on my laptop lid"))
    write(hashing_root, "patterns/c.md", memory_text("m-0000000c", "Espresso", "Grind finer for espresso"))
    index = concept_index(hashing_root)
    hits = {h.memory.id: h for h in searcher(index).search(SearchRequest(query="laptop lid stickers", now=NOW,
                                                                                         features=True))}
    stickers = hits["m-0000000b"].explain
    assert stickers["keyword_coverage"] > 0.0 and stickers["keyword_covered"] == stickers["keyword_coverage"]
    assert all(h.explain["keyword_covered"] == stickers["keyword_coverage"] for h in hits.values())  # the question's
    assert stickers["sectioned"] == 0.0
    espresso = {h.memory.id: h for h in searcher(index).search(SearchRequest(query="espresso crew", now=NOW,
                                                                                             features=True))}
    assert espresso["m-0000000a"].explain["sectioned"] == 1.0 and espresso["m-0000000c"].explain["sectioned"] == 0.0
    index.close()


def test_a_note_that_grows_sections_is_read_as_sectioned_by_the_searcher_that_read_it_before(hashing_root: Path):
    write(hashing_root, "books/c.md", memory_text("m-0000000c", "Espresso", "Grind finer for espresso", collection="books"))
    index = concept_index(hashing_root)
    s = searcher(index)
    before = {h.memory.id: h for h in s.search(SearchRequest(query="espresso crew", now=NOW, features=True))}
    book = "\n".join(f"## Part {n}\nThe {w} crew met at dawn. The {w} plan changed twice. Then the {w} shipped.\n"
                     for n, w in enumerate(["deploy", "database", "espresso", "release"]))
    write(hashing_root, "books/c.md", memory_text("m-0000000c", "Espresso", book, collection="books"))
    index.sync()
    after = {h.memory.id: h for h in s.search(SearchRequest(query="espresso crew", now=NOW, features=True))}
    assert before["m-0000000c"].explain["sectioned"] == 0.0 and after["m-0000000c"].explain["sectioned"] == 1.0
    index.close()


def test_a_hit_made_without_its_init_is_the_hit_its_init_makes():
    from datetime import datetime, timezone

    from vault.model import Memory

    memory = Memory(id="m-0000000a", path="patterns/a.md", collection="patterns", type="learning", title="A", body="b")
    written = datetime(2026, 11, 1, tzinfo=timezone.utc)
    made = Hit.made(memory, 0.5, 0.4, "both", heading="H", vector_score=0.3, via="m-0000000b", written=written)
    assert made == Hit(memory, 0.5, 0.4, "both", "H", 0.3, via="m-0000000b", written=written)
    assert list(vars(made)) == list(vars(Hit(memory, 0.5, 0.4, "both")))  # every field, in its order
    with pytest.raises(TypeError):
        Hit.made(memory, 0.5, 0.4, "both", headline="H")


def test_a_hit_changed_in_place_of_dataclasses_replace_is_the_hit_replace_makes(example_root: Path):
    from dataclasses import replace

    index = open_index(example_root)
    hit = Searcher(index, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="docker compose"))[0]
    changed = hit.but(final=0.25, explain={"order": 0.5}, shown=0.1)
    assert changed == replace(hit, final=0.25, explain={"order": 0.5}, shown=0.1)
    assert hit.final != 0.25  # the hit it was made from is unchanged
    with pytest.raises(TypeError):
        hit.but(finale=0.25)
    index.close()
