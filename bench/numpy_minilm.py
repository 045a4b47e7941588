"""all-MiniLM-L6-v2 in plain numpy, a candidate runtime for bench/runtime.py (not used by memdir).

The weights are views of the mapped model file (shared between processes through the page cache);
every Linear multiplies by the file's [out, in] matrix transposed in place, so nothing is copied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from indexer.model_files import model_dir
from indexer.onnx_minilm import token_batches
from indexer.weights import bert_shape, mapped_weights, padded, tokenizer


def erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26 (error below 1.5e-7, under float32's resolution here): numpy has no erf."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


class NumpyMiniLM:
    id = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, folder: Path | None = None) -> None:
        folder = folder or model_dir()
        self.shape = bert_shape(folder)
        self.tokenizer = tokenizer(folder)
        self.w = mapped_weights(folder / "model.safetensors")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for chosen in token_batches([len(e.ids) for e in encoded]):  # memdir's own batching
            out[chosen] = self._encode([encoded[i] for i in chosen])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([self.tokenizer.encode(text)])[0]

    def _encode(self, encoded: list) -> np.ndarray:  # tokenizers.Encoding
        w, s = self.w, self.shape
        ids, mask = padded(encoded, np.float32)
        length = ids.shape[1]
        batch, head = len(encoded), s.hidden // s.heads

        def linear(x: np.ndarray, name: str) -> np.ndarray:
            return x @ w[name + ".weight"].T + w[name + ".bias"]

        def norm(x: np.ndarray, name: str) -> np.ndarray:
            mean = x.mean(-1, keepdims=True)
            centered = x - mean
            variance = (centered * centered).mean(-1, keepdims=True)
            return centered / np.sqrt(variance + s.eps) * w[name + ".weight"] + w[name + ".bias"]

        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = norm(x, "embeddings.LayerNorm").reshape(batch * length, s.hidden)
        padding = ((1.0 - mask) * -1e4)[:, None, None, :]
        for n in range(s.layers):
            p = f"encoder.layer.{n}."
            q, k, v = (linear(x, p + "attention.self." + name).reshape(batch, length, s.heads, head).transpose(0, 2, 1, 3)
                       for name in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head)) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, s.hidden)
            x = norm(linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inner = linear(x, p + "intermediate.dense")
            inner = inner * 0.5 * (1.0 + erf(inner / np.float32(np.sqrt(2.0))))
            x = norm(linear(inner, p + "output.dense") + x, p + "output.LayerNorm")
        x = x.reshape(batch, length, s.hidden)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)
