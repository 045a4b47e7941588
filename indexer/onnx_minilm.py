"""all-MiniLM-L6-v2 on ONNX Runtime, its graph written from the safetensors weights (minilm_graph.py): memdir's embedder.

The tokenizer is the model's
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
from typing import Any, Sequence

import numpy as np

from .minilm_graph import build_graph, session
from .weights import bert_shape, drop_resident_pages, mapped_weights, padded, tokenizer

log = logging.getLogger(__name__)

BATCH = 32
TOKEN_BUDGET = 256  # padded tokens in one batch: 32 texts of 8 tokens, 8 of 32, 1 of 256
LONG_QUERY_TOKENS = 64  # word pieces from which a query may take the int8 graph (OnnxMiniLM.embed_query)


class OnnxMiniLM:
    id = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, folder: Path | None = None, threads: int = 1, prepack: bool = True,
                 optimization: str = "all", spinning: bool = False, int8_long_queries: bool = False,
                 int8_cache: Path | None = None, int8_documents: bool = False, int8_in_background: bool = False,
                 int8_here: bool | None = None) -> None:
        """The defaults are what memdir runs; the others exist so bench/runtime.py can show what they cost
        (threads: ONNX Runtime's intra-op threads, 0 for its default of one per core).
        int8_long_queries: a query of LONG_QUERY_TOKENS word pieces or more is embedded by an int8 copy of the
        graph (smooth_int8.py), built at its first use; its calibration is kept in `int8_cache` (a folder).
        int8_documents: `embed` runs every text through that int8 graph too.
        int8_in_background: a long query that finds the int8 graph not built yet starts its build in a thread and is
        answered by float32 meanwhile (cosine 0.999 to int8's): the model host's way, so no prompt hook waits for the
        build and a host that no long query or int8 document reaches never holds it (+39 MB).
        int8_here: whether this machine takes the int8 graph at all; None: where the CPU has VNNI
        (smooth_int8.int8_pays), else texts stay float32 whatever the two settings above say."""
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
        self.int8_documents = int8_documents
        self._int8_cache = int8_cache
        self._int8: Any = None  # the int8 session, once built
        self._int8_lock = threading.Lock()
        self.int8_in_background = int8_in_background
        self._int8_builder: threading.Thread | None = None
        self.int8_here = int8_here

    def embed(self, texts: Sequence[str], int8: bool | None = None) -> np.ndarray:
        """Documents' vectors, from the int8 graph when `int8` (None: as the embedder was made) says so."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            encoded = self.tokenizer.encode_batch(list(texts))
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            batches = token_batches([len(e.ids) for e in encoded])
            graph = self._int8_session() if (self.int8_documents if int8 is None else int8) else None
            run = lambda chosen: self._run([encoded[i] for i in chosen], graph)  # noqa: E731
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
        long = use_int8 and len(encoded.ids) >= LONG_QUERY_TOKENS
        vector = self._run([encoded], self._int8_query_session() if long else None)[0]
        self._let_go_of_read_rows()
        return vector

    def _int8_query_session(self) -> Any:
        """The int8 session for a long query; None (float32) while it is built in the background."""
        if self._int8 is not None or not self.int8_in_background:
            return self._int8_session()
        with self._int8_lock:
            if self._int8_builder is None:
                self._int8_builder = threading.Thread(target=self._int8_session, name="memdir-int8-build", daemon=True)
                self._int8_builder.start()
        return None

    def int8_built(self, timeout: float) -> bool:
        """Whether the int8 session is built, waiting up to `timeout` s for a build in the background."""
        if self._int8_builder is not None:
            self._int8_builder.join(timeout)
        return self._int8 is not None

    def _int8_session(self) -> Any:
        """The int8 session, built at its first use; the float32 one if it cannot be (said once in the log)."""
        with self._int8_lock:
            if self._int8 is None:
                from . import smooth_int8
                from .smooth_int8 import int8_query_graph

                if not (smooth_int8.int8_pays() if self.int8_here is None else self.int8_here):
                    log.info("texts stay float32: this CPU has no VNNI, where the int8 graph is no faster and less close")
                    self._int8 = (self._session, {})
                    return self._int8[0]
                try:
                    graph, shared = int8_query_graph(self._folder, self._int8_cache, self._file)
                    self._int8 = session(graph, shared, self._folder, **self._options)  # type: ignore[arg-type]
                except Exception as exc:  # noqa: BLE001 - an onnxruntime without the int8 kernels: float32 it is
                    log.warning("texts stay float32: the int8 graph was not built (%s)", exc)
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

    def _run(self, encoded: list, session: Any = None) -> np.ndarray:  # tokenizers.Encoding; the float32 session
        ids, mask = padded(encoded)
        return (session or self._session).run(None, {"ids": ids, "mask": mask})[0]


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
