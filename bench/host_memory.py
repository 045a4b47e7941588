"""The embedding host's peak resident memory while it embeds documents, and its speed, A/B in one run.

    python bench/host_memory.py                       # every variant, 2 rounds, alternating
    python bench/host_memory.py --variants current,budget512 --rounds 3

Each variant runs in a fresh child process (VmHWM is a process's peak) that loads the real model
(all-MiniLM-L6-v2 on ONNX Runtime, as the host does) and embeds LoCoMo texts as a build sends them to
the host: requests of the host's BATCH texts, half single turns and half six-turn windows (which reach
the model's 256-token limit: the long batches are where the attention scores, texts x heads x
tokens^2, are largest). Printed per variant: the loaded RSS, the peak while embedding, the RSS
after, texts/s, and how far its vectors are from the first variant's (max |difference|, min cosine).
The text (LoCoMo dev, CC BY-NC) is read from ../shared/bench, never copied.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo-dev.json"

# name -> what the child changes before it loads the model (module settings, ONNX Runtime or glibc options)
VARIANTS = {
    "current": {},
    "budget1024": {"token_budget": 1024},
    "budget512": {"token_budget": 512},
    "budget256": {"token_budget": 256},
    "one_batch_at_a_time": {"serial": True},
    "mmap_threshold_1mb": {"mmap_threshold": 1 << 20},
    "mmap_threshold_256kb": {"mmap_threshold": 256 << 10},
    "mmap_threshold_4mb": {"mmap_threshold": 4 << 20},
    # the host as a vault with int8 long queries leaves it (its int8 session built at warm), documents float32 ...
    "int8_built": {"int8": "built"},
    # ... and documents through that int8 session ([search] int8_documents)
    "int8_documents": {"int8": "documents"},
}
# glibc's mallopt: allocations above the threshold get a mapping of their own, unmapped at free (and glibc stops
# raising the threshold to each freed block's size, up to 32 MB, as it does by default). Tried, not adopted: the
# peak fell, but every batch then faults its activations' pages in afresh (bench/results/scale.md, build100k-w3s8).
M_MMAP_THRESHOLD = -3


def texts(data: Path, count: int, kind: str = "mixed") -> list[str]:
    """Half single turns and half six-turn windows ("mixed"), or single turns only ("turns": short texts, the
    batches a smaller token budget cuts into the most pieces)."""
    from speed import corpus

    conversations, _ = corpus(data)
    turns = [t for c in conversations for t in c]
    if kind == "turns":
        return turns[:count]
    windows = [" ".join(turns[i:i + 6]) for i in range(0, len(turns), 3)]
    return turns[: count // 2] + windows[: count - count // 2]


def child(variant: str, data: Path, count: int, kind: str, out: Path) -> None:
    import numpy as np

    from indexer import onnx_minilm
    from mcp_server.embedding.host import BATCH
    from speed import memory_mb, reset_peak

    settings = VARIANTS[variant]
    if "token_budget" in settings:
        onnx_minilm.TOKEN_BUDGET = settings["token_budget"]
    if "mmap_threshold" in settings:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, settings["mmap_threshold"])
    model = onnx_minilm.OnnxMiniLM(int8_cache=out.parent, int8_documents=settings.get("int8") == "documents")
    if "int8" in settings:
        model._int8_session()
    if settings.get("serial"):
        model._pool = None
    chosen = texts(data, count, kind)
    model.embed_query("warm the session up")
    pid = os.getpid()
    loaded = memory_mb(pid, "VmRSS")
    reset_peak(pid)
    cpu = time.process_time()
    started = time.perf_counter()
    vectors = np.concatenate([model.embed(chosen[i:i + BATCH]) for i in range(0, len(chosen), BATCH)])
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    np.save(out, vectors)
    print(json.dumps({"variant": variant, "loaded_rss_mb": loaded, "embedding_peak_mb": memory_mb(pid, "VmHWM"),
                      "after_rss_mb": memory_mb(pid, "VmRSS"), "seconds": round(seconds, 2),
                      "cpu_seconds": round(cpu, 2), "texts_per_cpu_s": round(len(chosen) / cpu, 1),
                      "texts_per_s": round(len(chosen) / seconds, 1)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--texts", type=int, default=1024)
    parser.add_argument("--kind", choices=["mixed", "turns"], default="mixed")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.data, args.texts, args.kind, args.out)
        return
    import numpy as np

    names = args.variants.split(",")
    runs: dict[str, list[dict]] = {name: [] for name in names}
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory(prefix="memdir-hostmem-") as tmp:
        for round_ in range(args.rounds):
            for name in names if round_ % 2 == 0 else names[::-1]:
                out = Path(tmp) / f"{name}.npy"
                done = subprocess.run([sys.executable, __file__, "--child", name, "--data", str(args.data),
                                       "--texts", str(args.texts), "--kind", args.kind, "--out", str(out)],
                                      capture_output=True, text=True, check=True)
                runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
                vectors.setdefault(name, np.load(out))
    base = vectors[names[0]]
    summary = []
    for name in names:
        diff = vectors[name] - base
        summary.append({
            "variant": name,
            "loaded_rss_mb": statistics.median(r["loaded_rss_mb"] for r in runs[name]),
            "embedding_peak_mb": statistics.median(r["embedding_peak_mb"] for r in runs[name]),
            "after_rss_mb": statistics.median(r["after_rss_mb"] for r in runs[name]),
            "texts_per_s": statistics.median(r["texts_per_s"] for r in runs[name]),
            "texts_per_cpu_s": statistics.median(r["texts_per_cpu_s"] for r in runs[name]),
            "peaks": [r["embedding_peak_mb"] for r in runs[name]],
            "rates": [r["texts_per_s"] for r in runs[name]],
            "max_abs_diff": float(np.abs(diff).max()),
            "min_cosine": float((vectors[name] * base).sum(axis=1).min()),
        })
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    for row in summary:
        print(", ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
