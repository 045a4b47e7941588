"""Run another bench with the encoder or a vault's units changed: what a cheaper reindex would cost in retrieval.

    python bench/reindex_variants.py --encoder per-token -- bench/locomo.py --mode hybrid --json --cache /tmp/e.sqlite
    python bench/reindex_variants.py --drop-roles previous,next -- bench/locomo.py --json
    python bench/reindex_variants.py --encoder per-token -- bench/reindex.py --limit 800 --json

`--encoder per-token` swaps memdir's float32 MiniLM for `bench/int8_encoder.py`'s per-token int8 one
(documents and queries both), under its own embedder id so an embedding cache never mixes the two.
`--drop-roles` leaves those unit roles out of every chunk (sentence, previous, next; a chunk keeps its
whole unit), the texts of the other roles unchanged. Everything after `--` is the bench and its arguments, run as
if started on its own.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


def swap_encoder(variant: str) -> None:
    import indexer.embed as embed

    plain = embed.make_embedder

    def make(name: str):  # type: ignore[no-untyped-def]
        if name != "all-MiniLM-L6-v2":
            return plain(name)
        from int8_encoder import load

        model = load(variant)
        model.id = f"all-MiniLM-L6-v2-int8-{variant}"
        return model

    embed.make_embedder = make


def drop_roles(roles: set[str]) -> None:
    import indexer.chunking as chunking

    with_units = chunking._with_units

    def fewer(chunk, extra):  # type: ignore[no-untyped-def]
        return with_units(chunk, [(role, text) for role, text in extra if role not in roles])

    chunking._with_units = fewer


PAIR = "\x00pair\x00"  # a unit text standing for "the vector of these two whole texts, averaged"


def pairs_from_wholes() -> None:
    """A memory's `previous` and `next` units get the mean of the two memories' whole-unit vectors (both
    embedded anyway) instead of a model call on the pair text: what the pair units would cost then."""
    import numpy as np

    import indexer.chunking as chunking
    import indexer.embed as embed
    from indexer.index import Index

    around: dict[str, tuple] = {}
    neighbours = Index.neighbours

    def remembered(self, memory):  # type: ignore[no-untyped-def]
        around[memory.id] = (self.previous_of(memory.id), self.next_of(memory.id))
        return neighbours(self, memory)

    Index.neighbours = remembered
    with_units = chunking._with_units

    def whole(memory) -> str:  # type: ignore[no-untyped-def]
        return chunking.chunks_for(memory)[0].embedding_text

    def standing_in(chunk, extra):  # type: ignore[no-untyped-def]
        previous, follower = around.get(chunk.memory_id, (None, None))
        swapped = []
        for role, text in extra:
            if role == chunking.PREVIOUS and previous is not None:
                text = PAIR + whole(previous) + "\x00" + chunk.embedding_text
            elif role == chunking.NEXT and follower is not None:
                text = PAIR + chunk.embedding_text + "\x00" + whole(follower)
            swapped.append((role, text))
        return with_units(chunk, swapped)

    chunking._with_units = standing_in
    plain = embed.make_embedder

    class Averaging:
        def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
            self.inner, self.id, self.dim = inner, inner.id, inner.dim
            self.seen: dict[str, np.ndarray] = {}

        def embed(self, texts):  # type: ignore[no-untyped-def]
            texts = list(texts)
            parts = {t: t[len(PAIR):].split("\x00") for t in texts if t.startswith(PAIR)}
            wanted = list(dict.fromkeys([t for t in texts if t not in parts and t not in self.seen]
                                        + [p for two in parts.values() for p in two if p not in self.seen]))
            if wanted:
                self.seen.update(zip(wanted, self.inner.embed(wanted)))
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            for row, text in enumerate(texts):
                if text in parts:
                    mean = self.seen[parts[text][0]] + self.seen[parts[text][1]]
                    out[row] = mean / np.linalg.norm(mean)
                else:
                    out[row] = self.seen[text]
            return out

        def embed_query(self, text):  # type: ignore[no-untyped-def]
            return self.inner.embed_query(text)

    embed.make_embedder = lambda name: Averaging(plain(name))


def main() -> None:
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", choices=["per-token", "per-tensor"])
    parser.add_argument("--pairs-from-wholes", action="store_true",
                        help="pair units averaged from the two whole vectors, no model call of their own")
    parser.add_argument("--drop-roles", default="", help="comma-separated unit roles to leave out")
    args = parser.parse_args(argv[:split])
    roles = {r.strip() for r in args.drop_roles.split(",") if r.strip()}
    if roles - {"sentence", "previous", "next"}:
        parser.error("--drop-roles takes sentence, previous, next")
    bench = argv[split + 1:]
    if not bench:
        parser.error("name the bench to run after --")
    if args.encoder:
        swap_encoder(args.encoder)
    if roles:
        drop_roles(roles)
    if args.pairs_from_wholes:
        pairs_from_wholes()
    sys.argv = bench
    runpy.run_path(bench[0], run_name="__main__")


if __name__ == "__main__":
    main()
