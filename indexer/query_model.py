"""How a search query is embedded fast: a bfloat16 twin of the model, run as one traced TorchScript graph.

The bfloat16 twin, used on CPUs that compute bf16 natively: a query is a dozen tokens, so its forward pass is bound by reading the six layers' weights,
not by arithmetic. In float32 those weights are 42 MB, more than a 32 MB L3 cache holds, and every
query streams them from memory again. In bfloat16 they are 21 MB and stay cached. Measured on a
2-core AMD EPYC with AVX512_BF16, one thread: 7.7 → 4.3 ms p50 per LoCoMo question, and the
vectors' cosine to the float32 ones was 0.99999 on average over 200 questions.

Only the Linear layers change: embeddings, layer norms, softmax and pooling stay float32 and are
shared with the original model, not copied. Documents, and a new memory's text compared with
them, are still embedded in float32 (a document's vector must not depend on which path embedded
it); a query vector differing in the fifth decimal changes no ranking that matters.

The traced graph: the transformer is traced to TorchScript once at load (0.15 s) and its output
mean-pooled and normalized as the model's own Pooling and Normalize modules do. It runs the same
operations without the Python of transformers' modules around each one: 5.2 -> 3.6 ms per
question, the same vector to the last bit (max difference 0 over 150 questions). At load it is
checked against the eager model on probe texts; any difference, or a model of another shape,
and queries keep the eager path.

Imports torch: import this module only where the model is being loaded.
"""

from __future__ import annotations

import copy
import logging
import warnings

import numpy as np
import torch

log = logging.getLogger("memdir.embed")
PROBES = ("which Python version can the deploy image run",
          "When did Caroline go to the LGBTQ support group, and what did she take away from it?")


class BF16Linear(torch.nn.Module):
    """A Linear layer whose weights are held and multiplied in bfloat16; input and output stay float32."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.weight = linear.weight.detach().to(torch.bfloat16)
        self.bias = None if linear.bias is None else linear.bias.detach().to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x.to(torch.bfloat16), self.weight, self.bias).to(x.dtype)


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AVX512_BF16 or AMX). Without it torch
    emulates bf16 and the twin is slower than float32, so it is not used."""
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def bf16_twin(model: torch.nn.Module, shared: tuple[object, ...] = ()) -> torch.nn.Module:
    """A copy of `model` whose Linear layers are BF16Linear. Every tensor (and every object in
    `shared`, such as a tokenizer) is shared with `model`, so the twin costs only its bf16 weights."""
    memo = {id(item): item for item in (*model.parameters(), *model.buffers(), *shared)}
    twin = copy.deepcopy(model, memo)
    for module in list(twin.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(module, name, BF16Linear(child))
    return twin.eval()


class _Transformer(torch.nn.Module):
    """The transformer's token embeddings as a function of plain tensors, which is what tracing needs."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                          return_dict=False)[0]


class TracedQueryEncoder:
    """One text → its normalized mean-pooled vector, through the model's transformer traced to TorchScript."""

    def __init__(self, model) -> None:  # a SentenceTransformer: Transformer, mean Pooling, Normalize
        names = [type(module).__name__ for module in model]
        if names != ["Transformer", "Pooling", "Normalize"] or getattr(model[1], "pooling_mode", "mean") != "mean":
            raise ValueError(f"not a mean-pooled, normalized transformer: {names}")
        self.model = model
        features = model.preprocess([PROBES[0]])
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # TracerWarnings about Python values taken as constants (checked below)
            self.graph = torch.jit.trace(_Transformer(model[0].auto_model).eval(), self._inputs(features),
                                         check_trace=False)
        for probe in PROBES:
            with torch.inference_mode():
                eager = model.forward(model.preprocess([probe]))["sentence_embedding"][0].numpy()
            traced = self(probe)
            if eager.shape != traced.shape or float(np.abs(eager - traced).max()) > 1e-5:
                raise ValueError(f"the traced model's vector differs from the model's for {probe!r}")

    @staticmethod
    def _inputs(features: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return features["input_ids"], features["attention_mask"], features["token_type_ids"]

    def __call__(self, text: str) -> np.ndarray:
        features = self.model.preprocess([text])
        with torch.inference_mode():
            tokens = self.graph(*self._inputs(features))
            mask = features["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)[0].numpy()


def traced_or_none(model) -> TracedQueryEncoder | None:
    """The traced encoder, or None (queries then take the eager path) if this model cannot be traced faithfully."""
    try:
        return TracedQueryEncoder(model)
    except Exception as exc:  # a transformers release that traces differently must not stop search
        log.warning("query embedding stays eager: %s", exc)
        return None
