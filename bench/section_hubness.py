"""Can a book section's hubness tell the section that answers from one that is merely on the topic? (issue 26)

On fresh notes asked in other words, memdir loses to plain cosine mostly because a book section (the example
vault's runbook, Postgres cheatsheet, schema reference) ranks above the note; the book-question sets need those
sections as answers. CSLS (cross-domain similarity local scaling) would lower a section that sits close to
everything: score = cos(q, d) - beta * r_d, with r_d the mean cosine of the section to its k nearest chunks of
other memories (or to a fixed bank of generic questions: the coding set's 204), a property of the section alone,
computed at index time. This bench measures whether r_d can do
that job at all, on the sets memdir is tuned on (never the served hold-out):

  intruders  every book section memdir (default settings, in-process, as the served runs rank) puts above the
             wanted memory on the served example set, the served notes set (both the example vault alone, the
             fresh memories written in-process) and the fresh-paraphrase set;
  answers    every section a question of the book sets (bench/book_questions_set.py, the example vault's books)
             wants.

It prints how many intruding sections are themselves the answer to a book question (a score of the section alone
cannot lower one without the other), and, for each k and each neighbour pool, the AUC of r_d: the chance that an
intruder's r_d is above an answer's (0.5 = no information). r_d is read in the fresh-paraphrase vault (the
example vault, the coding set's memories and 66 fresh notes: the vault of the book sets). Results: bench/results/s10-hub10.md.

    python bench/section_hubness.py
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import book_questions_set  # noqa: E402
import coding_set  # noqa: E402
import fresh_paraphrase  # noqa: E402
import served_fresh_set  # noqa: E402
import served_notes_set  # noqa: E402
from book_questions import label  # noqa: E402
from coding import NOW  # noqa: E402
from served_fresh import prepare  # noqa: E402

NEIGHBOURS = (5, 10, 20)
POOLS = ("every other memory", "notes only", "question bank")


def served_vault(root: Path, fresh: list) -> dict[str, str]:
    """The example vault alone plus the fresh memories, written in-process (the served runs add them through the
    server; the in-process column of bench/served_fresh.py ranks that vault the same). Returns key -> memory id."""
    from vault import Vault

    prepare(root, example_only=True)
    writer, now, ids = Vault(root).writer, datetime.now(timezone.utc), {}
    for key, collection, kind, title, body in fresh:
        ids[key] = f"{key}-fresh"
        writer.create(f"{collection}/{ids[key]}.md", {"id": ids[key], "collection": collection, "type": kind,
                                                      "title": title, "created_at": now}, body)
    return ids


def section_hubness(index) -> tuple[dict[str, dict[tuple[str, int], float]], set[str]]:  # noqa: ANN001
    """Each book section's r_d (by its label), for every neighbour pool and k, and the labels of all sections."""
    from indexer.chunking import WHOLE

    owners, labels, units, books = [], [], [], set()
    for memory in index.all_memories():
        for unit, chunk, role in index.entry(memory.path).units:
            if role == WHOLE:
                owners.append(memory.id)
                labels.append(label(memory.id, index.chunk_owner(chunk)[1]) if memory.collection == "books" else "")
                units.append(unit)
        if memory.collection == "books":
            books.add(memory.id)
    vectors = index.unit_vectors(np.array(units, dtype=np.int64)).astype(np.float64)
    bank = np.array([EMBEDDER.embed_query(question[0]) for question in coding_set.QUESTIONS], dtype=np.float64)
    owner = np.array(owners)
    is_book = np.isin(owner, list(books))
    hubness: dict[str, dict[tuple[str, int], float]] = {text: {} for text in labels if text}
    for pool in POOLS:
        if pool == "question bank":  # a fixed bank of generic developer questions (the coding set's 204)
            nearest = -np.sort(-(vectors @ bank.T), axis=1)
            for k in NEIGHBOURS:
                for row, text in enumerate(labels):
                    if text:
                        hubness[text][(pool, k)] = float(nearest[row, :k].mean())
            continue
        cosines = vectors @ vectors.T
        cosines[owner[:, None] == owner[None, :]] = -np.inf  # a book's own sections are not its neighbours
        if pool == "notes only":
            cosines[:, is_book] = -np.inf
        nearest = -np.sort(-cosines, axis=1)
        for k in NEIGHBOURS:
            for row, text in enumerate(labels):
                if text:
                    hubness[text][(pool, k)] = float(nearest[row, :k].mean())
    return hubness, {text for text in labels if text}


def intruders(root: Path, questions: list[tuple[str, list[str]]], now: datetime, lifecycle) -> list[str]:  # noqa: ANN001
    """Every book section (by label) ranked above a question's wanted memory, once per question it intrudes on."""
    from indexer.index import Index
    from indexer.search import SearchRequest, Searcher
    from locomo import search_settings
    from vault import Vault

    index = Index.open(Vault(root), EMBEDDER)
    found = []
    try:
        searcher = Searcher(index, search_settings([]), lifecycle=lifecycle)
        for text, wanted in questions:
            EMBEDDER.forget_queries()
            for hit in searcher.search(SearchRequest(query=text, limit=10, now=now)):
                if hit.memory.id in wanted:
                    break
                if hit.memory.collection == "books":
                    found.append(label(hit.memory.id, hit.heading))
    finally:
        index.close()
    return found


def auc(high: list[float], low: list[float]) -> float:
    """The chance that a value drawn from `high` is above one drawn from `low` (ties count half)."""
    a, b = np.array(high)[:, None], np.array(low)[None, :]
    return float((a > b).mean() + 0.5 * (a == b).mean())


def centred(hubness: dict[str, dict[tuple[str, int], float]]) -> dict[str, dict[tuple[str, int], float]]:
    """r_d less the mean r_d of the vault's sections: vaults differ in how dense they are (the coding set's
    memories raise every section's r_d), and CSLS compares sections of one vault."""
    keys = next(iter(hubness.values())).keys()
    mean = {key: float(np.mean([values[key] for values in hubness.values()])) for key in keys}
    return {section: {key: value - mean[key] for key, value in values.items()} for section, values in hubness.items()}


def hubness_of(root: Path) -> dict[str, dict[tuple[str, int], float]]:
    from indexer.index import Index
    from vault import Vault

    index = Index.open(Vault(root), EMBEDDER)
    try:
        return centred(section_hubness(index)[0])
    finally:
        index.close()


def main() -> None:
    from indexer.embed import CachedEmbedder, make_embedder
    from mcp_server.config import load_config
    from vault.settings import LifecycleSettings

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite")
    args = parser.parse_args()
    global EMBEDDER
    EMBEDDER = CachedEmbedder(make_embedder(args.embedder), args.cache)
    intruding: list[tuple[str, dict]] = []  # (section, its vault's centred r_d), once per question it intrudes on
    with tempfile.TemporaryDirectory(prefix="memdir-hubness-") as tmp:
        for name, module in (("served", served_fresh_set), ("notes", served_notes_set)):
            root = Path(tmp) / name
            ids = served_vault(root, module.FRESH)
            lifecycle = load_config(root).lifecycle  # as the server reads it (bench/served_fresh.py)
            questions = [(text, [ids[k] for k in wanted]) for text, wanted in module.QUESTIONS]
            found = intruders(root, questions, datetime.now(timezone.utc), lifecycle if lifecycle.every_seconds else None)
            hubness = hubness_of(root)
            intruding += [(section, hubness[section]) for section in found]
        root = Path(tmp) / "fresh"
        fresh_paraphrase.build(root)
        found = intruders(root, [(text, list(wanted)) for text, wanted, _, _ in fresh_paraphrase.QUESTIONS],
                          NOW, LifecycleSettings())
        book_vault = hubness_of(root)
        intruding += [(section, book_vault[section]) for section in found]
    answers = {label(book, leaf) for _, book, wanted, _ in book_questions_set.QUESTIONS for leaf in wanted}
    sections = set(book_vault)
    print(f"{len(sections)} book sections in the example vault, {len(sections & answers)} of them the answer to a "
          f"book question")
    print(f"{len(intruding)} times a section sat above the wanted memory ({len({s for s, _ in intruding})} "
          f"sections); {sum(s in answers for s, _ in intruding)} of those times the section is the answer to a "
          f"book question")
    print("AUC of r_d (less its vault's mean), intruders over answers (0.5 = no information): r_d of the vault each "
          "intruder was ranked in / r_d of the book sets' vault for both:")
    for pool in POOLS:
        for k in NEIGHBOURS:
            low = [book_vault[s][(pool, k)] for s in answers if s in book_vault]
            own = [values[(pool, k)] for _, values in intruding]
            same = [book_vault[s][(pool, k)] for s, _ in intruding]
            print(f"  {pool:20} k={k:<3} {auc(own, low):.3f} / {auc(same, low):.3f}")


EMBEDDER = None

if __name__ == "__main__":
    main()
