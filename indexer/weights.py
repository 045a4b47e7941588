"""all-MiniLM-L6-v2's files, read without torch: its config, its tokenizer, its weights mapped from disk.

The weights are numpy views of model.safetensors mapped read-only, so every process embedding with
the same installed model shares one copy of them through the page cache.
"""

from __future__ import annotations

import json
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAX_TOKENS = 256  # sentence_bert_config.json: longer texts are truncated, as sentence-transformers does
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


@dataclass(frozen=True)
class BertShape:
    layers: int
    heads: int
    hidden: int
    eps: float


def bert_shape(folder: Path) -> BertShape:
    config = json.loads((folder / "config.json").read_text())
    return BertShape(int(config["num_hidden_layers"]), int(config["num_attention_heads"]),
                     int(config["hidden_size"]), float(config["layer_norm_eps"]))


def tokenizer(folder: Path):  # type: ignore[no-untyped-def]
    """tokenizer.json through `tokenizers`, as transformers reads it: no padding, truncated to 256 tokens."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)
    return tok


def padded(encoded: list, mask_dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:  # tokenizers.Encoding
    """Token ids of a batch, padded with 0 to its longest text, and the mask of the real tokens."""
    length = max(len(e.ids) for e in encoded)
    ids = np.zeros((len(encoded), length), dtype=np.int64)
    mask = np.zeros((len(encoded), length), dtype=mask_dtype)
    for row, e in enumerate(encoded):
        ids[row, :len(e.ids)] = e.ids
        mask[row, :len(e.ids)] = 1
    return ids, mask


def mapped_weights(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a read-only numpy view of the file mapped into memory
    (the mapping lives as long as any view of it; `file_offset` tells where each one starts)."""
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    (length,) = struct.unpack("<Q", mapped[:8])
    header = json.loads(mapped[8:8 + length])
    start = 8 + length
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        dtype = np.dtype(_DTYPES[entry["dtype"]])
        out[name] = np.frombuffer(mapped, dtype=dtype, count=(end - begin) // dtype.itemsize,
                                  offset=start + begin).reshape(entry["shape"])
    return out


def drop_resident_pages(array: np.ndarray) -> None:
    """Let go of the pages of the mapped file this view belongs to that this process has read so far
    (Linux). They are clean pages of the installed file: they stay in the page cache, and whatever is
    read again later is mapped back. ONNX Runtime reads every weight once while it builds a session
    (and keeps its own packed copy of the large ones), which left 42 MB of the file resident."""
    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    if isinstance(base, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        base.madvise(mmap.MADV_DONTNEED)


def file_offset(array: np.ndarray) -> int:
    """Where a view made by `mapped_weights` starts in its file."""
    base = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return array.__array_interface__["data"][0] - np.frombuffer(base, np.uint8).__array_interface__["data"][0]
