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


def main() -> None:
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", choices=["per-token", "per-tensor"])
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
    sys.argv = bench
    runpy.run_path(bench[0], run_name="__main__")


if __name__ == "__main__":
    main()
