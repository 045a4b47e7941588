"""all-MiniLM-L6-v2 run with torch alone: the model's six BERT layers, mean pooling and L2 norm.

sentence-transformers and transformers cost about 190 MB of resident memory and 2-3 s of import
before a single text is embedded, for what is here about sixty lines: the same weights
(model.safetensors from the installed package), the same tokenizer (tokenizer.json through the
`tokenizers` library transformers itself uses), the same arithmetic. The embedding host uses it:
274 MB resident after loading against 535 MB, loaded in 1.0 s against 5.0 s, as many documents
per second; document vectors match sentence-transformers' to cosine 0.9999999 on 1,500 LoCoMo
turns (tests/indexer/test_minilm.py checks it on every run).
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
            from .query_model import native_bf16

            bf16_queries = native_bf16()
        # A query in bfloat16 where the CPU multiplies it natively: 6.9 vs 9.0 ms p50 here, cosine to
        # the float32 vector >= 0.99998. Documents stay float32: their vectors are what the index keeps.
        self.query_precision = "bfloat16" if bf16_queries else "float32"

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
                if self.query_precision == "bfloat16":
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        return self._encode([text])[0]
                return self._encode([text])[0]
            finally:
                torch.set_num_threads(self._threads)

    def _encode(self, texts: list[str]) -> np.ndarray:
        torch, F, w = self._torch, self._torch.nn.functional, self.w
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
                    y = F.linear(x, w[p + f"attention.self.{name}.weight"], w[p + f"attention.self.{name}.bias"])
                    return y.view(batch, length, self.heads, hidden // self.heads).transpose(1, 2)

                context = F.scaled_dot_product_attention(heads("query"), heads("key"), heads("value"), attn_mask=attend)
                context = context.transpose(1, 2).reshape(batch, length, hidden)
                attended = F.linear(context, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"])
                x = F.layer_norm(attended + x, (hidden,), w[p + "attention.output.LayerNorm.weight"],
                                 w[p + "attention.output.LayerNorm.bias"], self.eps)
                inner = F.gelu(F.linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]))
                out = F.linear(inner, w[p + "output.dense.weight"], w[p + "output.dense.bias"])
                x = F.layer_norm(out + x, (hidden,), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
                                 self.eps)
            weights = mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            pooled = F.normalize(pooled, p=2, dim=1)
        return pooled.float().numpy().astype(np.float32, copy=True)
