"""Vaults of N memories with a warm vault server, for the end-to-end benchmarks (hooks, MCP tools).

The index is built in-process first with the embedding cache shared with speed.py, so only
new texts are embedded; the server then opens that index as it is (same embedder, same schema).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from indexer.embed import CachedEmbedder, make_embedder  # noqa: E402
from indexer.index import Index  # noqa: E402
from mcp_server import client  # noqa: E402
from mcp_server.embedding import host as embed_host  # noqa: E402
from mcp_server.config import default_config_text, stamp_key_path  # noqa: E402
from speed import generate, percentile  # noqa: E402
from vault import Vault, init_vault, state_stamp  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo-dev.json"
CACHE = Path.home() / ".cache" / "memdir-bench" / "speed-embeddings.sqlite"
MEMDIR = [sys.executable, "-m", "mcp_server"]


@contextmanager
def warm_server(size: int, data: Path, embedder: str, cache: Path = CACHE) -> Iterator[Path]:
    """A vault of `size` memories (LoCoMo turns), indexed, with its server running and answering."""
    with tempfile.TemporaryDirectory(prefix="memdir-bench-") as tmp:
        root = Path(tmp) / "vault"
        generate(root, size, data)
        # The corpus is years old: with the lifecycle on, every memory would be expired (hidden, then
        # trashed by the server's first run) and the bench would time empty searches and a mass move.
        config = default_config_text().replace('embedder = "all-MiniLM-L6-v2"', f'embedder = "{embedder}"')
        init_vault(root, config.replace('every = "1h"', 'every = "off"'))
        # Stamped with this user's key as the server checks it (vault/state_stamp.py, set by every entry point):
        # unstamped, the server took the index built here for a foreign one and rebuilt it, past client.ensure's
        # 60 s at 10k under load, and hooks.py and hook_pair.py could not start (bench/results/s23-hook23.md).
        state_stamp.keep_key_at(stamp_key_path())
        Index.open(Vault(root), CachedEmbedder(make_embedder(embedder), cache)).close()
        os.environ["MEMDIR_SERVERS_DIR"] = str(Path(tmp) / "servers")  # this run's own server, never the user's
        server = subprocess.Popen([*MEMDIR, "serve", "--vault", str(root)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        try:
            deadline = time.monotonic() + 600
            while client.running() is None:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start; see {client.log_file()}")
                time.sleep(0.1)
            client.ensure(root)
            yield root
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
            host = embed_host.running()  # this run's own host, in this run's folder: nothing else would end it
            if host is not None:
                os.kill(host.pid, signal.SIGTERM)


def latency_summary(latencies: list[float], unit: str) -> dict:
    return {"p50_ms": round(statistics.median(latencies), 1), "p95_ms": round(percentile(latencies, 0.95), 1),
            unit: len(latencies)}


def run_sizes(doc: str, count_option: str, count_help: str, measure: Callable[..., dict],
              line: Callable[[dict], str]) -> None:
    """The command line both end-to-end benchmarks share: sizes, model, data, --json."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated vault sizes")
    parser.add_argument(f"--{count_option}", dest="count", type=int, default=100, help=count_help)
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo dev split (text for the vaults)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [measure(int(size), args.data, args.embedder, args.count) for size in args.sizes.split(",")]
    print(json.dumps(results, indent=2) if args.json else "\n".join(line(r) for r in results))
