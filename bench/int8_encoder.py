"""An int8 encoder for memdir's MiniLM, measured against today's float32 one (issue 32 item 3).

The float32 graph memdir runs (indexer/onnx_minilm.py) is rewritten here, each Linear (Gemm) replaced
by a product on 8-bit integers, its weight quantized per output column (symmetric, int8):
- `per-tensor`: ONNX Runtime's DynamicQuantizeMatMul, what `onnxruntime.quantization.quantize_dynamic`
  emits: the activations of a whole batch share one uint8 scale, computed per call;
- `per-token`: each token (row) its own scale (ReduceMax of |x|, then MatMulInteger), so one token's
  large values no longer coarsen the others'. ONNX Runtime's full optimization fuses this into
  MatMulIntegerToFloat as if the scale were one number (the vectors come out at cosine ~0.6), so this
  variant runs with the basic graph optimizations.
Printed: cosine of each variant's vectors to float32's (min, 1st percentile, median) on the texts a
fresh reindex of LoCoMo dev embeds and on the coding set's memories and questions, and texts/s
through `embed`, the variants taking turns, CPU seconds beside wall seconds (the machine is shared).

    python bench/int8_encoder.py              # 600 LoCoMo texts, the coding set, 3 rounds
    python bench/int8_encoder.py --texts 2000 --json
    python bench/int8_encoder.py --turns 200 --texts 100 --rounds 1   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import numpy as np  # noqa: E402

from coding import MEMORIES, QUESTIONS  # noqa: E402
from reindex import turn_files, write  # noqa: E402

from indexer.embed import CachedEmbedder, HashingEmbedder  # noqa: E402
from indexer.minilm_graph import build_graph  # noqa: E402
from indexer.onnx_minilm import OnnxMiniLM  # noqa: E402
from indexer.rebuild import rebuild  # noqa: E402
from indexer.weights import bert_shape, mapped_weights  # noqa: E402
from locomo import DEFAULT_DATA  # noqa: E402
from vault import Vault  # noqa: E402

VARIANTS = ("float32", "per-tensor", "per-token")


class _Recorder(HashingEmbedder):
    """Keeps every text a rebuild embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.seen += list(texts)
        return super().embed(texts)


def reindex_texts(data: Path, turns: int | None) -> list[str]:
    """The texts a fresh reindex of one memory per LoCoMo dev turn embeds (bench/reindex.py's vault)."""
    with tempfile.TemporaryDirectory(prefix="memdir-int8-") as tmp:
        write(Path(tmp), turn_files(data, turns))
        recorder = _Recorder()
        rebuild(Vault(Path(tmp)), CachedEmbedder(recorder, None))
    return recorder.seen


def quantized(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """torch's [out, in] weight as int8 [in, out] and one scale per output column."""
    columns = np.ascontiguousarray(weight.T, dtype=np.float32)
    scale = np.maximum(np.abs(columns).max(axis=0), 1e-12) / 127.0
    return np.clip(np.rint(columns / scale), -127, 127).astype(np.int8), scale.astype(np.float32)


def int8_graph(variant: str) -> bytes:
    """memdir's float32 graph with every Gemm replaced by `variant`'s integer product."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from indexer.model_files import model_dir

    folder = model_dir()
    weights = mapped_weights(folder / "model.safetensors")
    model = onnx.load_from_string(build_graph(weights, bert_shape(folder), folder)[0])
    graph = model.graph
    nodes = []
    for node in graph.node:
        if node.op_type != "Gemm":
            nodes.append(node)
            continue
        x, name, bias = node.input
        matrix, scales = quantized(weights[name])
        graph.initializer.extend([numpy_helper.from_array(matrix, name + ".q"),
                                  numpy_helper.from_array(scales, name + ".s")])
        out, tag = node.output[0], name
        if variant == "per-tensor":
            nodes.append(helper.make_node("DynamicQuantizeMatMul", [x, name + ".q", name + ".s", "", bias], [out],
                                          domain="com.microsoft"))
            continue
        graph.initializer.extend([numpy_helper.from_array(np.array(127.0, np.float32), tag + ".127"),
                                  numpy_helper.from_array(np.array(128.0, np.float32), tag + ".128f"),
                                  numpy_helper.from_array(np.array(128, np.uint8), tag + ".128"),
                                  numpy_helper.from_array(np.array(1e-12, np.float32), tag + ".tiny")])
        steps = [  # row scale = max|x| / 127; x as uint8 around 128; the integer product scaled back, bias added
            ("Abs", [x], "abs", {}), ("ReduceMax", [tag + ".abs"], "max", {"axes": [1], "keepdims": 1}),
            ("Max", [tag + ".max", tag + ".tiny"], "maxed", {}), ("Div", [tag + ".maxed", tag + ".127"], "row", {}),
            ("Div", [x, tag + ".row"], "scaled", {}), ("Round", [tag + ".scaled"], "round", {}),
            ("Add", [tag + ".round", tag + ".128f"], "shifted", {}),
            ("Cast", [tag + ".shifted"], "xq", {"to": TensorProto.UINT8}),
            ("MatMulInteger", [tag + ".xq", name + ".q", tag + ".128"], "int", {}),
            ("Cast", [tag + ".int"], "float", {"to": TensorProto.FLOAT}),
            ("Mul", [tag + ".row", name + ".s"], "both", {}), ("Mul", [tag + ".float", tag + ".both"], "product", {}),
        ]
        for kind, inputs, output, attrs in steps:
            nodes.append(helper.make_node(kind, inputs, [tag + "." + output], **attrs))
        nodes.append(helper.make_node("Add", [tag + ".product", bias], [out]))
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model.SerializeToString()


def load(variant: str) -> OnnxMiniLM:
    """OnnxMiniLM with its session swapped for `variant`'s (same threads, no spinning, its batching)."""
    import onnxruntime as ort

    from indexer.model_files import model_dir

    model = OnnxMiniLM()
    if variant == "float32":
        return model
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_BASIC if variant == "per-token"
                                        else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.model_external_initializers_file_folder_path", str(model_dir()))
    graph = int8_graph(variant)
    import onnx

    names = {init.name for init in onnx.load_from_string(graph).graph.initializer}
    for name, value in model._weights.items():
        if name in names:
            options.add_initializer(name, value)
    model._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    return model


def cosines(a: np.ndarray, b: np.ndarray) -> dict:
    values = (a * b).sum(axis=1)
    return {"min": round(float(values.min()), 5), "p1": round(float(np.percentile(values, 1)), 5),
            "median": round(float(np.median(values)), 5)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--texts", type=int, default=600, help="LoCoMo reindex texts sampled (fixed seed)")
    parser.add_argument("--turns", type=int, help="only the first N turns' texts to sample from (a quicker run)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    locomo = random.Random(1).sample(reindex_texts(args.data, args.turns), args.texts)
    coding = [f"{m[3]}\n{m[4]}" for m in MEMORIES] + [q[0] for q in QUESTIONS]
    models = {name: load(name) for name in VARIANTS}
    vectors = {name: {"locomo": m.embed(locomo), "coding": m.embed(coding)} for name, m in models.items()}
    timing: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    for turn in range(args.rounds):
        order = VARIANTS[turn % len(VARIANTS):] + VARIANTS[:turn % len(VARIANTS)]
        for name in order:
            cpu, wall = os.times(), time.perf_counter()
            models[name].embed(locomo)
            after = os.times()
            timing[name].append((time.perf_counter() - wall, after.user + after.system - cpu.user - cpu.system))
    report = {}
    for name in VARIANTS:
        wall = statistics.median(t[0] for t in timing[name])
        cpu = statistics.median(t[1] for t in timing[name])
        report[name] = {"texts_per_s": round(len(locomo) / wall, 1), "texts_per_cpu_s": round(len(locomo) / cpu, 1),
                        "cosine_locomo": cosines(vectors["float32"]["locomo"], vectors[name]["locomo"]),
                        "cosine_coding": cosines(vectors["float32"]["coding"], vectors[name]["coding"])}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("| variant | texts/s | texts/CPU s | cosine LoCoMo min / p1 / median | cosine coding min / p1 / median |")
    print("|---|---:|---:|---|---|")
    for name, row in report.items():
        lo, co = row["cosine_locomo"], row["cosine_coding"]
        print(f"| {name} | {row['texts_per_s']} | {row['texts_per_cpu_s']} | {lo['min']} / {lo['p1']} / {lo['median']} "
              f"| {co['min']} / {co['p1']} / {co['median']} |")


if __name__ == "__main__":
    main()
