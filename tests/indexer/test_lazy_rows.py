"""A cold open decodes a manifest row when something reads it (lazy_rows.py): a first search reads its hits and the
few memories whose file may say a hidden status, a speaker or a `previous:`, and answers what an index holding every
memory decoded answers; the graph is never built; a sync after such an open ends equal to a rebuild."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from indexer import index as index_module
from indexer import manifest as manifest_module
from indexer.embed import HashingEmbedder
from indexer.index import Index
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from vault import Change, Vault

from .helpers import counting, note, open_index, reader, rebuilt_state, state

TOPICS = ["caching", "deploys", "billing", "search", "logging", "backups", "tokens", "queues", "fonts", "maps"]
QUERIES = ["cache eviction", "deploy rollback", "what did Alice say about billing", "Bob's queue plan",
           "old deploy script", "search ranking", "how to rotate tokens"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Forty plain notes, and one of each kind a search reads beyond its hits: archived, superseded, two speakers, a
    thread of two turns (`previous:`), a note in sections (more than one chunk)."""
    folder = tmp_path / "vault"
    for n in range(40):
        topic = TOPICS[n % len(TOPICS)]
        note(folder, f"history/t{n:02}.md", f"m-t{n:02}", f"Note {n} about {topic}: the {topic} work, step {n}.")
    note(folder, "patterns/archived.md", "m-archived", "The cache eviction rule we dropped.", "status: archived\n")
    note(folder, "patterns/old.md", "m-old", "The old deploy script and its rollback.")
    note(folder, "patterns/new.md", "m-new", "The deploy script with a rollback step.", "supersedes: [m-old]\n",
         "2026-10-02")
    note(folder, "history/alice.md", "m-alice", "Billing runs at night, said Alice.", "speaker: Alice\n")
    note(folder, "history/bob.md", "m-bob", "The queue plan is to shard by tenant.", "speaker: Bob\n")
    note(folder, "history/turn2.md", "m-turn2", "And tokens rotate every week.", "previous: m-t06\n")
    ranking, recall = " ".join(["Search ranking weighs words."] * 45), " ".join(["Search recall counts hits."] * 45)
    note(folder, "patterns/sections.md", "m-sections", f"Intro to search.\n\n## Ranking\n\n{ranking}\n\n## Recall\n\n{recall}")
    return folder


def decoded_rows(monkeypatch) -> list[str]:
    """The id of every memory row decoded from now on."""
    seen: list[str] = []
    real = manifest_module.decode_memory

    def counted(text, layouts=None, held=("", None)):
        memory = real(text, layouts, held)
        seen.append(memory.id)
        return memory
    monkeypatch.setattr(manifest_module, "decode_memory", counted)
    return seen


def answers(index: Index) -> list[list[tuple]]:
    searcher = Searcher(index, SearchSettings(embedder="hashing-256", score_threshold=0.0))
    return [[(h.memory.id, round(h.final, 9), h.channel, h.via, h.successor) for h in
             searcher.search(SearchRequest(query=q, limit=5))] for q in QUERIES]


def test_a_first_search_decodes_its_hits_and_the_few_rows_that_may_name_someone(root: Path, monkeypatch):
    open_index(root).close()
    decoded = decoded_rows(monkeypatch)
    builds: list = []
    real_build = index_module.LinkGraph.build
    monkeypatch.setattr(index_module.LinkGraph, "build", staticmethod(lambda m: builds.append(1) or real_build(m)))
    unit_tables: list = []
    real_units = index_module._row_unit_owners
    monkeypatch.setattr(index_module, "_row_unit_owners", lambda rows: unit_tables.append(1) or real_units(rows))
    index = reader(root)
    at_open = set(decoded)
    assert at_open == {"m-turn2", "m-sections"}  # a `previous:` to place, and the note whose chunks have headings
    settings = SearchSettings(embedder="hashing-256", candidates=5)
    hits = Searcher(index, settings).search(SearchRequest(query="cache eviction", limit=3))
    ids = [h.memory.id for h in hits]
    assert "m-archived" not in ids and ids  # left out by its status, told by its row's lifecycle facts
    assert {"m-alice", "m-bob"} <= set(decoded)  # the speakers: their rows say the words
    candidates = set(decoded) - at_open - {"m-alice", "m-bob"}
    assert len(candidates) <= 2 * settings.candidates  # what the two channels brought, no other row
    assert len(set(decoded)) < index.memory_count() // 2
    assert builds == []  # superseded and successors came from the link table
    assert unit_tables == []  # the vector hits' owners came from the whole units' table
    whole = reader(root)
    assert sorted(index.unit_owners()) == sorted(whole.unit_owners()) and unit_tables == [1, 1]  # made when asked
    assert {role for _, (_, role) in whole.unit_owners()} > {"whole"}  # the other units too, not only the whole ones
    whole.close()
    index.close()


def test_a_first_search_leaves_undecoded_the_rows_whose_text_only_says_speaker_or_author(root: Path, monkeypatch):
    """The people a query names come from the "speaker" and "author" keys: a body that says the words (quoted too)
    names nobody, and its row is not decoded to find that out."""
    note(root, "history/review.md", "m-review", 'The author of the "author" field and the speaker notes: nobody.')
    note(root, "history/carol.md", "m-carol", "Fonts are chosen by the design team.", 'author: Carol\ntags: ["speaker"]\n')
    open_index(root).close()
    index = reader(root)
    decoded = decoded_rows(monkeypatch)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256", candidates=5))
    hits = searcher.search(SearchRequest(query="what did Carol say about fonts", limit=3))
    assert {"m-alice", "m-bob", "m-carol"} <= set(decoded)  # the speakers and the author: their keys
    assert "m-review" not in decoded
    assert hits and hits[0].memory.id == "m-carol"  # named: lifted by the author boost
    assert searcher._people.named("what did Carol say", index.author_names()).people == {"Carol"}
    index.close()


def test_an_index_read_row_by_row_answers_what_one_holding_every_memory_answers(root: Path):
    open_index(root).close()
    lazy = reader(root)
    from_rows = answers(lazy)
    whole = reader(root)
    assert len(list(whole.all_memories())) == whole.memory_count()  # every row decoded before the first search
    assert from_rows == answers(whole)
    by_speaker = dict(zip(QUERIES, from_rows))
    assert by_speaker["what did Alice say about billing"][0][0] == "m-alice"  # the named speaker was found
    assert all(hit[0] not in ("m-archived", "m-old") for hits in from_rows for hit in hits)  # hidden either way
    lazy.close()
    whole.close()


def test_a_superseded_memory_stays_out_of_the_vector_channel_without_decoding_the_others(root: Path, monkeypatch):
    open_index(root).close()
    decoded = decoded_rows(monkeypatch)
    index = reader(root)
    searcher = Searcher(index, SearchSettings(embedder="hashing-256", score_threshold=0.0, candidates=5))
    hits = searcher.search(SearchRequest(query="The old deploy script and its rollback.", mode="vector", limit=3))
    assert "m-old" not in [h.memory.id for h in hits] and hits[0].memory.id == "m-new"
    assert len(set(decoded)) < index.memory_count() // 2
    shown = searcher.search(SearchRequest(query="The old deploy script and its rollback.", mode="vector", limit=3,
                                          include_superseded=True))
    assert shown[0].memory.id == "m-old" and shown[0].successor == "m-new"
    index.close()


def test_a_sync_after_a_lazy_open_ends_equal_to_a_rebuild(root: Path, tmp_path: Path):
    open_index(root).close()
    owner = Index.open(Vault(root), HashingEmbedder(), reconcile=False)  # no heal, no walk: the rows stay unread
    note(root, "history/t01.md", "m-t01", "Note 1 rewritten: caching moved to the edge.")  # same id, new text
    (root / "history" / "t02.md").unlink()
    note(root, "history/t03.md", "M-T03", "Note 3 about billing: the billing work, step 3.")  # the id's case changed
    note(root, "history/turn3.md", "m-turn3", "Then the queue drains.", "previous: m-t04\n")  # a new thread's turn
    note(root, "history/t05.md", "m-t05", "Note 5 about backups, now archived.", "status: archived\n")
    owner.sync(["history/t01.md", "history/t02.md", "history/t03.md", "history/turn3.md", "history/t05.md"])
    assert {k: v for k, v in state(owner).items() if k != "vectors"} == rebuilt_state(root, tmp_path)
    kind = owner.memory("m-t01").type  # type: ignore[union-attr]
    assert owner.find_duplicate("Note 1 rewritten: caching moved to the edge.", kind) is not None
    assert owner.find_duplicate("Note 1 about deploys: the deploys work, step 1.", kind) is None
    owner.close()
    cold = reader(root)
    hits = Searcher(cold, SearchSettings(embedder="hashing-256")).search(SearchRequest(query="backups archived"))
    assert "m-t05" not in [h.memory.id for h in hits]
    cold.close()


def test_counter_changes_after_a_lazy_open_embed_nothing(root: Path):
    open_index(root).close()
    owner = Index.open(Vault(root), HashingEmbedder(), reconcile=False)
    before = counting(owner).misses
    vault = Vault(root)
    for memory_id in ("m-t07", "m-turn2", "m-t06", "m-sections"):  # a plain one, a thread's two turns, sections
        vault.edit(owner.get(memory_id), Change(derive=lambda m: {"uses": m.uses + 1, "last_outcome": "worked"}))
    report = owner.sync(["history/t07.md", "history/turn2.md", "history/t06.md", "patterns/sections.md"])
    assert report.updated == 4 and report.embedded == 0 and counting(owner).misses == before
    owner.close()


def test_rows_decoded_after_the_open_are_frozen_out_of_the_collectors_walks_in_batches(root: Path, monkeypatch):
    """A full collection walked every memory a search had decoded since the open (up to 92 ms at 100k memories);
    decoded rows are frozen in batches instead, as a load's objects are (collector.Lasting)."""
    from indexer import lazy_rows

    open_index(root).close()
    monkeypatch.setattr(lazy_rows, "FREEZE_EVERY", 8)
    index = reader(root)
    frozen = gc.get_freeze_count()
    try:
        paths = [m.path for m in list(index.all_memories())[:20]]  # decodes their rows: two batches of 8 and 4 more
        assert gc.get_freeze_count() > frozen
        tracked = {id(o) for o in gc.get_objects()}  # what the collector still walks (the frozen are not listed)
        walked = [p for p in paths if id(index.entry(p)) in tracked]
        assert len(walked) <= 8  # the last rows decoded wait for the next batch
    finally:
        gc.unfreeze()
        index.close()
