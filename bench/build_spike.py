"""The end of a fresh build: the server's peak RSS by phase, and the build's time, for two checkouts side by side.

    python bench/build_spike.py --size 15000 --rounds 2 --code base=/tmp/main --code branch=.

Each round runs every checkout once, alternating, each in a fresh child process that opens a fresh copy of one
generated vault (bench/speed.py's memories, the hashing embedder: no model, the index's own memory only) with
`Index.open`, as a first start does: build the generation, open it, reconcile. A thread in the child samples
VmRSS and VmHWM every 0.2 s and which phase the build is in (fill, the filling index's close, the open of the
built generation, the reconcile), found by wrapping those methods. Printed: per checkout the medians of the
build's seconds, the peak (VmHWM) at the end of the slices and at the end, and each phase's highest sample.
Issue 32 item 1 (bench/results/scale.md): at 100k the end of the build rose 264 MB above the slices' peak.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "bench" / "locomo-dev.json"
if not DATA.exists():
    DATA = Path("/work/shared/bench/locomo-dev.json")

CHILD = r"""
import json, os, sys, threading, time
from pathlib import Path
code, root, slice_files = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, code)
import indexer.index as ix
from indexer.embed import make_embedder
from vault import Vault

def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out

phase = ["start"]
peaks = {}
marks = {}
def sample():
    while True:
        s = status()
        p = phase[0]
        peaks[p] = max(peaks.get(p, 0.0), s["VmRSS"])
        time.sleep(0.2)

def wrap(owner, name, label):
    inner = getattr(owner, name)
    def wrapped(*a, **k):
        nonlocal label
        if label in peaks:  # the second load is the built generation's
            label = label + "2"
        phase[0] = label
        try:
            return inner(*a, **k)
        finally:
            s = status()
            peaks[label] = max(peaks.get(label, 0.0), s["VmRSS"])
            marks[label + " end hwm"] = round(s["VmHWM"], 1)
            phase[0] = label + " done"
    setattr(owner, name, wrapped)

wrap(ix.Index, "fill", "fill")
wrap(ix.Index, "close", "close")
wrap(ix.Index, "_load", "load")
wrap(ix.Index, "reconcile", "reconcile")
if slice_files:
    ix.BUILD_SLICE = slice_files
threading.Thread(target=sample, daemon=True).start()
started = time.perf_counter()
index = ix.Index.open(Vault(root), make_embedder("hashing-384"))
seconds = time.perf_counter() - started
s = status()
print(json.dumps({"seconds": round(seconds, 2), "hwm_end": round(s["VmHWM"], 1), "rss_end": round(s["VmRSS"], 1),
                  "memories": index.memory_count(), "marks": marks,
                  "phase_max_rss": {k: round(v, 1) for k, v in peaks.items()}}))
index.close()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=15000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--slice", type=int, default=0, help="files per slice (0: the code's BUILD_SLICE)")
    parser.add_argument("--code", action="append", required=True, help="name=path of a checkout")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "bench"))
    import speed  # the vault generator (fixture data)

    codes = [tuple(item.split("=", 1)) for item in args.code]
    results: dict[str, list[dict]] = {name: [] for name, _ in codes}
    with tempfile.TemporaryDirectory(prefix="build_spike-") as tmp:
        source = Path(tmp) / "source"
        speed.generate(source, args.size, DATA)
        for round_ in range(args.rounds):
            for name, path in codes if round_ % 2 == 0 else list(reversed(codes)):
                root = Path(tmp) / f"v-{name}-{round_}"
                shutil.copytree(source, root)
                env = {**os.environ, "PYTHONPATH": str(Path(path).resolve())}
                out = subprocess.run([sys.executable, "-c", CHILD, str(Path(path).resolve()), str(root), str(args.slice)],
                                     env=env, capture_output=True, text=True, check=True, timeout=3600)
                result = json.loads(out.stdout.strip().splitlines()[-1])
                results[name].append(result)
                print(name, round_, json.dumps(result), flush=True)
                shutil.rmtree(root)
    print("\nmedians:")
    for name, rows in results.items():
        med = lambda key: statistics.median(r[key] for r in rows)  # noqa: E731
        fill_end = statistics.median(r["marks"].get("fill end hwm", 0.0) for r in rows)
        print(f"{name}: seconds {med('seconds')}, peak after the slices {fill_end} MB, peak at the end "
              f"{med('hwm_end')} MB, rss at the end {med('rss_end')} MB")


if __name__ == "__main__":
    main()
