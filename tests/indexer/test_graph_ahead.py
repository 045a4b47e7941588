"""The link graph of a reopened index (which answered from the generation's link table) is built from the manifest's
rows, decoding only the memories whose text may hold a link; a sync of changed files builds it, and the table of every
unit, before it takes the index lock, so searches go on meanwhile."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from indexer import graph as graph_module
from indexer import index as index_module
from indexer.embed import HashingEmbedder
from indexer.graph import LinkGraph
from indexer.index import Index
from tests.conftest import memory_text, write
from tests.reliability.harness import new_vault
from vault import Vault, atomic

from .helpers import rebuilt_state, state

PLAIN = 40


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = new_vault(tmp_path / "vault")
    for n in range(PLAIN):
        write(folder, f"history/p{n:02}.md", memory_text(f"m-0000a0{n:02}", f"Plain {n}", f"nothing links from note {n}"))
    write(folder, "history/linker.md", memory_text("m-0000b001", "Linker", "see [[p03]] and [[history/p04]]"))
    write(folder, "history/newer.md", memory_text("m-0000b002", "Newer", "the newer rule",
                                                  extra="supersedes: [m-0000a005]\n"))
    write(folder, "history/needs.md", memory_text("m-0000b003", "Needs", "needs the plain one",
                                                  extra="depends_on: [m-0000a006]\n"))
    write(folder, "history/ghostly.md", memory_text("m-0000b004", "Ghostly", "points at [[not-written-yet]]"))
    return folder


def reopened(root: Path) -> Index:
    Index.open(Vault(root), HashingEmbedder()).close()
    return Index.open(Vault(root), HashingEmbedder())  # rows undecoded, the links read from the table


def test_the_graph_built_from_the_rows_decodes_only_the_linking_memories_and_equals_a_rebuilds(
        root: Path, tmp_path: Path):
    index = reopened(root)
    assert index._graph is None
    undecoded = index._entries._undecoded
    edges = index.links.to_edge_list()
    assert undecoded - index._entries._undecoded == 4  # the linker, the superseding, the depending and the ghostly
    fresh = Index.open(Vault(root), HashingEmbedder())
    try:
        assert edges == rebuilt_state(root, tmp_path / "rebuilt")["graph"]
        assert index.links.link_rows() == index.manifest.link_rows()
    finally:
        fresh.close()
        index.close()


def test_a_sync_of_a_changed_file_makes_the_graph_and_the_unit_table_without_the_index_lock(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    index = reopened(root)
    held: list[tuple[str, bool]] = []
    real_build = graph_module.LinkGraph.build.__func__  # type: ignore[attr-defined]
    real_units = index_module._row_unit_owners

    def build(cls, memories):  # type: ignore[no-untyped-def]
        held.append(("graph", index.lock._is_owned()))
        return real_build(cls, memories)

    def units(rows):  # type: ignore[no-untyped-def]
        held.append(("units", index.lock._is_owned()))
        return real_units(rows)

    monkeypatch.setattr(index_module.LinkGraph, "build", classmethod(build))
    monkeypatch.setattr(index_module, "_row_unit_owners", units)
    write(root, "history/p07.md", memory_text("m-0000a007", "Plain 7", "now it links to [[p08]]"))
    index.sync(["history/p07.md"])
    assert held == [("graph", False), ("units", False)]  # each made once, before the lock
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


def test_a_graph_made_ahead_is_not_put_in_place_once_a_memory_changed_after_it_began(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    index = reopened(root)
    real_build = graph_module.LinkGraph.build.__func__  # type: ignore[attr-defined]

    def build(cls, memories):  # type: ignore[no-untyped-def]
        made = real_build(cls, memories)
        with index.lock:  # as a sync running meanwhile would: a memory remembered again
            index._remember(index.memory("m-0000a009"))
        return made

    monkeypatch.setattr(index_module.LinkGraph, "build", classmethod(build))
    write(root, "history/p09.md", memory_text("m-0000a009", "Plain 9", "now linking [[p10]]"))
    index._ahead_of_a_change(["history/p09.md"], index._read_ahead(["history/p09.md"]))
    assert index._graph is None  # made from the memories before: left for the sync to make under the lock
    assert index._all_units is not None  # the open's rows did not change
    monkeypatch.undo()
    index.sync(["history/p09.md"])
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


def test_the_first_read_of_the_graph_after_a_reopen_builds_it_without_the_index_lock(
        root: Path, monkeypatch: pytest.MonkeyPatch):
    # A supersedes link is checked for a cycle through the graph (session 19) before its write: the first one after a
    # reopen built the whole graph with the index lock held, every search waiting (about 4 CPU s at 100k, s17).
    index = reopened(root)
    held: list[bool] = []
    real_build = graph_module.LinkGraph.build.__func__  # type: ignore[attr-defined]

    def build(cls, memories):  # type: ignore[no-untyped-def]
        held.append(index.lock._is_owned())
        return real_build(cls, memories)

    monkeypatch.setattr(index_module.LinkGraph, "build", classmethod(build))
    assert index.links.supersedes("m-0000b002", "m-0000a005")
    assert held == [False] and index.links is index.links
    index.close()


def builds_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per LinkGraph.build from now on, each still made."""
    built: list[int] = []
    real_build = graph_module.LinkGraph.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(index_module.LinkGraph, "build",
                        classmethod(lambda cls, memories: built.append(1) or real_build(cls, memories)))
    return built


def test_a_captured_exchange_is_indexed_without_building_the_graph_which_built_later_equals_a_rebuilds(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    index = reopened(root)
    built = builds_counted(monkeypatch)
    reads: dict[str, int] = {}
    real_read = atomic.read_bytes
    monkeypatch.setattr(atomic, "read_bytes", lambda path, *args, **kwargs: reads.update(
        {Path(path).name: reads.get(Path(path).name, 0) + 1}) or real_read(path, *args, **kwargs))
    for n in range(2):  # a new file, a new id, no link, a name no link asks for
        write(root, f"working/exchange-{n}.md", memory_text(f"m-0000c00{n}", f"Exchange {n}", f"User: why?\n\nAssistant: {n}",
                                                            extra=f"previous: m-0000c00{n - 1}\n" if n else ""))
        index.sync([f"working/exchange-{n}.md"])
    write(root, "working/exchange-0.md", memory_text("m-0000c000", "Exchange 0", "User: why?\n\nAssistant: 0",
                                                     extra="restated: 2\n"))  # the same exchange captured again
    write(root, "history/p01.md", memory_text("m-0000a001", "Plain 1", "nothing links from note 1", extra="uses: 4\n"))
    index.sync(["working/exchange-0.md", "history/p01.md"])
    assert built == [] and index._graph is None  # on main: built at the first capture (~2 CPU s at 100k)
    # each file read once a sync: the reads that told no graph was needed are the sync's (s21's try read them twice)
    assert reads == {"exchange-0.md": 2, "exchange-1.md": 1, "p01.md": 1}
    assert index.links.backlinks("m-0000a003")[0].source == "m-0000b001"  # built now, from the memories as they are
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


@pytest.mark.parametrize("files", [
    {"history/not-written-yet.md": "a note a link was waiting for"},  # its name is asked for: the ghost becomes an edge
    {"history/new-linker.md": "see [[p03]]"},  # it links
    {"history/fresh.md": "a fresh note", "history/later.md": "it links to [[fresh]]"},  # one sync: the second links to the first
])
def test_a_new_memory_that_links_or_whose_name_a_link_asks_for_builds_the_graph(
        root: Path, tmp_path: Path, files: dict[str, str]):
    index = reopened(root)
    for number, (path, body) in enumerate(files.items()):
        write(root, path, memory_text(f"m-0000d00{number}", f"New {number}", body))
    index.sync(list(files))
    assert index._graph is not None
    assert index.manifest.link_rows() == index.links.link_rows()
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


@pytest.mark.parametrize("files", [
    {"history/linker.md": ("m-0000b001", "it links nowhere now")},  # its links go
    {"history/p02.md": ("m-0000a002", "now it points at [[not-written-yet]]")},  # a plain one links
    {"history/p02.md": ("m-0000e002", "nothing links from note 2")},  # another id in the same file
    {"a/p.md": ("m-0000a003", "nothing links from note 3")},  # an indexed id in a new file, which takes it (a shorter
])                                                            # path): [[p03]] finds no memory now
def test_an_indexed_memory_whose_links_or_names_change_builds_the_graph(
        root: Path, tmp_path: Path, files: dict[str, tuple[str, str]]):
    index = reopened(root)
    for path, (memory_id, body) in files.items():
        write(root, path, memory_text(memory_id, "Changed", body))
    index.sync(list(files))
    assert index._graph is not None
    assert index.manifest.link_rows() == index.links.link_rows()
    assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    index.close()


# --- random differential: the graph a sync leaves unbuilt, or keeps, equals a rebuild's ------------------------------

NAMES = ["alpha", "beta", "gamma", "delta"]  # stems notes take, and links ask for
FOLDERS = ["notes", "history", "patterns"]


def _front(text: str) -> tuple[str, str]:
    head, _, body = text.partition("\n---\n")
    return head + "\n", body


def _link(rng: random.Random, ids: list[str]) -> str:
    """A link to a stem, a path, an id, or a name no note has yet (a ghost a later note may take)."""
    pick = rng.random()
    if pick < 0.3:
        return f"[[{rng.choice(NAMES)}]]"
    if pick < 0.5:
        return f"[[{rng.choice(FOLDERS)}/{rng.choice(NAMES)}]]"
    if pick < 0.75 and ids:
        return f"[[{rng.choice(ids)}]]"
    return f"[[ghost-{rng.randint(0, 2)}]]"


def _ids(root: Path) -> dict[str, str]:
    """path -> id of each memory file."""
    found = {}
    for file in sorted(root.rglob("*.md")):
        if ".memdir" not in file.parts and (match := re.search(r"^id: (\S+)$", file.read_text(), re.M)):
            found[file.relative_to(root).as_posix()] = match.group(1)
    return found


def _change(root: Path, rng: random.Random, step: int, kind: str) -> list[str]:
    """One change to the vault's files, as a capture, an editor or a git pull makes it; the paths it touched."""
    files = _ids(root)
    ids = list(files.values())
    exchanges = sorted(path for path in files if path.startswith("working/"))
    if kind == "capture" or not files:
        path = f"working/exchange-{step}.md"
        extra = f"previous: {files[exchanges[-1]]}\n" if exchanges else ""
        write(root, path, memory_text(f"m-{0xc0000000 + step:08x}", f"Turn {step}",
                                      f"User: why {step}?\n\nAssistant: because {step}", collection="working",
                                      extra=extra))
        return [path]
    if kind == "note":
        name = rng.choice([*NAMES, "ghost-0", "ghost-1", "ghost-2", "ghost-0", f"fresh-{step}"])  # asked for, mostly
        path = f"{rng.choice(FOLDERS)}/{name}.md"
        extra = rng.choice(["", "", f"supersedes: [{rng.choice(ids)}]\n", f"depends_on: [{rng.choice(ids)}]\n"])
        body = f"note {step}" + (f" see {_link(rng, ids)}" if rng.random() < 0.4 else "")
        write(root, path, memory_text(f"m-{0xd0000000 + step:08x}", f"Note {step}", body, extra=extra))
        return [path]
    linking = sorted(path for path in files
                     if re.search(r"\[\[|^(supersedes|depends_on):", (root / path).read_text(), re.M))
    path = rng.choice(exchanges if kind == "restate" and exchanges else linking if kind == "unlink" and linking
                      else sorted(files))
    head, body = _front((root / path).read_text())
    if kind in ("restate", "counter"):
        key = "restated" if kind == "restate" else "uses"
        head = re.sub(rf"^{key}: .*\n", "", head, flags=re.M) + f"{key}: {step}\n"
    elif kind == "link":
        body = body.rstrip("\n") + f" and {_link(rng, ids)}\n"
    elif kind == "unlink":
        body = re.sub(r"\[\[[^\]]*\]\]", "that", body)
        head = re.sub(r"^(supersedes|depends_on): .*\n", "", head, flags=re.M)
    elif kind == "typed":
        head += f"{rng.choice(['supersedes', 'depends_on'])}: [{rng.choice(ids)}]\n"
    elif kind == "reid":
        head = re.sub(r"^id: .*$", f"id: m-{0xe0000000 + step:08x}", head, flags=re.M)
    elif kind == "rename":
        destination = f"{rng.choice(FOLDERS)}/{rng.choice([*NAMES, f'moved-{step}'])}.md"
        if (root / destination).exists():
            return []
        (root / destination).parent.mkdir(exist_ok=True)
        (root / path).rename(root / destination)
        return [path, destination]
    elif kind == "delete":
        (root / path).unlink()
        return [path]
    elif kind == "copy":  # the same id in two files: the one it takes precedence by holds it
        destination = f"{rng.choice(FOLDERS)}/{rng.choice([*NAMES, f'copy-{step}'])}.md"
        if (root / destination).exists():
            return []
        (root / destination).parent.mkdir(exist_ok=True)
        (root / destination).write_text((root / path).read_text())
        return [destination]
    (root / path).write_text(head + "---\n" + body)
    return [path]


def _graph_of_the_memories(index: Index) -> LinkGraph:
    return LinkGraph.build(list(index.all_memories()))


# Reopened often: the graph, once a sync needs it, stays built until then.
KINDS = ["capture", "capture", "capture", "restate", "counter", "note", "note", "link", "unlink", "unlink", "typed",
         "reid", "rename", "delete", "copy", "graph", "reopen", "reopen", "reopen"]


@pytest.mark.parametrize("seed", range(4))
def test_after_any_mix_of_captures_link_edits_renames_and_deletes_the_graph_and_link_table_equal_a_rebuilds(
        tmp_path: Path, seed: int):
    # Each sync's link table (and the graph, when built) is checked against a graph built from the memories then; the
    # whole index against a rebuild at the end. Random operations from a seed, synced one or a few at a time.
    root = new_vault(tmp_path / "vault")
    rng = random.Random(seed)
    write(root, "notes/alpha.md", memory_text("m-0000a001", "Alpha", "the first note"))
    write(root, "notes/beta.md", memory_text("m-0000a002", "Beta", "see [[alpha]] and [[ghost-0]]"))
    write(root, "history/gamma.md", memory_text("m-0000a003", "Gamma", "the rule", extra="supersedes: [m-0000a001]\n"))
    index = reopened(root)
    skipped = 0  # syncs that changed memories and left the graph unbuilt
    pending: list[str] = []
    try:
        steps, done = 40, []
        for step in range(steps):
            kind = "capture" if step == 0 else rng.choice(KINDS)
            if kind == "graph":
                index.links  # noqa: B018 - built now: the later syncs change it in place
            elif kind == "reopen":
                index.close()
                index = Index.open(Vault(root), HashingEmbedder())  # the graph unbuilt again, the table read
            else:
                pending += _change(root, rng, step, kind)
            done.append(kind)
            if pending and (step == 0 or rng.random() < 0.5 or kind == "reopen" or step == steps - 1):
                done.append("sync")
                unbuilt = index._graph is None
                report = index.sync(sorted(set(pending)))
                pending = []
                skipped += unbuilt and index._graph is None and report.added + report.updated > 0
                expected = _graph_of_the_memories(index)
                assert index.manifest.link_rows() == expected.link_rows(), done
                if index._graph is not None:
                    assert index._graph.to_edge_list() == expected.to_edge_list(), done
                    assert index._graph.to_node_list() == expected.to_node_list()
                    assert index._graph.ambiguous_links() == expected.ambiguous_links()
        assert skipped, "the first capture left the graph unbuilt"
        assert index.links.link_rows() == index.manifest.link_rows()
        assert {k: v for k, v in state(index).items() if k != "vectors"} == rebuilt_state(root, tmp_path / "rebuilt")
    finally:
        index.close()
