"""Contradiction or duplicate, by meaning: memdir's verdicts on the labelled pairs of
tests/indexer/meaning_pairs.py, the tuning half and the held-out half apart.

Each pair goes through memdir's own write path with the real model (the first statement stored,
then the second, both as facts). Two verdicts are read from memdir's answers:

- contradiction: `add` lists the first as a possible conflict of the second;
- duplicate (a merge is offered): `add` lists it as a near-duplicate or a re-statement, or
  `suggest-merges` (default threshold) puts the two in one group.

A pair can get both (the review queue would show it as a duplicate and as a contradiction); it
counts for both. Per half: precision and recall of each verdict against the labels, and the
contradictions offered as a merge (the harmful error). Both memories are deleted after each pair.

    python bench/meaning_pairs.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from indexer.curator import Curator  # noqa: E402
from indexer.embed import make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from tests.indexer.meaning_pairs import HELD_OUT, TUNE  # noqa: E402
from vault import Vault  # noqa: E402
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings  # noqa: E402


def verdicts(curator: Curator, pairs: list[tuple[str, str, str]]) -> list[set[str]]:
    out = []
    for first, second, _label in pairs:
        a = curator.add(first, type="fact")
        b = curator.add(second, type="fact")
        said = set()
        if any(s.id == a.memory.id for s in b.possible_conflicts):
            said.add("contradiction")
        grouped = any({a.memory.id, b.memory.id} <= set(c.ids) for c in curator.suggest_merges())
        if b.status == "restated" or grouped or any(s.id == a.memory.id for s in b.near_duplicates):
            said.add("duplicate")
        out.append(said)
        for memory_id in {a.memory.id, b.memory.id}:
            curator.delete(memory_id)
    return out


def scores(pairs: list[tuple[str, str, str]], said: list[set[str]]) -> dict[str, object]:
    truth = [label for _, _, label in pairs]
    table: dict[str, object] = {}
    for label in ("contradiction", "duplicate"):
        tp = sum(1 for t, s in zip(truth, said) if t == label and label in s)
        flagged = sum(1 for s in said if label in s)
        real = truth.count(label)
        table[label] = {"precision": round(tp / flagged, 3) if flagged else None, "recall": round(tp / real, 3),
                        "pairs": real, "flagged": flagged}
    table["contradictions offered as a merge"] = sum(1 for t, s in zip(truth, said)
                                                     if t == "contradiction" and "duplicate" in s)
    table["pairs shown as both"] = sum(1 for s in said if len(s) == 2)
    table["missed"] = [f"{label}: {a} | {b}" for (a, b, label), s in zip(pairs, said)
                       if (label in ("contradiction", "duplicate") and label not in s)
                       or (label != "contradiction" and "contradiction" in s)
                       or (label != "duplicate" and "duplicate" in s)]
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--missed", action="store_true", help="list the tuning half's wrong verdicts")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        index = Index.open(Vault(root), make_embedder("all-MiniLM-L6-v2"))
        curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
        for name, pairs in (("tune", TUNE), ("held-out", HELD_OUT)):
            results[name] = scores(pairs, verdicts(curator, pairs))
        index.close()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'half':<10}{'contradiction P / R':>22}{'duplicate P / R':>18}{'contradiction offered as merge':>33}{'both':>6}")
    for name, row in results.items():
        print(f"{name:<10}{_pr(row['contradiction']):>22}{_pr(row['duplicate']):>18}"
              f"{row['contradictions offered as a merge']:>33}{row['pairs shown as both']:>6}")
    if args.missed:  # only the tuning half: the held-out half is not looked at while tuning
        print("\n".join(["", "tuning half, wrong verdicts:"] + results["tune"]["missed"]))


def _pr(row: dict[str, float]) -> str:
    p = "-" if row["precision"] is None else f"{row['precision']:.2f}"
    return f"{p} / {row['recall']:.2f} ({row['flagged']})"


if __name__ == "__main__":
    main()
