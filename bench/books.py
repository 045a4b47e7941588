"""Ingest throughput: a generated 200-page PDF (and the same text as HTML) through `memdir ingest`'s path.

Prints conversion alone (pages/s, MB/s) and the whole ingest with the real model (convert, write,
chunk, embed, index), median of --runs runs each.

    python bench/books.py [--pages 200] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from indexer.books import ingest  # noqa: E402
from indexer.convert import convert  # noqa: E402
from indexer.curator import Curator  # noqa: E402
from indexer.embed import make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from tests.pdfs import pdf_with_pages  # noqa: E402
from vault import Vault  # noqa: E402
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings  # noqa: E402

WORDS = ("ledger", "invoice", "retry", "postgres", "deploy", "refund", "token", "rotation", "staging", "queue")


def page_text(n: int) -> str:
    return " ".join(f"{WORDS[(n * 7 + i) % len(WORDS)]}{i % 13}" for i in range(60)) + f" page-marker-{n}."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pdf = pdf_with_pages([page_text(n) for n in range(args.pages)], "Generated guide")
    convert_s = []
    for _ in range(args.runs):
        start = time.perf_counter()
        convert(Path("guide.pdf"), pdf)
        convert_s.append(time.perf_counter() - start)
    embedder = make_embedder("all-MiniLM-L6-v2")
    ingest_s = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            root, source = Path(tmp) / "vault", Path(tmp) / "guide.pdf"
            root.mkdir()
            source.write_bytes(pdf)
            index = Index.open(Vault(root), embedder)
            curator = Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
            start = time.perf_counter()
            result = ingest(curator, [source], project=Path(tmp))
            ingest_s.append(time.perf_counter() - start)
            assert result[0].status == "created", result
            index.close()
    mb = len(pdf) / 1e6
    c, i = statistics.median(convert_s), statistics.median(ingest_s)
    out = {"pages": args.pages, "pdf_mb": round(mb, 3), "convert_s": round(c, 3), "convert_pages_per_s": round(args.pages / c, 1),
           "convert_mb_per_s": round(mb / c, 2), "ingest_s": round(i, 3), "ingest_pages_per_s": round(args.pages / i, 1)}
    print(json.dumps(out, indent=2) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))


if __name__ == "__main__":
    main()
