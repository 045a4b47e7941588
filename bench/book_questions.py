"""Questions a book section answers, asked in other words (issue 26): memdir's search against plain cosine and BM25.

The set is bench/book_questions_set.py; the vault is the fresh-paraphrase vault (bench/fresh_paraphrase.py:
the example vault, whose books/ holds the three books asked about, the coding development set and 66 fresh
notes), so that one rule for book sections against notes is measured on both sets. A result is a memory and,
for a book, the section it was shown with; a hit is the wanted book shown with a wanted section. The
baselines rank the same pieces memdir indexes (a note whole, a book by section) and show each memory once,
with its best piece, as memdir does:
  cosine  all-MiniLM-L6-v2 over each piece's "title\\ntext" (a book section's title names its heading path)
  bm25    Okapi BM25 over lower-cased word tokens of the same texts
A line below the table counts the book alone (any section): there whole-memory cosine, the fresh set's
baseline, is shown too (it embeds a book's first 256 word pieces, so it can name no section).

    python bench/book_questions.py            # checks the set's rules, then the table
    python bench/book_questions.py --check    # only the rules (no model)
    python bench/book_questions.py --misses   # the questions hybrid misses in its top 3
    python bench/book_questions.py --json
    python bench/book_questions.py --holdout  # the held-out handbook and its questions (bench/book_holdout_set.py)
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import book_holdout_set  # noqa: E402
import book_questions_set  # noqa: E402
from coding import NOW, PlainBM25, misses, plain_cosine, summarize, system_figures, table  # noqa: E402
from fresh_paraphrase import EXAMPLE_VAULT, arguments, build, content_words  # noqa: E402

MIN_QUESTIONS = 30
MIN_HOLDOUT_QUESTIONS = 25


def question_set(holdout: bool):
    """The questions asked: the example vault's books, or the held-out handbook (added to the vault by build)."""
    return book_holdout_set if holdout else book_questions_set


def add_holdout_book(root: Path) -> None:
    """The held-out handbook, ingested into the vault's books collection as `memdir ingest` leaves a book."""
    (root / "books").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(book_holdout_set.HANDBOOK_FILE, root / "books" / book_holdout_set.HANDBOOK_FILE.name)


def leaf(heading: str) -> str:
    """The last part of a heading path: "Stuck imports" for "Runbook > Incident response > Stuck imports"."""
    return heading.rsplit(" > ", 1)[-1]


def label(memory_id: str, heading: str) -> str:
    """What a result is compared by: the memory, and for a book the section it was shown with."""
    return f"{memory_id}#{leaf(heading)}" if heading else memory_id


def book_sections(holdout: bool = False) -> dict[str, dict[str, str]]:
    """Each book's sections (the example vault's, or the held-out handbook's): book id -> section leaf -> its
    title, heading path and text."""
    from indexer.chunking import chunks_for
    from vault import Vault

    sections: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="memdir-book-sections-") as tmp:
        if holdout:
            add_holdout_book(Path(tmp))
        memories = Vault(Path(tmp) if holdout else EXAMPLE_VAULT).scan().memories
    for memory in memories:
        if memory.collection == "books":
            for chunk in chunks_for(memory):
                if chunk.heading:
                    own = sections.setdefault(memory.id, {})
                    own[leaf(chunk.heading)] = f"{own.get(leaf(chunk.heading), '')}\n{chunk.title}\n{chunk.text}"
    return sections


def rule_violations(holdout: bool = False) -> list[str]:
    """Every way the set breaks its own rules; empty when it keeps them."""
    sections = book_sections(holdout)
    chosen = question_set(holdout)
    questions, shared_allowed = chosen.QUESTIONS, chosen.SHARED_ALLOWED
    least = MIN_HOLDOUT_QUESTIONS if holdout else MIN_QUESTIONS
    problems = []
    if len(questions) < least:
        problems.append(f"only {len(questions)} questions (at least {least})")
    for text, book, wanted, kind in questions:
        if kind not in ("short", "long"):
            problems.append(f"{text[:50]!r}: kind {kind!r}")
        for section in wanted:
            if section not in sections.get(book, {}):
                problems.append(f"{text[:50]!r}: {book} has no section {section!r}")
                continue
            shared = content_words(text) & content_words(sections[book][section])
            allowed = {shared_allowed[text][0]} if text in shared_allowed else set()
            if shared - allowed:
                problems.append(f"{text[:60]!r} shares {sorted(shared)} with {book}#{section}")
    if len(shared_allowed) > len(questions) // 10:
        problems.append(f"{len(shared_allowed)} questions share a word with their section (at most a tenth)")
    return problems


def pieces(root: Path) -> list[tuple[str, str, str]]:
    """What memdir indexes, as the baselines see it: (memory id, heading, "title\\ntext") per chunk."""
    from indexer.chunking import chunks_for
    from vault import Vault

    return [(m.id, c.heading, c.embedding_text) for m in Vault(root).scan().memories for c in chunks_for(m)]


def best_per_memory(scores: list[float], found: list[tuple[str, str, str]]) -> list[str]:
    """Pieces best first (ties by position), each memory once, with its best piece's label."""
    seen: set[str] = set()
    ranked = []
    for n in sorted(range(len(found)), key=lambda n: (-scores[n], n)):
        memory_id, heading, _ = found[n]
        if scores[n] > 0 and memory_id not in seen:
            seen.add(memory_id)
            ranked.append(label(memory_id, heading))
    return ranked[:10]


def evaluate(embedder_name: str, cache: Path, settings_overrides: list[str],
             holdout: bool = False) -> tuple[dict, list[dict]]:
    from indexer.embed import CachedEmbedder, make_embedder
    from indexer.index import Index
    from indexer.search import SearchRequest, Searcher
    from locomo import search_settings
    from vault import Vault
    from vault.settings import LifecycleSettings

    embedder = CachedEmbedder(make_embedder(embedder_name), cache)
    rows: list[dict] = []
    books: list[dict] = []  # the same questions, a hit being the book in any section
    latency: list[float] = []
    with tempfile.TemporaryDirectory(prefix="memdir-books-") as tmp:
        root = Path(tmp) / "vault"
        texts = build(root)
        if holdout:
            add_holdout_book(root)
            texts.update((m.id, f"{m.title}\n{m.body}") for m in Vault(root).scan().memories
                         if m.id == book_holdout_set.HANDBOOK)
        found = pieces(root)
        matrix = np.asarray(embedder.embed([text for _, _, text in found]))
        bm25 = PlainBM25({str(n): text for n, (_, _, text) in enumerate(found)})
        every = {str(n) for n in range(len(found))}
        wholes = dict(zip(texts, embedder.embed(list(texts.values()))))
        index = Index.open(Vault(root), embedder)
        searcher = Searcher(index, search_settings(settings_overrides), lifecycle=LifecycleSettings())
        try:
            for text, book, wanted, kind in question_set(holdout).QUESTIONS:
                books.append({"wanted": [book], "ranked": {}})
                embedder.forget_queries()
                ranked: dict[str, list[str]] = {}
                request = SearchRequest(query=text, limit=10, now=NOW)
                started = time.perf_counter()
                ranked["hybrid"] = [label(h.memory.id, h.heading) for h in searcher.search(request)]
                latency.append((time.perf_counter() - started) * 1000)
                for system, mode in (("memdir-vector", "vector"), ("memdir-keyword", "keyword")):
                    ranked[system] = [label(h.memory.id, h.heading) for h in searcher.search(replace(request, mode=mode))]
                ranked["cosine"] = best_per_memory((matrix @ embedder.embed_query(text)).tolist(), found)
                keyword = dict.fromkeys(bm25.rank(text, every), 0.0)
                keyword.update((n, 1.0 / (1 + rank)) for rank, n in enumerate(keyword))
                ranked["bm25"] = best_per_memory([keyword.get(str(n), 0.0) for n in range(len(found))], found)
                rows.append({"question": text, "kind": kind, "wanted": [label(book, f) for f in wanted],
                             "ranked": ranked})
                books[-1]["ranked"]["cosine-whole"] = plain_cosine(wholes, embedder.embed_query(text), set(texts))
                for system in ("hybrid", "cosine"):
                    books[-1]["ranked"][system] = [i.split("#")[0] for i in ranked[system]]
        finally:
            index.close()
    result = summarize(rows, latency, len(texts))
    result["book_alone"] = {system: system_figures(books, system) for system in ("hybrid", "cosine", "cosine-whole")}
    return result, rows


def main() -> None:
    args = arguments(__doc__, holdout=True)
    problems = rule_violations(args.holdout)
    if problems:
        sys.exit("the set breaks its rules:\n" + "\n".join(problems))
    chosen = question_set(args.holdout)
    if args.check:
        print(f"ok: {len(chosen.QUESTIONS)} questions on {len({q[1] for q in chosen.QUESTIONS})} books, "
              f"{len(chosen.QUESTIONS) - len(chosen.SHARED_ALLOWED)} with no content word shared with their section")
        return
    result, rows = evaluate(args.embedder, args.cache, args.set, args.holdout)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(table(result, what=" (held-out book questions)" if args.holdout else " (book questions)", width=8))
        print("the book in any section (hit@1 / hit@3 / mrr@10): " + "  ".join(
            f"{system} {f['hit@1']:.3f}/{f['hit@3']:.3f}/{f['mrr@10']:.3f}" for system, f in result["book_alone"].items()))
    if args.misses:
        print(misses(rows))


if __name__ == "__main__":
    main()
