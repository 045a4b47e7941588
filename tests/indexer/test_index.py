from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer.embed import HashingEmbedder
from indexer.generations import Layout
from indexer.index import Index
from indexer.rebuild import rebuild
from tests.conftest import memory_text, write
from tests.indexer.helpers import counting, fresh_rebuild, open_index, state, top_ids
from vault import Change, Vault


def test_the_example_vault_indexes_completely_with_chunked_documents(example_root: Path):
    index = open_index(example_root)
    assert index.memory_count() == 36 and index.problems() == []
    runbook = index.get("m-d2e9f4a0")
    headings = {index.chunk_owner(c)[1] for c in index.entry(runbook.path).chunk_ids}
    assert len(headings) >= 6 and any(" > " in h for h in headings)
    assert index.get("M-D2E9F4A0") is runbook  # ids are case-insensitive
    index.close()


def test_a_broken_file_is_skipped_and_reported_while_the_rest_index(hashing_root: Path):
    write(hashing_root, "history/good.md", memory_text("m-00000001", "Good", "fine"))
    write(hashing_root, "history/bad.md", "---\ntitle: x\nscore: 9\n---\nbody\n")
    index = open_index(hashing_root)
    assert list(index.memory_ids()) == ["m-00000001"]
    assert [(p.path, p.line) for p in index.problems()] == [("history/bad.md", 3)]
    write(hashing_root, "history/bad.md", "---\ntitle: x\nscore: 0.9\n---\nbody\n")
    index.sync()
    assert index.memory_count() == 2 and index.problems() == []
    index.close()


def test_counter_changes_cause_zero_embedding_calls(example_root: Path):
    index = open_index(example_root)
    embedder = counting(index)
    before = embedder.misses
    vault = Vault(example_root)
    scored = [m for m in index.all_memories() if m.has_frontmatter][:10]
    for memory in scored:
        vault.edit(memory, Change(derive=lambda m: {"uses": m.uses + 1, "last_outcome": "worked"}))
    report = index.sync()
    assert report.updated == len(scored) == 10 and report.embedded == 0 and embedder.misses == before
    index.close()


def test_editing_the_body_re_embeds_only_the_new_texts_of_that_memory(example_root: Path):
    index = open_index(example_root)
    embedder = counting(index)
    before = embedder.misses
    path = example_root / "patterns" / "uv-run-everything.md"
    path.write_text(path.read_text() + "\nAlso for pre-commit hooks.\n")
    report = index.sync()
    assert report.updated == 1 and embedder.misses == before + 2  # the whole memory and its new sentence
    index.close()


def test_edits_made_while_no_index_was_open_are_reconciled_on_open(example_root: Path):
    open_index(example_root).close()
    (example_root / "patterns" / "uv-run-everything.md").unlink()
    write(example_root, "history/new.md", memory_text("m-0000abcd", "Brand new", "made while closed"))
    index = open_index(example_root)
    assert "m-0000abcd" in index and "m-4b9e0c17" not in index
    index.close()


def test_the_older_file_keeps_a_duplicated_id_and_the_other_takes_over_when_it_goes(hashing_root: Path):
    write(hashing_root, "history/first.md", memory_text("m-00000042", "First", "one"))
    index = open_index(hashing_root)
    copy = memory_text("m-00000042", "Copy", "two").replace("2026-11-01", "2026-11-05")
    write(hashing_root, "history/copy.md", copy)
    index.sync()
    assert index.get("m-00000042").path == "history/first.md"
    assert "duplicate id" in index.problems()[0].reason
    (hashing_root / "history" / "first.md").unlink()
    index.sync()
    assert index.get("m-00000042").path == "history/copy.md" and index.problems() == []
    index.close()


def test_a_duplicate_that_takes_over_and_goes_in_the_same_sync_leaves_no_row_to_restart_from(hashing_root: Path):
    write(hashing_root, "history/a.md", memory_text("m-00000042", "Holder", "one"))
    write(hashing_root, "patterns/b.md", memory_text("m-00000042", "Twin", "two"))  # same age, longer path: the twin
    index = open_index(hashing_root)
    assert index.get("m-00000042").path == "history/a.md"
    (hashing_root / "history" / "a.md").unlink()  # the holder goes first (sorted), so the twin takes over...
    (hashing_root / "patterns" / "b.md").unlink()  # ...and is found gone later in the same sync
    index.sync()
    assert [e.path for e in index.manifest.entries()] == []
    index.close()
    index = open_index(hashing_root)  # the restart starts from the manifest
    restarted = state(index)
    index.close()
    fresh = fresh_rebuild(hashing_root)
    assert restarted == state(fresh)
    fresh.close()


def test_a_crash_that_left_faiss_and_whoosh_out_of_step_is_healed_on_open(example_root: Path):
    index = open_index(example_root)
    expected = state(index)
    victim = next(iter(index.unit_owners()))[0]
    index._vectors.remove([victim])
    index._vectors.save(index.generation)
    index._keyword.delete_chunks([next(iter(index._chunk_owner)), list(index._chunk_owner)[5]])
    index.close()
    healed = open_index(example_root)
    assert state(healed) == expected
    healed.close()


def test_an_index_built_by_another_model_is_rebuilt_not_migrated(example_root: Path):
    open_index(example_root).close()
    old = Layout(example_root).current()
    index = Index.open(Vault(example_root), HashingEmbedder(dim=128))
    assert index.generation != old and not old.exists() and index._vectors.dim == 128
    assert index.memory_count() == 36
    index.close()


def test_rebuild_swaps_in_a_new_generation_and_removes_the_old(example_root: Path):
    open_index(example_root).close()
    old = Layout(example_root).current()
    report = rebuild(Vault(example_root), HashingEmbedder())
    new = Layout(example_root).current()
    assert report.memories == 36 and new != old and not old.exists()
    assert json.loads((new / "meta.json").read_text())["embedder"] == "hashing-256"


def test_a_second_process_gets_a_read_only_index_while_the_first_owns_it(example_root: Path):
    owner = open_index(example_root)
    reader = open_index(example_root)
    assert owner.writable and not reader.writable
    assert reader.memory_count() == 36
    reader.close()
    owner.close()


# --- sequence context (previous:) ---------------------------------------------------------

def _turn(memory_id: str, body: str, previous: str | None = None, extra: str = "") -> str:
    line = f"previous: {previous}\n" if previous else ""
    return memory_text(memory_id, f"Turn {memory_id[-1]}", body, extra=line + extra)


def _roles(index: Index, memory_id: str) -> list[str]:
    return sorted(role for _, (owner, role) in index.unit_owners() if owner == memory_id)


def test_a_memory_knows_its_previous_and_next_and_reads_them_in_context_units(hashing_root: Path):
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: What did you paint?"))
    write(hashing_root, "history/b.md", _turn("m-0000000b", "Sam: A sunset over the lake.", '"[[m-0000000a]]"'))
    write(hashing_root, "history/c.md", _turn("m-0000000c", "Dana: Lovely colours.", "m-0000000b"))
    index = open_index(hashing_root)
    assert index.previous_of("m-0000000b").id == "m-0000000a" and index.next_of("m-0000000b").id == "m-0000000c"
    assert index.previous_of("m-0000000a") is None and index.next_of("m-0000000c") is None
    assert _roles(index, "m-0000000a") == ["next", "whole"]
    assert _roles(index, "m-0000000b") == ["next", "previous", "whole"]
    assert _roles(index, "m-0000000c") == ["previous", "whole"]
    index.close()


def test_editing_a_memory_re_embeds_its_neighbours_context_units_and_nothing_else(hashing_root: Path):
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: What did you paint?"))
    write(hashing_root, "history/b.md", _turn("m-0000000b", "Sam: A sunset over the lake.", "m-0000000a"))
    write(hashing_root, "history/c.md", _turn("m-0000000c", "Dana: Lovely colours.", "m-0000000b"))
    write(hashing_root, "history/d.md", _turn("m-0000000d", "Dana: Unrelated and alone."))
    index = open_index(hashing_root)
    embedder = counting(index)
    before = embedder.misses
    (hashing_root / "history" / "b.md").write_text(_turn("m-0000000b", "Sam: A storm over the sea.", "m-0000000a"))
    report = index.sync()
    # b: whole, previous, next; a's next unit is b's previous, c's previous is b's next (one text each). d is untouched.
    assert report.updated == 1 and embedder.misses == before + 3
    index.close()


def test_a_counter_change_on_a_linked_memory_causes_zero_embedding_calls(hashing_root: Path):
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: What did you paint?"))
    write(hashing_root, "history/b.md", _turn("m-0000000b", "Sam: A sunset over the lake.", "m-0000000a"))
    index = open_index(hashing_root)
    before = counting(index).misses
    vault = Vault(hashing_root)
    for memory_id in ("m-0000000a", "m-0000000b"):
        vault.edit(index.get(memory_id), Change(derive=lambda m: {"uses": m.uses + 1}))
    report = index.sync()
    assert report.updated == 2 and report.embedded == 0 and counting(index).misses == before
    index.close()


def test_a_previous_that_arrives_later_or_leaves_relinks_its_neighbour_as_a_rebuild_would(hashing_root: Path):
    write(hashing_root, "history/b.md", _turn("m-0000000b", "Sam: A sunset over the lake.", "m-0000000a"))
    index = open_index(hashing_root)
    assert index.previous_of("m-0000000b") is None and _roles(index, "m-0000000b") == ["whole"]
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: What did you paint?"))
    index.sync()
    assert index.previous_of("m-0000000b").id == "m-0000000a" and _roles(index, "m-0000000b") == ["previous", "whole"]
    linked = state(index)
    (hashing_root / "history" / "a.md").unlink()
    index.sync()
    assert _roles(index, "m-0000000b") == ["whole"]
    index.close()
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: What did you paint?"))
    assert state(fresh_rebuild(hashing_root)) == linked


def test_when_two_memories_name_the_same_previous_the_earliest_captured_is_its_next(hashing_root: Path):
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: What did you paint?"))
    later = _turn("m-0000000b", "Sam: A sunset.", "m-0000000a").replace("2026-11-01", "2026-11-03")
    write(hashing_root, "history/b.md", later)
    write(hashing_root, "history/c.md", _turn("m-0000000c", "Kim: A storm.", "m-0000000a"))
    index = open_index(hashing_root)
    assert index.next_of("m-0000000a").id == "m-0000000c"
    assert index.previous_of("m-0000000b").id == index.previous_of("m-0000000c").id == "m-0000000a"
    index.close()


def test_a_private_neighbour_lends_its_text_only_to_private_memories(hashing_root: Path):
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: My salary is secret.", extra="privacy: private\n"))
    write(hashing_root, "history/b.md", _turn("m-0000000b", "Sam: Noted.", "m-0000000a"))
    write(hashing_root, "history/c.md", _turn("m-0000000c", "Sam: Understood.", "m-0000000a", "privacy: private\n"))
    index = open_index(hashing_root)
    assert index.previous_of("m-0000000b").id == "m-0000000a"
    assert index.neighbours(index.get("m-0000000b")).previous == ""
    assert index.neighbours(index.get("m-0000000c")).previous == "Dana: My salary is secret."
    assert top_ids(index, "salary", privacy=("shared",)) == []
    index.close()


# --- incremental == rebuild ----------------------------------------------------------------

WORDS = "postgres lock celery retry ledger currency deploy fly import statement parser timezone".split()


def _body(rng: random.Random) -> str:
    sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))).capitalize() + "."
                 for _ in range(rng.randint(1, 3))]
    link = f" See [[note-{rng.randint(0, 7)}]]." if rng.random() < 0.5 else ""
    return " ".join(sentences) + link


def _ids(files: list[Path]) -> list[str]:
    return [match.group(1) for f in files if (match := re.search(r"^id: (\S+)$", f.read_text(), re.M))]


def _previous_line(rng: random.Random, ids: list[str], step: int) -> str:
    """A `previous:` naming a memory that exists, one that may come later, or (rarely) itself-to-be."""
    target = rng.choice(ids) if ids and rng.random() < 0.8 else f"m-{step + rng.randint(0, 3):08x}"
    return f'previous: "[[{target}]]"\n' if rng.random() < 0.5 else f"previous: {target}\n"


def _operation(root: Path, rng: random.Random, step: int) -> None:
    files = sorted(p for p in root.rglob("*.md") if ".memdir" not in p.parts)
    kind = rng.choice(["create", "create", "edit", "counter", "rename", "delete", "duplicate", "break",
                       "link", "link", "unlink", "private"])
    if kind == "create" or not files:
        number = rng.randint(0, 7)
        extra = _previous_line(rng, _ids(files), step) if rng.random() < 0.6 else ""
        write(root, f"{rng.choice(['history', 'notes'])}/note-{number}.md",
              memory_text(f"m-{step:08x}", f"Note {number}", _body(rng), extra=extra))
        return
    target = rng.choice(files)
    text = target.read_text()
    if kind == "edit":
        target.write_text(text + _body(rng) + "\n")
    elif kind == "counter":
        if text.startswith("---\nid:"):
            target.write_text(text.replace("type: learning\n", "type: learning\nuses: 3\n", 1))
    elif kind == "rename":
        destination = root / "patterns" / f"renamed-{step}.md"
        destination.parent.mkdir(exist_ok=True)
        target.rename(destination)
    elif kind == "delete":
        target.unlink()
    elif kind == "duplicate":
        (root / "history").mkdir(exist_ok=True)
        shutil.copy(target, root / "history" / f"copy-{step}.md")
    elif kind == "break":
        target.write_text("---\ntitle: [unclosed\n---\nbroken\n")
    elif kind in ("link", "unlink", "private") and text.startswith("---\nid:"):
        text = re.sub(r"^previous: .*\n", "", text, flags=re.M) if kind != "private" else text
        private = "privacy: private\n" if "privacy:" not in text else ""
        addition = {"link": _previous_line(rng, _ids(files), step), "unlink": "", "private": private}[kind]
        target.write_text(text.replace("type: learning\n", "type: learning\n" + addition, 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), steps=st.integers(1, 25), sync_every=st.integers(1, 5))
def test_incremental_updates_after_random_operations_equal_a_full_rebuild(tmp_path_factory, seed, steps, sync_every):
    root = tmp_path_factory.mktemp("incremental")
    rng = random.Random(seed)
    index = open_index(root)
    for step in range(steps):
        _operation(root, rng, step)
        if step % sync_every == 0:
            index.sync()
    index.sync()
    index.compact()
    incremental = state(index)
    queries = [top_ids(index, q, limit=5) for q in ("postgres lock", "celery retry ledger", "timezone parser")]
    index.close()
    shutil.rmtree(root / ".memdir" / "index")
    fresh = open_index(root)
    assert state(fresh) == incremental
    assert [top_ids(fresh, q, limit=5) for q in ("postgres lock", "celery retry ledger", "timezone parser")] == queries
    fresh.close()


def test_a_git_checkout_of_200_files_ends_equal_to_a_rebuild(tmp_path: Path):
    root = tmp_path / "repo"
    for i in range(200):
        write(root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"postgres lock number {i}"))
    git = lambda *a: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=root,  # noqa: E731
                                    check=True, capture_output=True)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "other")
    for i in range(200):
        write(root, f"history/n{i}.md", memory_text(f"m-{i:08x}", f"Note {i}", f"celery retry variant {i}"))
    git("commit", "-qam", "other")
    git("checkout", "-q", "master" if "master" in git("branch").stdout.decode() else "main")
    index = open_index(root)
    git("checkout", "-q", "other")
    report = index.sync()
    assert report.updated == 200
    incremental = state(index)
    index.close()
    shutil.rmtree(root / ".memdir" / "index")
    assert state(open_index(root)) == incremental


def test_syncing_an_explicit_dot_folder_path_never_indexes_it(hashing_root: Path):
    index = open_index(hashing_root)
    write(hashing_root, ".trash/history/old.md", memory_text("m-0000dead", "Trashed", "gone"))
    index.sync([".trash/history/old.md", hashing_root / ".trash" / "history" / "old.md"])
    assert index.memory_count() == 0
    index.close()


def test_files_in_dot_folders_are_never_indexed(hashing_root: Path):
    for folder in (".obsidian", ".trash", ".git", ".memdir/x"):
        write(hashing_root, f"{folder}/note.md", memory_text("m-0000dead", "Hidden", "secret"))
    index = open_index(hashing_root)
    assert index.memory_count() == 0 and index.problems() == []
    index.close()
    assert os.path.exists(hashing_root / ".trash" / "note.md")


def test_a_saved_memory_is_appended_to_the_vector_log_and_a_restart_or_reader_sees_it(example_root: Path):
    index = open_index(example_root)
    snapshot = {name: (index.generation / name).stat().st_ino for name in ("vectors.faiss", "units.f16")}
    write(example_root, "history/new.md", memory_text("m-0000abcd", "Brand new", "Espresso machine descaling. Weekly."))
    path = example_root / "patterns" / "uv-run-everything.md"
    path.write_text(path.read_text() + "\nAlso for pre-commit hooks.\n")
    (example_root / "patterns" / "retry-celery-tasks-idempotently.md").unlink()
    index.sync()
    assert {name: (index.generation / name).stat().st_ino for name in snapshot} == snapshot  # not rewritten
    assert (index.generation / "vectors.log").stat().st_size > 0
    expected = state(index)
    reader = Index(index.vault, HashingEmbedder(), index.generation, writable=False)  # loads snapshot + log
    assert state(reader) == expected
    reader.close()
    index.close()
    restarted = open_index(example_root)
    assert state(restarted) == expected
    restarted.close()
    fresh = fresh_rebuild(example_root)
    assert state(fresh) == expected
    fresh.close()
