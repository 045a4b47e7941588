"""How long `memdir --help` and `memdir search --help` take to start, and what they import.

    python bench/cli_start.py                          # this checkout
    python bench/cli_start.py --against /tmp/base      # A/B against another checkout, runs alternated
    python bench/cli_start.py --runs 15 --json

Each run is a new process (`python -X importtime`, the console script's entry point): the wall time to exit,
the cumulative import time of mcp_server.cli.commands (which builds every command and its options), and any
heavy library imported (numpy, FAISS, ONNX Runtime, the MCP SDK, Whoosh: there must be none). Medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("numpy", "faiss", "onnxruntime", "mcp", "whoosh", "torch", "tokenizers")
PROBE = "import sys\nsys.argv = ['memdir', *sys.argv[1:]]\nfrom mcp_server.entry import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
COMMANDS = (("--help",), ("search", "--help"))


def one_run(checkout: Path, args: tuple[str, ...]) -> tuple[float, float, list[str]]:
    """(wall seconds, cumulative import ms of the CLI module, heavy modules imported) for one fresh process."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", PROBE, *args], cwd=checkout, env=env,
                          capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    cli_ms, heavy = 0.0, []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[0].startswith("import time:"):
            continue
        module = parts[2].strip()
        if module == "mcp_server.cli.commands":
            cli_ms = int(parts[1]) / 1000
        if module.split(".")[0] in HEAVY:
            heavy.append(module)
    return wall, cli_ms, heavy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout to compare with (runs alternate)")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    checkouts = {"this": Path(__file__).resolve().parent.parent}
    if options.against:
        checkouts["against"] = options.against.resolve()
    report: dict[str, dict[str, dict[str, object]]] = {}
    for args in COMMANDS:
        samples: dict[str, list[tuple[float, float, list[str]]]] = {name: [] for name in checkouts}
        for _ in range(options.runs):
            for name, checkout in checkouts.items():
                samples[name].append(one_run(checkout, args))
        report[" ".join(args)] = {name: {
            "wall_s": round(statistics.median(s[0] for s in runs), 3),
            "cli_import_ms": round(statistics.median(s[1] for s in runs), 1),
            "heavy": sorted({m for s in runs for m in s[2]})} for name, runs in samples.items()}
    if options.json:
        print(json.dumps(report, indent=2))
        return
    for command, by_checkout in report.items():
        for name, numbers in by_checkout.items():
            print(f"memdir {command:14} {name:8} wall {numbers['wall_s']:.2f} s  import mcp_server.cli.commands "
                  f"{numbers['cli_import_ms']:.0f} ms  heavy: {', '.join(numbers['heavy']) or 'none'}")  # type: ignore[arg-type]
        if "against" in by_checkout:
            ratio = by_checkout["this"]["cli_import_ms"] / by_checkout["against"]["cli_import_ms"]  # type: ignore[operator]
            print(f"  import ratio this/against: {ratio:.2f}")


if __name__ == "__main__":
    main()
