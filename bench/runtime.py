"""Embedding runtimes side by side: memdir's torch MiniLM against ONNX Runtime and plain numpy, in one run.

Every candidate is all-MiniLM-L6-v2 from the same model.safetensors and tokenizer.json. Measured:
- cosine of each candidate's document and query vectors to torch's (LoCoMo dev: every turn as a
  document, every question as a query), against today's query path (the bfloat16 twin where the
  CPU has it) and against torch's float32 path;
- single-query latency p50/p95, the runtimes taking turns query by query, so drift hits them alike;
- documents per second through `embed` (batches of 32, sorted by length), taking turns;
- in a fresh process each: import and load time, resident memory after loading, after 100 queries
  and after 256 documents (then `malloc_trim`, as the embedding host does);
- the installed size of the packages each runtime needs beyond what memdir needs anyway.

    python bench/runtime.py               # table
    python bench/runtime.py --json
    python bench/runtime.py --texts 500   # a quicker run on the first 500 turns and questions
    python bench/runtime.py --onnx-settings   # why an earlier ONNX Runtime trial was slower
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.metadata
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from bench.locomo import DEFAULT_DATA, turn_text, turns_of  # noqa: E402

CANDIDATES = ("torch", "onnxruntime", "numpy")
# What each runtime installs beyond memdir's other dependencies (numpy, tokenizers, safetensors ...).
PACKAGES = {
    "torch": ("torch", "sympy", "mpmath", "jinja2", "MarkupSafe", "fsspec", "filelock"),
    "onnxruntime": ("onnxruntime", "onnx", "protobuf", "flatbuffers", "ml_dtypes"),
    "numpy": (),
}


def load(name: str):  # type: ignore[no-untyped-def]
    if name == "torch":
        from bench.torch_minilm import MiniLM

        return MiniLM()
    if name == "onnxruntime":
        from indexer.onnx_minilm import OnnxMiniLM

        return OnnxMiniLM()
    from bench.numpy_minilm import NumpyMiniLM

    return NumpyMiniLM()


def texts(data: Path, limit: int | None) -> tuple[list[str], list[str]]:
    """LoCoMo dev: every turn (documents) and every non-adversarial question (queries)."""
    samples = json.loads(data.read_text())
    documents = [turn_text(t) for s in samples for _, _, turns in turns_of(s["conversation"]) for t in turns]
    questions = [q["question"] for s in samples for q in s["qa"] if q.get("category") != 5]
    return documents[:limit], questions[:limit]


def rotated(items: list, turn: int) -> list:
    """Each runtime first in turn: the one that runs first after another's run measured up to 60 % slower."""
    shift = turn % len(items)
    return items[shift:] + items[:shift]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(name: str, questions: list[str], documents: list[str]) -> dict:
    """One runtime in this fresh process: import, load, 100 queries, 256 documents."""
    started = time.perf_counter()
    model = load(name)
    loaded = time.perf_counter() - started
    after_load = rss_mb()
    for question in questions[:100]:
        model.embed_query(question)
    after_queries = rss_mb()
    model.embed(documents[:256])
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return {"import_load_s": round(loaded, 2), "rss_load_mb": round(after_load, 1),
            "rss_100_queries_mb": round(after_queries, 1), "rss_256_docs_trimmed_mb": round(rss_mb(), 1)}


def installed_mb(packages: tuple[str, ...]) -> float:
    total = 0
    for package in packages:
        try:
            files = importlib.metadata.files(package) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        total += sum(f.locate().stat().st_size for f in files if f.locate().exists())
    return round(total / 1e6, 1)


def cosines(a: np.ndarray, b: np.ndarray) -> dict:
    values = (a * b).sum(axis=1)
    return {"min": round(float(values.min()), 6), "mean": round(float(values.mean()), 7)}


def measure(names: list[str], documents: list[str], questions: list[str], rounds: int) -> dict:
    models = {name: load(name) for name in names}
    torch = models["torch"]
    reference_docs = torch.embed(documents)
    today_queries = np.stack([torch.embed_query(q) for q in questions])
    float_queries = torch.embed(questions)  # torch's float32 path, query by query the same arithmetic
    latency: dict[str, list[float]] = {name: [] for name in names}
    for turn, question in enumerate(questions[:400]):
        for name, model in rotated(list(models.items()), turn):  # in turns: drift hits every runtime alike
            started = time.perf_counter()
            model.embed_query(question)
            latency[name].append((time.perf_counter() - started) * 1000)
    throughput: dict[str, list[float]] = {name: [] for name in names}
    batch = documents[:512]
    for _ in range(rounds):
        for name, model in models.items():
            started = time.perf_counter()
            model.embed(batch)
            throughput[name].append(len(batch) / (time.perf_counter() - started))
    out = {}
    for name, model in models.items():
        docs = reference_docs if name == "torch" else model.embed(documents)
        queries = today_queries if name == "torch" else np.stack([model.embed_query(q) for q in questions])
        out[name] = {
            "documents_cosine": cosines(docs, reference_docs),
            "queries_cosine_today": cosines(queries, today_queries),
            "queries_cosine_float32": cosines(queries, float_queries),
            "query_p50_ms": round(statistics.median(latency[name]), 2),
            "query_p95_ms": round(percentile(latency[name], 0.95), 2),
            "documents_per_s": round(statistics.median(throughput[name]), 1),
        }
    return out


ONNX_SETTINGS = (  # (label, OnnxMiniLM arguments, tokens to pad a query to or None)
    ("memdir: 1 thread, no spinning, all graph optimizations, no padding", {}, None),
    ("ONNX Runtime's defaults: a thread per core, spinning", {"threads": 0, "spinning": True}, None),
    ("2 threads, no spinning", {"threads": 2}, None),
    ("1 thread, graph optimizations off", {"optimization": "none"}, None),
    ("1 thread, basic graph optimizations", {"optimization": "basic"}, None),
    ("1 thread, weights not prepacked", {"prepack": False}, None),
    ("1 thread, query padded to 128 tokens", {}, 128),
    ("ONNX Runtime's defaults and padded to 128 tokens", {"threads": 0, "spinning": True}, 128),
)


def onnx_settings(questions: list[str]) -> dict:
    """Single-query latency of ONNX Runtime under the settings an earlier trial may have had, in turns."""
    from indexer.onnx_minilm import OnnxMiniLM

    models = [(label, OnnxMiniLM(**kwargs), pad) for label, kwargs, pad in ONNX_SETTINGS]
    latency: dict[str, list[float]] = {label: [] for label, _, _ in models}
    for turn, question in enumerate(questions[:100]):
        for label, model, pad in rotated(models, turn):
            ids = model.tokenizer.encode(question).ids
            feed = {"ids": np.zeros((1, pad or len(ids)), np.int64), "mask": np.zeros((1, pad or len(ids)), np.int64)}
            feed["ids"][0, :len(ids)] = ids
            feed["mask"][0, :len(ids)] = 1
            started = time.perf_counter()
            model._session.run(None, feed)
            latency[label].append((time.perf_counter() - started) * 1000)
    return {label: {"p50_ms": round(statistics.median(v), 2), "p95_ms": round(percentile(v, 0.95), 2)}
            for label, v in latency.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--texts", type=int, default=None, help="only the first N turns and questions")
    parser.add_argument("--runtimes", default=",".join(CANDIDATES))
    parser.add_argument("--rounds", type=int, default=3, help="document-throughput rounds per runtime")
    parser.add_argument("--onnx-settings", action="store_true",
                        help="only: ONNX Runtime's query latency under other thread, padding and graph settings")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    documents, questions = texts(args.data, args.texts)
    if args.child:
        print(json.dumps(child(args.child, questions, documents)))
        return
    if args.onnx_settings:
        grid = onnx_settings(questions)
        print(json.dumps(grid, indent=2) if args.json else "\n".join(
            ["| ONNX Runtime settings | query p50 / p95 ms |", "|---|---|"]
            + [f"| {label} | {r['p50_ms']:.2f} / {r['p95_ms']:.2f} |" for label, r in grid.items()]))
        return
    names = [n for n in args.runtimes.split(",") if n]
    if "torch" not in names:
        names.insert(0, "torch")
    results = measure(names, documents, questions, args.rounds)
    for name in names:
        process = subprocess.run([sys.executable, __file__, "--child", name, "--data", str(args.data)],
                                 capture_output=True, text=True, check=True)
        results[name].update(json.loads(process.stdout))
        results[name]["installed_mb"] = installed_mb(PACKAGES[name])
    report = {"documents": len(documents), "questions": len(questions), "runtimes": results}
    print(json.dumps(report, indent=2) if args.json else table(report))


def table(report: dict) -> str:
    rows = [("runtime", "docs cos min", "query cos min (today / fp32)", "query p50 / p95 ms", "docs/s",
             "import+load s", "RSS load / 100 q / 256 docs MB", "installs MB")]
    for name, r in report["runtimes"].items():
        rows.append((name, f"{r['documents_cosine']['min']:.6f}",
                     f"{r['queries_cosine_today']['min']:.6f} / {r['queries_cosine_float32']['min']:.6f}",
                     f"{r['query_p50_ms']:.2f} / {r['query_p95_ms']:.2f}", f"{r['documents_per_s']:.1f}",
                     f"{r['import_load_s']:.2f}",
                     f"{r['rss_load_mb']:.0f} / {r['rss_100_queries_mb']:.0f} / {r['rss_256_docs_trimmed_mb']:.0f}",
                     f"{r['installed_mb']:.0f}"))
    lines = [f"{report['documents']} LoCoMo dev turns, {report['questions']} questions"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(2, "|" + "---|" * len(rows[0]))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
