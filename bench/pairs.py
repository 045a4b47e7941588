"""Duplicate or contradiction? What memdir says about a labelled set of memory pairs.

Each pair of tests/indexer/pairs.py goes through memdir's own write path with the real model:
the first statement is stored, then the second, and the answer `add` gives is read as the
curator's verdict:

- `contradiction`: the first is listed as a possible conflict;
- `duplicate`: re-stated (same text) or listed as a near-duplicate (a merge would be suggested);
- `paraphrase`: not listed, but `suggest-merges` would group the two (cosine >= merge_suggestion);
- `related` / `unrelated`: neither, by cosine above or below 0.5.

Per label it prints precision and recall, and the same with the reversal check switched off
(similarity alone), side by side. Both memories are deleted before the next pair.

    python bench/pairs.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from indexer import reversal  # noqa: E402
from indexer.curator import Curator  # noqa: E402
from indexer.embed import make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from tests.indexer.pairs import PAIRS  # noqa: E402
from vault import Vault  # noqa: E402
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings  # noqa: E402

LABELS = ("duplicate", "paraphrase", "contradiction", "related", "unrelated")


def verdicts(curator: Curator) -> list[str]:
    out = []
    embedder, dedup = curator.index.embedder, curator.dedup
    for first, second, _label in PAIRS:
        a = curator.add(first, type="fact")
        b = curator.add(second, type="fact")
        vectors = embedder.embed([first, second])
        cosine = float(vectors[0] @ vectors[1])
        if any(s.id == a.memory.id for s in b.possible_conflicts):
            verdict = "contradiction"
        elif b.status == "restated" or any(s.id == a.memory.id for s in b.near_duplicates):
            verdict = "duplicate"
        elif cosine >= dedup.merge_suggestion:
            verdict = "paraphrase"
        else:
            verdict = "related" if cosine >= 0.5 else "unrelated"
        out.append(verdict)
        for memory_id in {a.memory.id, b.memory.id}:
            curator.delete(memory_id)
    return out


def scores(predicted: list[str]) -> dict[str, dict[str, float]]:
    truth = [label for _, _, label in PAIRS]
    table = {}
    for label in LABELS:
        tp = sum(1 for t, p in zip(truth, predicted) if t == p == label)
        said = sum(1 for p in predicted if p == label)
        real = sum(1 for t in truth if t == label)
        table[label] = {"precision": round(tp / said, 3) if said else None, "recall": round(tp / real, 3) if real else None,
                        "pairs": real}
    merged_contradictions = sum(1 for t, p in zip(truth, predicted) if t == "contradiction" and p in ("duplicate", "paraphrase"))
    table["contradictions suggested as a merge"] = {"count": merged_contradictions}
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    embedder = make_embedder("all-MiniLM-L6-v2")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        index = Index.open(Vault(root), embedder)
        curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
        results["memdir"] = scores(verdicts(curator))
        with mock.patch.object(reversal, "reverses", lambda a, b: ""):
            results["similarity only"] = scores(verdicts(curator))
        index.close()
    results["counts"] = dict(Counter(label for _, _, label in PAIRS))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{len(PAIRS)} pairs: {results['counts']}")
    print(f"{'label':<15}{'memdir P / R':>16}{'similarity only P / R':>26}")
    for label in LABELS:
        m, s = results["memdir"][label], results["similarity only"][label]
        print(f"{label:<15}{_pr(m):>16}{_pr(s):>26}")
    key = "contradictions suggested as a merge"
    print(f"{key}: memdir {results['memdir'][key]['count']}, similarity only {results['similarity only'][key]['count']}")


def _pr(row: dict[str, float]) -> str:
    p = "-" if row["precision"] is None else f"{row['precision']:.2f}"
    r = "-" if row["recall"] is None else f"{row['recall']:.2f}"
    return f"{p} / {r}"


if __name__ == "__main__":
    main()
