"""all-MiniLM-L6-v2 run with torch alone: the model's six BERT layers, mean pooling and L2 norm.

memdir's only embedder. sentence-transformers and transformers (with scipy and scikit-learn, 300 MB
of the install) cost about 190 MB of resident memory and 4 s of import before a single text was
embedded, for what is here about sixty lines: the same weights
(model.safetensors from the installed package), the same tokenizer (tokenizer.json through the
`tokenizers` library transformers itself uses), the same arithmetic: 274 MB resident after loading
against 535 MB, loaded in 1.0 s against 5.0 s, as many documents per second; document vectors
match sentence-transformers' to cosine 0.9999999 on 1,500 LoCoMo turns (tests/indexer/test_minilm.py
compares them on every test run, sentence-transformers being a test dependency only).

A query, a dozen tokens, is bound by reading the weights rather than by arithmetic: on CPUs that
multiply bfloat16 natively its Linear layers run on a bfloat16 copy of their weights (21 MB that
stay in cache instead of 42 MB streamed from memory), everything else in float32: 6.1 vs 9.0 ms
p50 per LoCoMo question on one thread, cosine to the float32 vector >= 0.99998.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

MAX_TOKENS = 256  # sentence_bert_config.json: longer texts are truncated, as sentence-transformers does
BATCH = 32


class MiniLM:
    id = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, folder: Path | None = None, threads: int | None = None, bf16_queries: bool | None = None) -> None:
        import torch  # deferred: torch costs a second to import
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        from .embed import model_dir

        folder = folder or model_dir()
        config = json.loads((folder / "config.json").read_text())
        self._torch = torch
        if threads:
            torch.set_num_threads(threads)
        self._threads = torch.get_num_threads()
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.w = {k: v.float().contiguous() for k, v in load_file(str(folder / "model.safetensors")).items()
                  if not k.startswith("pooler.") and k != "embeddings.position_ids"}
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self._lock = threading.Lock()
        if bf16_queries is None:
            bf16_queries = native_bf16(torch)
        # A query in bfloat16 where the CPU multiplies it natively: 6.9 vs 9.0 ms p50 here, cosine to
        # the float32 vector >= 0.99998. Documents stay float32: their vectors are what the index keeps.
        self.query_precision = "bfloat16" if bf16_queries else "float32"
        # The query path's Linear weights, cast once (autocast would cast all 22M of them on every query).
        self._w16 = ({k: v.to(torch.bfloat16) for k, v in self.w.items() if k.endswith(".weight") and v.dim() == 2
                      and not k.startswith("embeddings.")} if bf16_queries else {})

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            # Sorted by length, so each batch pads little (sentence-transformers does the same).
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            for start in range(0, len(order), BATCH):
                chosen = order[start:start + BATCH]
                out[chosen] = self._encode([texts[i] for i in chosen])
            return out

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            torch = self._torch
            torch.set_num_threads(1)  # one short text: a second thread costs more in hand-offs than it saves
            try:
                return self._encode([text], bf16=self.query_precision == "bfloat16")[0]
            finally:
                torch.set_num_threads(self._threads)

    def _encode(self, texts: list[str], bf16: bool = False) -> np.ndarray:
        torch, F, w = self._torch, self._torch.nn.functional, self.w
        w16 = self._w16

        def linear(x: torch.Tensor, name: str) -> torch.Tensor:
            if bf16:  # bfloat16 products, float32 everywhere else (sums, norms, softmax)
                return F.linear(x.to(torch.bfloat16), w16[name + ".weight"]).float() + w[name + ".bias"]
            return F.linear(x, w[name + ".weight"], w[name + ".bias"])

        encoded = self.tokenizer.encode_batch(texts)
        length = max(len(e.ids) for e in encoded)
        ids = torch.zeros((len(texts), length), dtype=torch.long)
        mask = torch.zeros((len(texts), length), dtype=torch.bool)
        for row, e in enumerate(encoded):
            ids[row, :len(e.ids)] = torch.tensor(e.ids)
            mask[row, :len(e.ids)] = True
        with torch.inference_mode():
            x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
                 + w["embeddings.token_type_embeddings.weight"][0])
            x = F.layer_norm(x, (x.shape[-1],), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
            attend = mask[:, None, None, :]  # every position may look at the real tokens only
            batch, _, hidden = x.shape
            for n in range(self.layers):
                p = f"encoder.layer.{n}."

                def heads(name: str) -> torch.Tensor:
                    y = linear(x, p + f"attention.self.{name}")
                    return y.view(batch, length, self.heads, hidden // self.heads).transpose(1, 2)

                context = F.scaled_dot_product_attention(heads("query"), heads("key"), heads("value"), attn_mask=attend)
                context = context.transpose(1, 2).reshape(batch, length, hidden)
                attended = linear(context, p + "attention.output.dense")
                x = F.layer_norm(attended + x, (hidden,), w[p + "attention.output.LayerNorm.weight"],
                                 w[p + "attention.output.LayerNorm.bias"], self.eps)
                inner = F.gelu(linear(x, p + "intermediate.dense"))
                out = linear(inner, p + "output.dense")
                x = F.layer_norm(out + x, (hidden,), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
                                 self.eps)
            weights = mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            pooled = F.normalize(pooled, p=2, dim=1)
        return pooled.float().numpy().astype(np.float32, copy=True)


def native_bf16(torch) -> bool:  # type: ignore[no-untyped-def]
    """Whether this CPU multiplies bfloat16 in hardware (AVX512_BF16 or AMX). Without it torch emulates
    bf16 and the query path would be slower than float32, so it is not used."""
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)
