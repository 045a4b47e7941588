"""all-MiniLM-L6-v2 on ONNX Runtime, its graph written here from the safetensors weights: memdir's embedder.

The graph is BERT's six layers in standard ONNX operators (ONNX Runtime's optimizer fuses what it
can), mean pooling over the real tokens and L2 normalisation; the tokenizer is the model's
tokenizer.json through `tokenizers`, as transformers reads it. No torch: a process that loads it and
embeds one query peaks at 171 MiB instead of 341 and is done in 0.6 s instead of 5.6 (busy machine);
111 MB installed instead of 842; the same vectors (cosine to torch's >= 0.99998) and as fast
(bench/runtime.py, bench/results/install-and-runtime.md "Embedding runtime").

What made an earlier ONNX Runtime trial 5-8x slower than torch, and is avoided here
(bench/results/install-and-runtime.md, "Embedding runtime"): a thread pool of one thread per core whose workers spin
while they wait, on a machine whose two cores are shared, and texts padded to a fixed length. One thread per session, no
spinning, each batch padded only to its longest text; documents use both cores by running two
batches at once (ONNX Runtime lets go of the GIL while it runs).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .weights import BertShape, bert_shape, drop_resident_pages, file_offset, mapped_weights, padded, tokenizer

log = logging.getLogger(__name__)

BATCH = 32
TOKEN_BUDGET = 256  # padded tokens in one batch: 32 texts of 8 tokens, 8 of 32, 1 of 256
OPSET = 17
LONG_QUERY_TOKENS = 64  # word pieces from which a query may take the int8 graph (OnnxMiniLM.embed_query)


class OnnxMiniLM:
    id = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, folder: Path | None = None, threads: int = 1, prepack: bool = True,
                 optimization: str = "all", spinning: bool = False, int8_long_queries: bool = False,
                 int8_cache: Path | None = None) -> None:
        """The defaults are what memdir runs; the others exist so bench/runtime.py can show what they cost
        (threads: ONNX Runtime's intra-op threads, 0 for its default of one per core).
        int8_long_queries: a query of LONG_QUERY_TOKENS word pieces or more is embedded by an int8 copy of the
        graph (smooth_int8.py), built at its first use; its calibration is kept in `int8_cache` (a folder)."""
        import os

        from .model_files import model_dir

        self._folder = folder = folder or model_dir()
        shape = bert_shape(folder)
        self.tokenizer = tokenizer(folder)
        weights = mapped_weights(folder / "model.safetensors")
        graph, shared = build_graph(weights, shape, folder)
        self._options = dict(threads=threads, prepack=prepack, optimization=optimization, spinning=spinning)
        self._session, self._weights = session(graph, shared, folder, **self._options)  # type: ignore[arg-type]
        self._file = weights  # views of the mapped model file, which the int8 graph is made from too
        self._mapped = weights["embeddings.word_embeddings.weight"]  # a view of the mapped model file
        drop_resident_pages(self._mapped)
        workers = min(2, os.cpu_count() or 1) if threads == 1 else 1
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="memdir-embed") if workers > 1 else None
        self._lock = threading.Lock()
        self.int8_long_queries = int8_long_queries
        self._int8_cache = int8_cache
        self._int8: Any = None  # the int8 query session, once built
        self._int8_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            encoded = self.tokenizer.encode_batch(list(texts))
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            batches = token_batches([len(e.ids) for e in encoded])
            run = lambda chosen: self._run([encoded[i] for i in chosen])  # noqa: E731
            # One thread per batch: ONNX Runtime lets go of the GIL while it runs, so two batches use both cores.
            results = self._pool.map(run, batches) if self._pool and len(batches) > 1 else map(run, batches)
            for chosen, vectors in zip(batches, results):
                out[chosen] = vectors
        self._let_go_of_read_rows()
        if len(texts) > 1:
            release_freed_memory()
        return out

    def embed_query(self, text: str, int8: bool | None = None) -> np.ndarray:
        """A query's vector; a long one from the int8 graph when `int8` (None: as the embedder was made) says so.
        Its vectors are at cosine >= 0.999 to float32's and cost 60 % of the CPU (bench/results/s16-long16.md);
        short queries cost a few ms either way and keep float32's vectors exactly."""
        encoded = self.tokenizer.encode(text)
        use_int8 = self.int8_long_queries if int8 is None else int8
        if use_int8 and len(encoded.ids) >= LONG_QUERY_TOKENS:
            ids, mask = padded([encoded])
            vector = self._int8_session().run(None, {"ids": ids, "mask": mask})[0][0]
        else:
            vector = self._run([encoded])[0]
        self._let_go_of_read_rows()
        return vector

    def _int8_session(self) -> Any:
        """The int8 query session, built at its first use; the float32 one if it cannot be (said once in the log)."""
        with self._int8_lock:
            if self._int8 is None:
                from .smooth_int8 import int8_query_graph

                try:
                    graph, shared = int8_query_graph(self._folder, self._int8_cache, self._file)
                    self._int8 = session(graph, shared, self._folder, **self._options)  # type: ignore[arg-type]
                except Exception as exc:  # noqa: BLE001 - an onnxruntime without the int8 kernels: float32 it is
                    log.warning("long queries stay float32: the int8 graph was not built (%s)", exc)
                    self._int8 = (self._session, {})
                # The weights it read to quantize stay in the page cache, not in this process; the build's copies go.
                drop_resident_pages(self._mapped)
                release_freed_memory()
            return self._int8[0]

    def _let_go_of_read_rows(self) -> None:
        """Unmap the model file's pages this call read: the rows of the word-embedding table its tokens named (and
        the small weights the session reads in place). They stayed counted in the process's resident memory: 7 MB
        after 50 queries, 30 MB after 1,024 documents (bench/results/scale.md, issue 32 item 1, mem10k-w3s7). They are
        clean pages of the installed file, still in the page cache: the next call maps what it reads back with a minor
        fault a page, and the vectors do not change."""
        drop_resident_pages(self._mapped)

    def _run(self, encoded: list) -> np.ndarray:  # tokenizers.Encoding
        ids, mask = padded(encoded)
        return self._session.run(None, {"ids": ids, "mask": mask})[0]


def session(graph: bytes, shared: dict[str, np.ndarray], folder: Path, threads: int = 1, prepack: bool = True,
            optimization: str = "all", spinning: bool = False) -> tuple[Any, dict[str, Any]]:
    """An ONNX Runtime session on `graph`, the weights it names handed over in place, and those handed values (they
    must live as long as the session)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # documents run two batches at once instead (see embed)
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


def token_batches(lengths: list[int]) -> list[list[int]]:
    """Text positions in batches, shortest texts first so each batch pads little, at most BATCH texts
    and TOKEN_BUDGET padded tokens each. The graph holds a batch's attention scores whole (texts x 12
    heads x tokens^2): 32 texts of 256 tokens are 100 MB a tensor, and peaked at 1.1 GB resident;
    at 1,024 tokens (4 of 256, 12 MB a tensor) the host peaked at 386 MB embedding long and short texts,
    at 256 tokens (one of 256, 3 MB) at 257 MB, the vectors equal (cosine >= 0.999999) and no slower
    in CPU per text: smaller tensors, and glibc keeps fewer of a batch's freed ones resident until the
    call's `malloc_trim` (bench/results/scale.md, issue 32 item 1, build100k-w3s8)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < BATCH and (len(batches[-1]) + 1) * lengths[i] <= TOKEN_BUDGET:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def release_freed_memory() -> None:
    """Hand a batch's freed activations back to the system: glibc keeps freed heap pages for reuse,
    and after 128 long documents a process held 543 MB resident instead of 180."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        pass


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
