from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from indexer.curator import Curator
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from tests.indexer.test_search import ConceptEmbedder
from vault import ValidationError, Vault
from vault.errors import ConflictError, NotFoundError
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)


def curator_for(index, **dedup) -> Curator:
    return Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings(**dedup))


@pytest.fixture
def concept(hashing_root: Path):
    from indexer.index import Index

    index = Index.open(Vault(hashing_root), ConceptEmbedder())
    yield index
    index.close()


def test_an_exact_restatement_returns_the_existing_memory_and_marks_it(concept):
    curator = curator_for(concept)
    first = curator.add("Dana prefers uv over pip.", type="preference", now=NOW)
    again = curator.add("  dana prefers UV over pip ", type="preference", now=NOW + timedelta(days=1))
    assert first.status == "created" and again.status == "restated" and again.memory.id == first.memory.id
    assert again.memory.frontmatter["restated"] == 1 and concept.memory_count() == 1
    other_type = curator.add("Dana prefers uv over pip.", type="fact", now=NOW)
    assert other_type.status == "created"


def test_near_duplicates_are_suggested_never_merged(concept):
    curator = curator_for(concept, near_duplicate=0.9)
    first = curator.add("Deploy with the release command.", type="learning", now=NOW)
    second = curator.add("Ship a release by deploying.", type="learning", now=NOW)
    assert second.status == "created" and [s.id for s in second.near_duplicates] == [first.memory.id]
    assert concept.memory_count() == 2


def test_a_close_fact_of_the_same_type_is_a_possible_conflict(concept):
    curator = curator_for(concept, near_duplicate=0.99, possible_conflict=0.5)
    old = curator.add("Postgres database runs version 15.", type="fact", now=NOW)
    new = curator.add("The SQL database is Postgres 16, upgraded in the last release.", type="fact", now=NOW)
    unrelated_type = curator.add("Postgres database tuning was fun.", type="journal", now=NOW)
    assert [s.id for s in new.possible_conflicts] == [old.memory.id]
    assert unrelated_type.possible_conflicts == ()


def test_record_response_creates_a_working_memory_at_its_initial_score(concept):
    curator = curator_for(concept)
    scores = {o: curator.record_response(f"takeaway {o}", o, now=NOW).score for o in ("worked", "partial", "failed")}
    assert scores == {"worked": 0.7, "partial": 0.55, "failed": 0.2}
    plain = curator.record_response("a takeaway with no outcome", now=NOW)
    assert plain.collection == "working" and plain.score == 0.5


def test_a_takeaway_recorded_with_an_outcome_carries_it_as_evidence_without_a_use(concept):
    curator = curator_for(concept)
    worked = curator.record_response("takeaway that worked", "worked", now=NOW)
    assert (worked.outcomes, worked.uses, worked.success_count) == (("worked",), 0, 0.0)
    assert curator.record_response("takeaway without an outcome", now=NOW).outcomes == ()
    curator.score({worked.id: "failed"}, now=NOW)
    assert (concept.get(worked.id).outcomes, concept.get(worked.id).uses) == (("worked", "failed"), 1)


def test_scoring_checks_every_id_before_writing_anything(concept):
    curator = curator_for(concept)
    memory = curator.record_response("postgres lock", now=NOW)
    with pytest.raises(NotFoundError):
        curator.score({memory.id: "worked", "m-00000000": "worked"}, now=NOW)
    assert concept.get(memory.id).uses == 0
    with pytest.raises(ValidationError, match="unknown outcome"):
        curator.score({memory.id: "great"}, now=NOW)


def test_update_append_and_delete(concept):
    curator = curator_for(concept)
    memory = curator.add("First version of the note.", type="fact", now=NOW).memory
    updated = curator.update(memory.id, content="Second version.", fields={"tags": ["x"], "importance": 0.9}, now=NOW)
    assert updated.body == "Second version.\n" and updated.tags == ("x",) and updated.importance == 0.9
    appended = curator.append(memory.id, "An addendum.", now=NOW)
    assert appended.body.endswith("Second version.\n\nAn addendum.\n")
    for bad in ({"uses": 3}, {"id": "m-1"}, {"type": "musing"}, {"importance": 2.0}, {"tags": "not-a-list"}):
        with pytest.raises(ValidationError):
            curator.update(memory.id, fields=bad)
    trash = curator.delete(memory.id)
    assert trash.startswith(".trash/memory_bank/") and memory.id not in concept


def test_a_field_nested_deeper_than_frontmatter_may_be_is_refused_and_nothing_written(concept):
    # A tool call's `fields` of 500 nested lists failed in a RecursionError while its frontmatter was rendered.
    curator = curator_for(concept)
    memory = curator.add("A note to annotate.", type="fact", now=NOW).memory
    before = (concept.root / memory.path).read_bytes()
    for deep in (json.loads("[" * 500 + "]" * 500), json.loads('{"a":' * 40 + "1" + "}" * 40)):
        with pytest.raises(ValidationError, match="nested deeper than frontmatter may be"):
            curator.update(memory.id, fields={"notes": deep})
    assert (concept.root / memory.path).read_bytes() == before
    assert curator.update(memory.id, fields={"notes": [["a", ["b"]]]}).frontmatter["notes"] == [["a", ["b"]]]


def test_merge_writes_a_superseding_memory_and_moves_the_sources_to_trash(concept):
    curator = curator_for(concept)
    a = curator.record_response("deploy release steps", "worked", now=NOW)
    b = curator.record_response("release deploy checklist", "worked", now=NOW)
    curator.score({a.id: "worked", b.id: "failed"}, now=NOW)
    merged = curator.merge([a.id, b.id], "Deploy checklist", now=NOW)
    assert merged.supersedes == (a.id, b.id) and merged.uses == 2 and merged.success_count == 1.0
    assert set(concept.memory_ids()) == {merged.id}
    assert len(list((concept.root / ".trash" / "working").iterdir())) == 2
    with pytest.raises(ValidationError, match="two different"):
        curator.merge([merged.id, merged.id], "x")


def test_a_merge_refuses_when_a_source_was_saved_since_the_index_read_it_and_writes_nothing(concept):
    """The inbox's merge button right after an editor's save: the merged text would lack the edit (and a
    `privacy: private` just added would go into a shared file) while the edited file went to .trash/."""
    curator = curator_for(concept)
    a = curator.record_response("deploy release steps", "worked", now=NOW)
    b = curator.record_response("release deploy checklist", "worked", now=NOW)
    path = concept.root / a.path
    edited = path.read_text() + "Also run the smoke test first.\n"
    path.write_text(edited)  # an editor saves; the index has not read the save yet
    with pytest.raises(ConflictError, match=f"{a.path} changed since memdir read it"):
        curator.merge([a.id, b.id], "Deploy checklist", now=NOW)
    assert path.read_text() == edited and (concept.root / b.path).exists()
    assert set(concept.memory_ids()) == {a.id, b.id} and not (concept.root / ".trash").exists()
    assert sorted(p.name for p in (concept.root / "working").iterdir()) == sorted([path.name, Path(b.path).name])


def test_two_merges_of_the_same_memories_at_once_write_one_merged_memory(concept, monkeypatch):
    """Two sessions merge the same suggestion: both checked the sources before either moved them to .trash/, both
    wrote a merged memory, and the later one then failed on a source already gone, its merged file left behind."""
    import threading

    from vault.lock import WriteLock

    curator = curator_for(concept)
    a = curator.record_response("deploy release steps", "worked", now=NOW)
    b = curator.record_response("release deploy checklist", "worked", now=NOW)
    first_writing, first_goes_on, second_at_lock = threading.Event(), threading.Event(), threading.Event()
    create_new, held = Vault.create_new, WriteLock.held

    def paused_create(self, *args, **kwargs):  # the first merge, between its sources' check and its write
        if threading.current_thread().name == "first":
            first_writing.set()
            assert first_goes_on.wait(30)
        return create_new(self, *args, **kwargs)

    def seen_held(self):
        if threading.current_thread().name == "second":
            second_at_lock.set()
        return held(self)

    monkeypatch.setattr(Vault, "create_new", paused_create)
    monkeypatch.setattr(WriteLock, "held", seen_held)
    results: dict[str, object] = {}

    def merge() -> None:
        name = threading.current_thread().name
        try:
            results[name] = curator.merge([a.id, b.id], f"Deploy checklist ({name})", now=NOW)
        except Exception as exc:  # noqa: BLE001 - asserted below
            results[name] = exc

    first = threading.Thread(target=merge, name="first")
    first.start()
    assert first_writing.wait(30)
    second = threading.Thread(target=merge, name="second")
    second.start()
    assert second_at_lock.wait(30)  # past its check now, or waiting for the first merge to be done
    first_goes_on.set()
    first.join(30)
    second.join(30)
    assert not first.is_alive() and not second.is_alive()
    merged = results["first"]
    assert not isinstance(merged, Exception), merged
    assert isinstance(results["second"], ConflictError), results["second"]
    assert sorted(p.name for p in (concept.root / "working").iterdir()) == [Path(merged.path).name]
    assert set(concept.memory_ids()) == {merged.id}


def test_suggest_merges_clusters_similar_memories(concept):
    curator = curator_for(concept)
    ids = [curator.add(text, type="learning", now=NOW).memory.id
           for text in ("espresso coffee grind", "coffee espresso beans", "postgres database vacuum")]
    clusters = curator.suggest_merges(threshold=0.8)
    assert [set(c.ids) for c in clusters] == [{ids[0], ids[1]}]


def test_gc_through_the_curator_updates_the_index_and_the_log(concept):
    curator = curator_for(concept)
    keep = curator.record_response("keep this", "worked", now=NOW - timedelta(days=2))
    drop = curator.record_response("drop this", now=NOW - timedelta(days=2))
    curator.score({keep.id: "worked"}, now=NOW - timedelta(days=2))
    curator.score({keep.id: "worked"}, now=NOW - timedelta(days=1))
    preview = curator.gc(now=NOW, dry_run=True)
    assert {a.decision.id: a.result for a in preview} == {keep.id: "would promote", drop.id: "would remove"}
    assert concept.get(keep.id).collection == "working"
    curator.gc(now=NOW)
    assert concept.get(keep.id).collection == "history" and concept.get(keep.id).path.startswith("history/")
    assert drop.id not in concept
    log = (concept.root / ".memdir" / "lifecycle.jsonl").read_text().splitlines()
    assert len(log) == 2 and json.loads(log[0])["why"]


def test_a_new_relevant_memory_reaches_the_top_four_against_proven_ones(hashing_root: Path):
    for i in range(4):
        write(hashing_root, f"history/p{i}.md", memory_text(
            f"m-0000000{i}", f"Deploy {i}", f"deploy release steps {i}",
            extra="uses: 10\nsuccess_count: 7.0\nscore: 0.7\noutcomes: [worked, failed, worked, worked, failed]\n"))
    write(hashing_root, "history/new.md", memory_text("m-000000ff", "Deploy", "deploy release steps"))
    index = open_index(hashing_root)
    hits = Searcher(index, SearchSettings()).search(SearchRequest(query="deploy release steps", limit=4, now=NOW))
    assert "m-000000ff" in [h.memory.id for h in hits]
    index.close()


def test_a_memory_failed_repeatedly_falls_below_a_newer_one_that_succeeds(concept):
    curator = curator_for(concept)
    old = curator.add("Deploy by hand from the laptop.", type="learning", collection="history",
                      now=NOW - timedelta(days=40)).memory
    new = curator.add("Deploy by release through CI.", type="learning", collection="history",
                      now=NOW - timedelta(days=1)).memory
    for day in range(3):
        curator.score({old.id: "failed", new.id: "worked"}, now=NOW + timedelta(hours=day))
    hits = Searcher(concept, SearchSettings()).search(SearchRequest(query="deploy", limit=2, now=NOW))
    assert [h.memory.id for h in hits] == [new.id, old.id]


def test_near_duplicates_compare_whole_memories_not_one_of_their_sentences(concept):
    curator = curator_for(concept)
    curator.add("Dana drinks espresso every morning. The database runs on postgres sql.", type="preference", now=NOW)
    added = curator.add("Dana drinks espresso.", type="preference", now=NOW)
    assert added.near_duplicates == () and added.possible_conflicts == ()
