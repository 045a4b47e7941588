"""Does the way a question is asked tell whether a book section or a note answers it? (issue 26, session 11)

On fresh notes asked in other words memdir loses first places to book sections that are the answers to book
questions (bench/results/s10-hub10.md: nothing about a section alone separates the two). The remaining reading is
the question's: does it ask for reference material or a procedure (a book's kind), or for what the team decided,
learned or found (a note's kind)? This measures how well the question alone, through all-MiniLM-L6-v2, separates
the two kinds of question the sets hold:

- book questions (bench/book_questions_set.py, bench/book_holdout_set.py), whose answer is a book section;
- note questions (the served, notes and hold-out 4 sets, and the fresh-paraphrase set), whose answer is a note.

Two readings, each as an AUC (0.5 = no information; 1 = every book question reads more "reference" than every
note question):

1. the question's cosine to a bank of hand-written "reference / how to" questions less its cosine to a bank of
   "what did we decide / what happened" questions (both embedded once, as memdir would at no cost per query);
2. a direction learned from the data (the mean of one set's book questions less the mean of its note questions),
   fitted on the development sets and read on held-out ones, so a topic fitted is not taken for a kind.

    python bench/question_intent.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

import book_questions  # noqa: E402
import fresh_paraphrase_set  # noqa: E402
import served_fresh_set  # noqa: E402
import served_holdout_set  # noqa: E402
import served_notes_set  # noqa: E402
from coding_set import QUESTIONS as CODING_QUESTIONS  # noqa: E402

REFERENCE_ASKS = ("how do I do this step by step", "what is the procedure", "what command do I run",
                  "where is this documented", "which table holds this column", "how is the system set up",
                  "what are the steps to follow", "what is our policy for this", "reference documentation for the process")
RECORD_ASKS = ("what did we decide", "why did we choose this", "what happened last time", "what went wrong and why",
               "what did we learn from the incident", "what does she prefer", "who on the team handles this",
               "what did we find out", "what is the status of the work")


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """How often a positive scores above a negative (ties count half)."""
    above = (positive[:, None] > negative[None, :]).mean()
    tied = (positive[:, None] == negative[None, :]).mean()
    return float(above + 0.5 * tied)


def main() -> None:
    from indexer.embed import CachedEmbedder, make_embedder

    embedder = CachedEmbedder(make_embedder("all-MiniLM-L6-v2"), Path.home() / ".cache" / "memdir-bench" / "embeddings.sqlite")

    def embedded(texts: list[str]) -> np.ndarray:
        return np.array([embedder.embed_query(text) for text in texts])

    books = {"book dev": [q[0] for q in book_questions.question_set(False).QUESTIONS],
             "book hold-out": [q[0] for q in book_questions.question_set(True).QUESTIONS]}
    notes = {"served": [q[0] for q in served_fresh_set.QUESTIONS], "notes": [q[0] for q in served_notes_set.QUESTIONS],
             "hold-out 4": [q[0] for q in served_holdout_set.QUESTIONS],
             "fresh": [q[0] for q in fresh_paraphrase_set.QUESTIONS]}
    vectors = {name: embedded(texts) for name, texts in {**books, **notes}.items()}

    reference, record = embedded(list(REFERENCE_ASKS)).mean(0), embedded(list(RECORD_ASKS)).mean(0)
    direction = reference / np.linalg.norm(reference) - record / np.linalg.norm(record)
    print("1. hand-written prototypes: lean = cos(question, reference asks) - cos(question, record asks)")
    print(f"   {'set':14} {'questions':>9} {'mean':>7} {'std':>6}   AUC of book dev / book hold-out over it")
    for name, matrix in vectors.items():
        lean = matrix @ direction
        row = f"   {name:14} {len(lean):9d} {lean.mean():7.3f} {lean.std():6.3f}"
        if name in notes:
            row += "   " + " / ".join(f"{auc(vectors[b] @ direction, lean):.2f}" for b in books)
        print(row)

    print("2. a learned direction (mean of book questions - mean of note questions), fitted / read elsewhere")
    coding = embedded([q[0] for q in CODING_QUESTIONS])
    for label, negative in (("served + notes", np.vstack([vectors["served"], vectors["notes"]])), ("coding dev", coding)):
        learned = vectors["book dev"].mean(0) - negative.mean(0)
        fitted = auc(vectors["book dev"] @ learned, negative @ learned)
        held = [auc(vectors["book hold-out"] @ learned, vectors[n] @ learned) for n in ("hold-out 4", "fresh")]
        print(f"   fitted on book dev vs {label:14}: AUC on what it was fitted on {fitted:.2f}; "
              f"book hold-out vs hold-out 4 {held[0]:.2f}, vs fresh {held[1]:.2f}")


if __name__ == "__main__":
    main()
