"""An int8 copy of the MiniLM graph for long queries, SmoothQuant-style: per-tensor int8 products, vectors within
cosine 0.999 of float32's.

BERT's activations have a few input channels far larger than the rest, so one int8 scale for a whole tensor (what
ONNX Runtime's DynamicQuantizeMatMul computes per call) rounds the other channels coarsely: cosine 0.977 to float32
at worst (bench/results/reindex-and-pull.md, "An int8 encoder"). SmoothQuant moves that range into the weights:
each input channel j of a Linear is divided by s_j before the product and its weight row multiplied by s_j, the
product unchanged in exact arithmetic, with s_j = max|x_j|^a / max|w_j|^(1-a); the activations come out flat enough
for one scale. The weights are then int8 per output column. max|x_j| is read once from the float32 graph on
calibration texts (`activation_maxima`).

The division is a Mul before each product, not folded into the LayerNorm before it: BERT's LayerNorm output is also
the residual, which must stay as it is. The FFN's output projection stays float32 (KEPT_FLOAT32).
"""

from __future__ import annotations

import hashlib
import io
import logging
import platform
import re
import zipfile
from functools import partial
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from vault.atomic import write_state

from .minilm_graph import Writer, build_graph, session
from .onnx_wire import FLOAT
from .weights import bert_shape, mapped_weights, padded

log = logging.getLogger(__name__)

# How much of each channel's range moves into the weights (SmoothQuant's migration strength). Chosen on the cosine to
# float32 of 626 query vectors, every Linear int8: 0.3 -> min 0.63, 0.5 -> 0.975, 0.6 -> 0.991, 0.7 -> 0.995, 0.8 ->
# 0.989 (bench/results/s16-long16.md); 0.9991 with the FFN's output float32 (below).
ALPHA = 0.7
CALIBRATION_FILE = "int8_calibration.txt"
# The FFN's output projection stays float32. Its input, GELU's output, has a few tokens far larger than the rest, which
# one scale for the whole tensor cannot hold and smoothing (per channel) does not move: int8 there was most of the
# error (mean 1 - cosine 18.5e-4 -> 4.0e-4 with it float32, each of the six layers a part) and flipped near-ties in the
# long prompts' rankings (MRR@10 0.807 -> 0.777). It is a third of the products: x2.6 less CPU became x1.75.
KEPT_FLOAT32 = re.compile(r"encoder\.layer\.\d+\.output\.dense")


def vnni(cpuinfo: str | None = None, machine: str | None = None) -> bool:
    """Whether the CPU multiplies ONNX Runtime's uint8 activations by int8 weights and adds them in 32 bits (x86 VNNI).
    Without it, x86 adds each pair of u8 x s8 products in a saturating int16 (2 x 255 x 127 > 32767), and gains no
    speed either (bench/results/s18-lead.md). Not x86, or no way to tell: False."""
    machine = platform.machine().lower() if machine is None else machine.lower()
    if machine not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines() if line.startswith("flags")), [])
    return bool({"avx512_vnni", "avx_vnni"} & set(flags))


def int8_pays() -> bool:
    """Whether texts should take the int8 graph on this machine: where the CPU has VNNI. On an AVX2 machine the int8
    graph ran at x0.99-1.01 of float32's CPU and, even with 7-bit weights, cost the long prompts' MRR@10 0.807 ->
    0.787; with VNNI it was 40 % less CPU for vectors at cosine 0.999 (sessions 16, 17). `MEMDIR_INT8` overrides it
    at the entry points (mcp_server.config.int8_override)."""
    return vnni()


def weight_levels() -> int:
    """The largest int8 weight: 127 with VNNI; 63 without (a graph made there anyway: MEMDIR_INT8=always), whose
    pairs of products then stay under int16's limit (2 x 255 x 63 < 32767): long queries at cosine 0.998 to float32
    instead of 0.988 on an AVX2 machine."""
    return 127 if vnni() else 63


def quantized_columns(weight: np.ndarray, levels: int = 127) -> tuple[np.ndarray, np.ndarray]:
    """A [in, out] float matrix as int8 in -levels..levels and one scale per output column (symmetric)."""
    scale = np.maximum(np.abs(weight).max(axis=0), 1e-12) / float(levels)
    return np.clip(np.rint(weight / scale), -levels, levels).astype(np.int8), scale.astype(np.float32)


def smoothing(activation_max: np.ndarray, weight: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """s_j for each input channel of a torch [out, in] weight, given max|x_j| on calibration texts."""
    weight_max = np.maximum(np.abs(weight).max(axis=0), 1e-5)
    return np.maximum(np.maximum(activation_max, 1e-5) ** alpha / weight_max ** (1 - alpha), 1e-5).astype(np.float32)


class _Taps(Writer):
    """The float32 graph, with each Linear's input's max |x| per channel as an extra output, in order."""

    def __init__(self, *writes: Any, names: list[str]) -> None:
        super().__init__(*writes)
        self.names = names

    def linear(self, x: str, name: str) -> str:
        self.outputs.append(self.op("ReduceMax", [self.op("Abs", [x])], axes=[0], keepdims=1))
        self.names.append(name)
        return super().linear(x, name)


class _Int8(Writer):
    """Each Linear but the FFN's output smoothed by `maxima` and computed by DynamicQuantizeMatMul on int8 weights.

    Padding rows are zeroed before each product: DynamicQuantizeMatMul scales the whole batch by its largest value, and
    a padding token's activations, which nothing reads, set it often enough to cost documents embedded in batches
    cosine 0.996 at worst (0.998 with them zeroed; bench/results/s17-int8docs17.md). A text run alone has no
    padding, and a product by 1.0 is exact: a query's vector is the same bytes either way."""

    def __init__(self, *writes: Any, weights: dict[str, np.ndarray], maxima: dict[str, np.ndarray], alpha: float) -> None:
        super().__init__(*writes)
        self.weights, self.maxima, self.alpha = weights, maxima, alpha
        self.levels = weight_levels()
        self._real_rows = ""  # the mask as a [tokens, 1] column, written once at the first Linear

    def linear(self, x: str, name: str) -> str:
        if KEPT_FLOAT32.fullmatch(name):
            return super().linear(x, name)
        weight = self.weights[name + ".weight"]
        s = smoothing(self.maxima[name], weight, self.alpha)
        matrix, scales = quantized_columns((weight * s).T, self.levels)
        if not self._real_rows:
            self._real_rows = self.op("Reshape", [self.op("Cast", ["mask"], to=FLOAT), self.const(np.array([-1, 1]))])
        flat = self.op("Mul", [self.op("Mul", [x, self._real_rows]), self.const((1.0 / s).astype(np.float32))])
        return self.op("DynamicQuantizeMatMul", [flat, self.const(matrix), self.const(scales), "",
                                                 self.weight(name + ".bias")], domain="com.microsoft")


def calibration_texts() -> list[str]:
    """Texts of the kinds memdir embeds (notes, decisions, logs, code, chat, questions), shipped beside this module."""
    text = (Path(__file__).with_name(CALIBRATION_FILE)).read_text(encoding="utf-8")
    return [part.strip() for part in text.split("\n\n") if part.strip()]


def activation_maxima(folder: Path, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """max |x_j| at each Linear's input over `texts`, one text at a time, from the float32 graph."""
    from .weights import tokenizer

    weights = mapped_weights(folder / "model.safetensors")
    names: list[str] = []
    graph, shared = build_graph(weights, bert_shape(folder), folder, partial(_Taps, names=names))
    run, _handed = session(graph, shared, folder)
    tok = tokenizer(folder)
    maxima: dict[str, np.ndarray] = {}
    for text in texts:
        ids, mask = padded([tok.encode(text)])
        for name, value in zip(names, run.run(None, {"ids": ids, "mask": mask})[1:]):
            maxima[name] = np.maximum(maxima.get(name, np.float32(0)), value[0]).astype(np.float32)
    return maxima


def int8_graph(folder: Path, maxima: dict[str, np.ndarray], alpha: float = ALPHA,
               weights: dict[str, np.ndarray] | None = None) -> tuple[bytes, dict[str, np.ndarray]]:
    """The graph with every Linear but KEPT_FLOAT32 smoothed and int8, and the float32 weights it still names
    (embeddings, biases, LayerNorms, the FFN outputs), for `onnx_minilm.session`. `weights`: the model file already
    mapped (the float32 embedder's), else mapped here."""
    weights = weights if weights is not None else mapped_weights(folder / "model.safetensors")
    return build_graph(weights, bert_shape(folder), folder, partial(_Int8, weights=weights, maxima=maxima, alpha=alpha))


def calibration_key(folder: Path) -> str:
    """What the maxima depend on: the model file's bytes and the calibration texts."""
    digest = hashlib.sha256()
    with (folder / "model.safetensors").open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    digest.update((Path(__file__).with_name(CALIBRATION_FILE)).read_bytes())
    return digest.hexdigest()[:32]


def cached_maxima(folder: Path, cache: Path | None, weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The calibration's maxima, from `cache` when it holds them for this model and these texts (1.5 CPU s saved)."""
    path = cache / f"int8-calibration-{calibration_key(folder)}.npz" if cache is not None else None
    if path is not None and path.is_file():
        try:
            with np.load(io.BytesIO(path.read_bytes())) as stored:  # bytes first: a torn file leaves no handle open
                maxima = {name: stored[name] for name in stored.files}
            if fits(maxima, weights):
                return maxima
            log.info("int8 calibration in %s is not this model's; calibrating again", path)
        # Torn (BadZipFile), empty (EOFError: a power cut after its unsynced write), foreign: calibrate again and
        # replace it. Anything it let through made every later host's long queries float32 (review of session 16).
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            log.info("int8 calibration in %s not read (%s); calibrating again", path, exc)
    maxima = activation_maxima(folder, calibration_texts())
    if path is not None:
        out = io.BytesIO()
        np.savez(out, **maxima)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the host's folder: its owner's alone
            write_state(path, out.getvalue(), durable=False)
        except OSError as exc:  # a cache: the next host calibrates again
            log.info("int8 calibration not kept in %s: %s", path, exc)
    return maxima


def fits(maxima: dict[str, np.ndarray], weights: dict[str, np.ndarray]) -> bool:
    """Whether `maxima` are one float vector for each Linear of the model's encoder, as wide as that Linear's input."""
    linears = {name.removesuffix(".weight"): array.shape[1] for name, array in weights.items()
               if name.startswith("encoder.layer.") and name.endswith(".weight") and array.ndim == 2}
    return maxima.keys() == linears.keys() and all(
        maxima[name].shape == (width,) and maxima[name].dtype == np.float32 for name, width in linears.items())


def int8_query_graph(folder: Path, cache: Path | None,
                     weights: dict[str, np.ndarray] | None = None) -> tuple[bytes, dict[str, np.ndarray]]:
    weights = weights if weights is not None else mapped_weights(folder / "model.safetensors")
    return int8_graph(folder, cached_maxima(folder, cache, weights), weights=weights)
