"""The int8 graph (indexer/smooth_int8.py) on documents: every text a reindex embeds, against float32 (issue 32 item 3).

    python bench/int8_documents.py                 # LoCoMo dev, the coding sets, the example vault; 2 timing rounds
    python bench/int8_documents.py --turns 400 --rounds 1   # quick
    python bench/int8_documents.py --json

The texts are recorded from a rebuild of each vault (units, sections and whole texts alike, each `embed` call as the
rebuild makes it), then cut into the batches `OnnxMiniLM.embed` runs (`token_batches`). Printed per vault:
- cosine of the int8 vector to float32's, min / p1 / median, the text run in its batch;
- cosine of a text's int8 vector in its batch to the same text's int8 vector alone (what an incremental sync of one
  memory or a long query gets): DynamicQuantizeMatMul scales a whole batch's activations by one number, so a text's
  int8 vector depends a little on its neighbours in the batch;
- thread CPU seconds through each graph, float32 and int8 alternated batch by batch (the order flipped each round):
  texts per CPU second, as the reindex spends them (each batch on one thread; the reindex runs two at once), and
  int8 with each text of the batch run alone.
LoCoMo dev (CC BY-NC) is read from ../shared/bench, never copied.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import numpy as np  # noqa: E402

import coding_holdout  # noqa: E402
from coding import build_vault  # noqa: E402
from coding_set import MEMORIES  # noqa: E402
from locomo import DEFAULT_DATA  # noqa: E402
from reindex import turn_files, write  # noqa: E402

from indexer.embed import CachedEmbedder, HashingEmbedder  # noqa: E402
from indexer.onnx_minilm import OnnxMiniLM, token_batches  # noqa: E402
from indexer.rebuild import rebuild  # noqa: E402
from indexer.weights import padded  # noqa: E402
from vault import Vault  # noqa: E402

EXAMPLE_VAULT = REPO / ".memories-example"
GRAPHS = ("float32", "int8", "int8, each text alone")


class _Recorder(HashingEmbedder):
    """Keeps each `embed` call's texts, as the rebuild makes them."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[list[str]] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.seen.append(list(texts))
        return super().embed(texts)


def recorded_calls(fill) -> list[list[str]]:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory(prefix="memdir-int8docs-") as tmp:
        root = Path(tmp) / "vault"
        fill(root)
        recorder = _Recorder()
        rebuild(Vault(root), CachedEmbedder(recorder, None))
    return recorder.seen


def vaults(data: Path, turns: int | None) -> dict[str, list[list[str]]]:
    now = datetime(2026, 6, 1, tzinfo=timezone.utc)

    def coding(root: Path) -> None:
        build_vault(root, now, MEMORIES)
        build_vault(root, now, coding_holdout.MEMORIES)

    def example(root: Path) -> None:
        shutil.copytree(EXAMPLE_VAULT, root, ignore=shutil.ignore_patterns(".memdir"))

    return {
        "LoCoMo dev": recorded_calls(lambda root: write(root, turn_files(data, turns))),
        "coding dev + hold-out": recorded_calls(coding),
        "example vault": recorded_calls(example),
    }


def spread(values: np.ndarray) -> dict:
    return {"min": round(float(values.min()), 5), "p1": round(float(np.percentile(values, 1)), 5),
            "median": round(float(np.median(values)), 5)}


def measure(model: OnnxMiniLM, int8: object, calls: list[list[str]], rounds: int) -> dict:
    f32_vectors, int8_vectors, alone_vectors = [], [], []
    batches = []
    for texts in calls:
        encoded = model.tokenizer.encode_batch(texts)
        batches += [[encoded[i] for i in chosen] for chosen in token_batches([len(e.ids) for e in encoded])]
    inputs = [dict(zip(("ids", "mask"), padded(batch))) for batch in batches]
    for batch, feed in zip(batches, inputs):
        f32_vectors.append(model._session.run(None, feed)[0])
        int8_vectors.append(int8.run(None, feed)[0])  # type: ignore[attr-defined]
        for one in batch:
            ids, mask = padded([one])
            alone_vectors.append(int8.run(None, {"ids": ids, "mask": mask})[0][0])  # type: ignore[attr-defined]
    f32, q8, alone = np.concatenate(f32_vectors), np.concatenate(int8_vectors), np.stack(alone_vectors)
    singles = [[dict(zip(("ids", "mask"), padded([one]))) for one in batch] for batch in batches]
    cpu = dict.fromkeys(GRAPHS, 0.0)
    for n in range(rounds):
        for feed, alone_feeds in zip(inputs, singles):
            for name in (GRAPHS if n % 2 == 0 else GRAPHS[::-1]):
                graph = model._session if name == "float32" else int8
                started = time.thread_time()
                for one in ([feed] if name != "int8, each text alone" else alone_feeds):
                    graph.run(None, one)  # type: ignore[attr-defined]
                cpu[name] += time.thread_time() - started
    texts = len(f32)
    tokens = sum(len(e.ids) for batch in batches for e in batch)
    out = {"texts": texts, "batches": len(batches), "tokens": tokens,
           "cosine int8 / float32": spread(np.einsum("ij,ij->i", q8, f32)),
           "cosine int8 alone / float32": spread(np.einsum("ij,ij->i", alone, f32)),
           "cosine int8 in batch / int8 alone": spread(np.einsum("ij,ij->i", q8, alone))}
    if rounds:
        out["texts per CPU s"] = {name: round(texts * rounds / seconds, 1) for name, seconds in cpu.items()}
        out["CPU x (float32 / int8)"] = {name: round(cpu["float32"] / cpu[name], 2) for name in GRAPHS[1:]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--turns", type=int, default=None, help="LoCoMo turns (default: all of dev)")
    parser.add_argument("--rounds", type=int, default=2, help="timing rounds (0: cosine only)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "memdir-bench" / "int8",
                        help="where the int8 calibration is kept")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    model = OnnxMiniLM(int8_long_queries=True, int8_cache=args.cache)
    int8 = model._int8_session()
    results = {name: measure(model, int8, calls, args.rounds) for name, calls in vaults(args.data, args.turns).items()}
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for name, row in results.items():
        print(f"{name}: {row['texts']} texts, {row['tokens']} word pieces, {row['batches']} batches")
        for key, value in row.items():
            if key.startswith("cosine") or key.startswith("texts per") or key.startswith("CPU x"):
                print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
