"""all-MiniLM-L6-v2 as an ONNX graph written here from the safetensors weights, and the ONNX Runtime session it runs in.

The graph is BERT's six layers in standard ONNX operators (ONNX Runtime's optimizer fuses what it can), mean pooling
over the real tokens and L2 normalisation. Its own module because the embedder (onnx_minilm.py) runs it and the int8
copy for long queries (smooth_int8.py) rewrites its Linears through `Writer`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np

from .weights import BertShape, file_offset

OPSET = 17


def session(graph: bytes, shared: dict[str, np.ndarray], folder: Path, threads: int = 1, prepack: bool = True,
            optimization: str = "all", spinning: bool = False) -> tuple[Any, dict[str, Any]]:
    """An ONNX Runtime session on `graph`, the weights it names handed over in place, and those handed values (they
    must live as long as the session)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # documents run two batches at once instead (OnnxMiniLM.embed)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = {
        "none": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[optimization]
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    options.enable_mem_pattern = False  # shapes change with every text; a fixed arena plan buys nothing
    options.enable_cpu_mem_arena = False  # give activations back after each call
    if not prepack:
        options.add_session_config_entry("session.disable_prepacking", "1")
    # The weights in the graph point into model.safetensors; the session is handed the mapped views
    # instead of reading its own copy, so they stay shared, clean pages of the installed file.
    options.add_session_config_entry("session.model_external_initializers_file_folder_path", str(folder))
    handed = {name: ort.OrtValue.ortvalue_from_numpy(array) for name, array in shared.items()}
    for name, value in handed.items():
        options.add_initializer(name, value)
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"]), handed


class Writer:
    """What a graph's author writes with: constants, the model file's weights, operators. `linear` may be swapped
    for another way of computing a Linear (smooth_int8.py writes an int8 one), given the same three."""

    def __init__(self, const: Callable[[np.ndarray], str], weight: Callable[[str], str],
                 op: Callable[..., str], outputs: list[str]) -> None:
        self.const, self.weight, self.op = const, weight, op
        self.outputs = outputs  # extra graph outputs, float [any, any]: what a calibration reads

    def linear(self, x: str, name: str) -> str:  # x is [tokens, in]; the file keeps torch's [out, in]
        return self.op("Gemm", [x, self.weight(name + ".weight"), self.weight(name + ".bias")], transB=1)


def build_graph(w: dict[str, np.ndarray], shape: BertShape, folder: Path,
                writer: Callable[..., Writer] = Writer) -> tuple[bytes, dict[str, np.ndarray]]:
    """The model as a serialized ONNX graph (ids and mask [batch, tokens] -> unit vectors [batch, 384]) and
    the weights it names, each a view of the mapped model file that the session uses in place. Written by
    onnx_wire.py, not the onnx package, which the embedding host would otherwise hold for nothing after this."""
    from . import onnx_wire as wire

    nodes: list[bytes] = []
    inits: list[bytes] = []
    shared: dict[str, np.ndarray] = {}
    extra_outputs: list[str] = []
    count = [0]

    def const(array: np.ndarray) -> str:
        count[0] += 1
        name = f"c{count[0]}"
        inits.append(wire.tensor(name, np.ascontiguousarray(array)))  # a scalar becomes one element, as it always has
        return name

    def weight(name: str) -> str:
        """A tensor of the model file, declared where it lies in it and handed to the session as is."""
        array = w[name]
        inits.append(wire.external_tensor(name, array.shape, "model.safetensors", file_offset(array), array.nbytes))
        shared[name] = array
        return name

    def op(kind: str, inputs: list[str], **attrs) -> str:  # type: ignore[no-untyped-def]
        count[0] += 1
        out = f"t{count[0]}"
        nodes.append(wire.node(kind, inputs, [out], **attrs))
        return out

    linear = writer(const, weight, op, extra_outputs).linear

    def layer_norm(x: str, name: str) -> str:
        return op("LayerNormalization", [x, weight(name + ".weight"), weight(name + ".bias")], axis=-1,
                  epsilon=shape.eps)

    h, heads = shape.hidden, shape.heads
    batch_tokens = op("Shape", ["ids"])
    length = op("Slice", [batch_tokens, const(np.array([1])), const(np.array([2]))])
    positions = w["embeddings.position_embeddings.weight"] + w["embeddings.token_type_embeddings.weight"][0]
    x = op("Add", [op("Gather", [weight("embeddings.word_embeddings.weight"), "ids"]),
                   op("Slice", [const(positions), const(np.array([0])), length, const(np.array([0]))])])
    # Every token of the batch one row of a matrix, so each Linear is one Gemm on the file's own weights.
    x = op("Reshape", [layer_norm(x, "embeddings.LayerNorm"), const(np.array([-1, h]))])
    real = op("Cast", ["mask"], to=wire.FLOAT)
    # -10000 on padding, 0 on real tokens (as BERT does), broadcast over heads and query positions
    padding = op("Mul", [op("Sub", [const(np.array(1.0, np.float32)), real]), const(np.array(-1e4, np.float32))])
    padding = op("Unsqueeze", [padding, const(np.array([1, 2]))])
    split = op("Concat", [batch_tokens, const(np.array([heads, h // heads]))], axis=0)
    scale = const(np.array(1 / np.sqrt(h // heads), np.float32))
    for n in range(shape.layers):
        p = f"encoder.layer.{n}."
        q, k, v = (op("Reshape", [linear(x, p + "attention.self." + name), split]) for name in ("query", "key", "value"))
        scores = op("MatMul", [op("Transpose", [q], perm=[0, 2, 1, 3]), op("Transpose", [k], perm=[0, 2, 3, 1])])
        weights = op("Softmax", [op("Add", [op("Mul", [scores, scale]), padding])], axis=-1)
        context = op("MatMul", [weights, op("Transpose", [v], perm=[0, 2, 1, 3])])
        context = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), const(np.array([-1, h]))])
        x = layer_norm(op("Add", [linear(context, p + "attention.output.dense"), x]), p + "attention.output.LayerNorm")
        inner = linear(x, p + "intermediate.dense")
        inner = op("Mul", [op("Mul", [inner, const(np.array(0.5, np.float32))]),  # exact (erf) GELU, as BERT's
                           op("Add", [op("Erf", [op("Div", [inner, const(np.array(np.sqrt(2.0), np.float32))])]),
                                      const(np.array(1.0, np.float32))])])
        x = layer_norm(op("Add", [linear(inner, p + "output.dense"), x]), p + "output.LayerNorm")
    x = op("Reshape", [x, op("Concat", [batch_tokens, const(np.array([h]))], axis=0)])
    share = op("Unsqueeze", [real, const(np.array([2]))])
    pooled = op("Div", [op("ReduceSum", [op("Mul", [x, share]), const(np.array([1]))], keepdims=0),
                        op("Max", [op("ReduceSum", [share, const(np.array([1]))], keepdims=0),
                                   const(np.array(1e-9, np.float32))])])
    norm = op("Max", [op("ReduceL2", [pooled], axes=[1], keepdims=1), const(np.array(1e-12, np.float32))])
    nodes.append(wire.node("Div", [pooled, norm], ["vectors"]))
    inputs = [wire.value_info(name, wire.INT64, ["batch", "tokens"]) for name in ("ids", "mask")]
    outputs = [wire.value_info("vectors", wire.FLOAT, ["batch", h])]
    outputs += [wire.value_info(name, wire.FLOAT, ["rows", "columns"]) for name in extra_outputs]
    uses_microsoft = any(b"com.microsoft" in n for n in nodes)
    return wire.model(nodes, "all-MiniLM-L6-v2", inits, inputs, outputs, ir_version=8, opset=OPSET,
                      domains={"com.microsoft": 1} if uses_microsoft else None), shared
