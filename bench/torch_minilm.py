"""all-MiniLM-L6-v2 run with torch alone: the model's six BERT layers, mean pooling and L2 norm.

memdir's embedder until ONNX Runtime replaced it (indexer/onnx_minilm.py); kept here as the
baseline bench/runtime.py measures the others against (torch is a test dependency only). sentence-transformers and transformers cost about 190 MB of resident memory
and 4 s of import before a single text was embedded, for what is here about sixty lines: the same weights
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
import warnings
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

        from indexer.model_files import model_dir

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
        self._fuse()
        # The query path's Linear weights, cast once (autocast would cast all 22M of them on every query).
        self._w16 = {k: v.to(torch.bfloat16) for k, v in self._w32.items()} if bf16_queries else {}
        self._traced = self._trace() if bf16_queries else None

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
        torch = self._torch
        encoded = self.tokenizer.encode_batch(texts)
        length = max(len(e.ids) for e in encoded)
        ids = torch.zeros((len(texts), length), dtype=torch.long)
        mask = torch.zeros((len(texts), length), dtype=torch.bool)
        for row, e in enumerate(encoded):
            ids[row, :len(e.ids)] = torch.tensor(e.ids)
            mask[row, :len(e.ids)] = True
        with torch.inference_mode():
            if bf16 and self._traced is not None:
                pooled = self._traced(ids, mask)
            else:
                pooled = self._forward(ids, mask, bf16)
        return pooled.float().numpy().astype(np.float32, copy=True)

    def _forward(self, ids, mask, bf16: bool):  # type: ignore[no-untyped-def]
        """Token ids and their mask -> normalized mean-pooled vectors. Shapes come from the tensors
        only, so the bfloat16 query path can be traced once into a TorchScript graph."""
        torch, F, w = self._torch, self._torch.nn.functional, self.w
        weights = self._w16 if bf16 else self._w32

        def linear(x, name: str):  # type: ignore[no-untyped-def]
            if bf16:  # bfloat16 products, float32 everywhere else (sums, norms, softmax)
                return F.linear(x.to(torch.bfloat16), weights[name]).float() + w[name + ".bias"]
            return F.linear(x, weights[name], w[name + ".bias"])

        batch, length = ids.shape[0], ids.shape[1]
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        hidden = x.shape[-1]
        x = F.layer_norm(x, (hidden,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        attend = mask[:, None, None, :]  # every position may look at the real tokens only
        for n in range(self.layers):
            p = f"encoder.layer.{n}."
            # query, key and value in one product: a third of the calls, the same numbers
            qkv = linear(x, p + "attention.self.qkv").view(batch, length, 3, self.heads, hidden // self.heads)
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
            context = context.transpose(1, 2).reshape(batch, length, hidden)
            x = F.layer_norm(linear(context, p + "attention.output.dense") + x, (hidden,),
                             w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], self.eps)
            out = linear(F.gelu(linear(x, p + "intermediate.dense")), p + "output.dense")
            x = F.layer_norm(out + x, (hidden,), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
                             self.eps)
        share = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * share).sum(1) / share.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, p=2, dim=1)

    def _fuse(self) -> None:
        """Per layer, query/key/value weights and biases stacked into one Linear (named ...attention.self.qkv)."""
        torch, w = self._torch, self.w
        for n in range(self.layers):
            p = f"encoder.layer.{n}.attention.self."
            w[p + "qkv.weight"] = torch.cat([w[p + f"{k}.weight"] for k in ("query", "key", "value")]).contiguous()
            w[p + "qkv.bias"] = torch.cat([w[p + f"{k}.bias"] for k in ("query", "key", "value")]).contiguous()
            for k in ("query", "key", "value"):
                del w[p + f"{k}.weight"], w[p + f"{k}.bias"]
        self._w32 = {k[:-len(".weight")]: v for k, v in w.items() if k.endswith(".weight") and v.dim() == 2
                     and not k.startswith("embeddings.")}

    def _trace(self):  # type: ignore[no-untyped-def]
        """The bfloat16 query path as one TorchScript graph, when it gives the eager path's vectors."""
        torch = self._torch
        model = self

        class Query(torch.nn.Module):
            def forward(self, ids, mask):  # type: ignore[no-untyped-def]
                return model._forward(ids, mask, True)

        probes = ["deploy", "which Python version can the deploy image run on the new cluster, and why?"]
        try:
            with torch.inference_mode(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                example = self.tokenizer.encode_batch(probes[:1])[0].ids
                traced = torch.jit.trace(Query(), (torch.tensor([example]), torch.ones((1, len(example)), dtype=torch.bool)),
                                         check_trace=False)
                for text in probes:
                    ids = torch.tensor([self.tokenizer.encode(text).ids])
                    mask = torch.ones(ids.shape, dtype=torch.bool)
                    if not torch.allclose(traced(ids, mask), self._forward(ids, mask, True), atol=1e-6):
                        return None
            return traced
        except Exception:  # noqa: BLE001 - a torch that cannot trace this keeps the eager path
            return None


def native_bf16(torch) -> bool:  # type: ignore[no-untyped-def]
    """Whether this CPU multiplies bfloat16 in hardware (AVX512_BF16 or AMX). Without it torch emulates
    bf16 and the query path would be slower than float32, so it is not used."""
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)
