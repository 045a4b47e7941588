"""The int8 query graph (indexer/smooth_int8.py) against float32 on real queries: cosine, then CPU per query.

    python bench/int8_queries.py                     # cosine per set, then 6 rounds of timing
    python bench/int8_queries.py --rounds 0          # cosine only
    python bench/int8_queries.py --alpha 0.5         # another migration strength (calibrated again)

Cosine of the int8 graph's vector to float32's, every query through both whatever its length (the embedder itself
takes int8 only from LONG_QUERY_TOKENS word pieces): the long pastes (bench/long_prompt_set.py) as they are and
behind 8 kB of log, the coding dev questions, the fresh paraphrase questions, the first 300 LoCoMo dev questions.
Printed: min / p1 / median. Then CPU per query, float32 and int8 alternated in one process (the order flipped
every round), each query's thread CPU time around the session's run alone, as the model host spends it: median and
p95 per set. LoCoMo dev (CC BY-NC) is read from ../shared/bench, never copied.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import numpy as np  # noqa: E402

import coding_set  # noqa: E402
import fresh_paraphrase_set  # noqa: E402
import long_prompt_set  # noqa: E402
from locomo import DEFAULT_DATA  # noqa: E402

from indexer import smooth_int8  # noqa: E402
from indexer.minilm_graph import session  # noqa: E402
from indexer.onnx_minilm import LONG_QUERY_TOKENS, OnnxMiniLM  # noqa: E402
from indexer.weights import padded  # noqa: E402


def query_sets(data: Path) -> dict[str, list[str]]:
    locomo = [item["question"] for sample in json.loads(data.read_text()) for item in sample["qa"]][:300]
    return {"long pastes": [q[0] for q in long_prompt_set.QUESTIONS],
            "long pastes behind 8 kB of log": [long_prompt_set.padded(q[0]) for q in long_prompt_set.QUESTIONS],
            "coding dev": [q[0] for q in coding_set.QUESTIONS],
            "fresh paraphrase": [q[0] for q in fresh_paraphrase_set.QUESTIONS],
            "LoCoMo dev": locomo}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alpha", type=float, default=smooth_int8.ALPHA)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memdir-int8-") as cache:
        started = time.process_time()
        model = OnnxMiniLM(int8_long_queries=True, int8_cache=Path(cache))
        loaded = time.process_time()
        if args.alpha == smooth_int8.ALPHA:
            int8 = model._int8_session()
        else:
            maxima = smooth_int8.activation_maxima(model._folder, smooth_int8.calibration_texts())
            int8, _handed = session(*smooth_int8.int8_graph(model._folder, maxima, args.alpha), model._folder)
        built = time.process_time()
        OnnxMiniLM(int8_long_queries=True, int8_cache=Path(cache))._int8_session()
        again = time.process_time() - built
    print(f"CPU s: float32 embedder {loaded - started:.2f}; int8 graph calibrated and built {built - loaded:.2f}; "
          f"the same with its calibration cached (and a float32 embedder) {again:.2f}")

    def vector(run: object, text: str) -> tuple[np.ndarray, float]:
        ids, mask = padded([model.tokenizer.encode(text)])
        begun = time.thread_time()
        out = run.run(None, {"ids": ids, "mask": mask})[0][0]  # type: ignore[attr-defined]
        return out, time.thread_time() - begun

    sets = query_sets(args.data)
    everything: list[float] = []
    print(f"\nalpha {args.alpha}\n\n| queries | word pieces p50 / max | from {LONG_QUERY_TOKENS} up | cosine min / p1 / median |")
    print("|---|---|---:|---|")
    for name, texts in sets.items():
        cosines = np.array([float(vector(model._session, t)[0] @ vector(int8, t)[0]) for t in texts])
        everything += list(cosines)
        lengths = [len(model.tokenizer.encode(t).ids) for t in texts]
        print(f"| {name} ({len(texts)}) | {int(np.median(lengths))} / {max(lengths)} | {sum(n >= LONG_QUERY_TOKENS for n in lengths)} "
              f"| {cosines.min():.4f} / {np.percentile(cosines, 1):.4f} / {np.median(cosines):.4f} |")
    c = np.array(everything)
    print(f"| all ({len(c)}) | | | {c.min():.4f} / {np.percentile(c, 1):.4f} / {np.median(c):.4f} |")
    if not args.rounds:
        return
    print(f"\n{args.rounds} rounds, alternated; ms of CPU per query\n\n| queries | float32 median / p95 | int8 median / p95 | x |")
    print("|---|---|---|---:|")
    for name in ("long pastes", "long pastes behind 8 kB of log", "coding dev"):
        times: dict[str, list[float]] = {"float32": [], "int8": []}
        sides = [("float32", model._session), ("int8", int8)]
        for round_ in range(args.rounds):
            for label, run in sides if round_ % 2 == 0 else sides[::-1]:
                times[label] += [vector(run, t)[1] * 1000 for t in sets[name]]
        row = {k: (statistics.median(v), float(np.percentile(v, 95))) for k, v in times.items()}
        print(f"| {name} | {row['float32'][0]:.1f} / {row['float32'][1]:.1f} | {row['int8'][0]:.1f} / {row['int8'][1]:.1f} "
              f"| {row['float32'][0] / row['int8'][0]:.2f} |")


if __name__ == "__main__":
    main()
