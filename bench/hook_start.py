"""What a hook process's start costs, by the way it is started (issue 32 item 6: a prompt hook is a new process on
every prompt of every session; nine sessions start hundreds a minute).

    python bench/hook_start.py                 # this install's `memdir` and its Python, 30 rounds
    python bench/hook_start.py --rounds 50 --python /path/to/other/venv/bin/python

Each round starts every variant once, alternating, and reads its CPU (user + system, RUSAGE_CHILDREN) and wall time;
printed are the medians. The hook is given an event without a session id: it parses its arguments and stdin, finds
nothing to do and exits, so what is measured is the interpreter, `site`, the hook's imports and its parse - the
part that is the same for every hook, with no server in the way. The variants:

- `memdir hook`: the console script, as the installed hooks run it (its interpreter imports `site`);
- `python -I`: the same script in isolated mode (no user site, no PYTHON* variables; `site` still runs);
- `python -S`: no `site` at all; a small start file puts the folder that holds `mcp_server` on the path itself;
- and, for scale, the bare interpreter with and without `site`, and the standard modules the hook imports.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START_FILE = """import sys
sys.path[0] = sys.argv.pop(1)  # the folder that holds mcp_server, in place of this file's own
from mcp_server.clients.hooks import main
sys.exit(main(sys.argv[1:]))
"""


def variants(python: Path, start_file: Path) -> dict[str, list[str]]:
    found = subprocess.run([str(python), "-c", "import mcp_server, os; print(os.path.dirname(os.path.dirname("
                            "os.path.abspath(mcp_server.__file__))))"], capture_output=True, text=True, check=True)
    package_parent = found.stdout.strip()
    script = python.with_name("memdir")
    hook = ["hook", "prompt", "--vault", tempfile.gettempdir()]
    rows = {}
    if script.exists():
        rows["memdir hook (console script, site)"] = [str(script), *hook]
        rows["python -I memdir hook"] = [str(python), "-I", str(script), *hook]
    rows["python -S start file (no site)"] = [str(python), "-S", str(start_file), package_parent, *hook[1:]]
    rows["python -c pass"] = [str(python), "-c", "pass"]
    rows["python -S -c pass"] = [str(python), "-S", "-c", "pass"]
    rows["python -S -c 'import json'"] = [str(python), "-S", "-c", "import json"]
    rows["python -S -c 'import json, pathlib'"] = [str(python), "-S", "-c", "import json, pathlib"]
    return rows


def measure(commands: dict[str, list[str]], rounds: int, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    spent: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in commands}
    for command in commands.values():  # bytecode written, as an installed package has it
        subprocess.run(command, input=b"{}", capture_output=True, env=env)
    for _ in range(rounds):
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(command, input=b"{}", capture_output=True, env=env)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                raise SystemExit(f"{name} failed: {done.stderr.decode()[:500]}")
            spent[name][0].append(1000 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime))
            spent[name][1].append(1000 * wall)
    return {name: (statistics.median(cpu), statistics.median(wall)) for name, (cpu, wall) in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--python", type=Path, default=Path(sys.executable), help="the install's interpreter")
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the install as it is, not a checkout
    with tempfile.TemporaryDirectory() as folder:
        start_file = Path(folder) / "memdir_hook_start.py"
        start_file.write_text(START_FILE)
        results = measure(variants(options.python, start_file), options.rounds, env)
    print(f"{options.python} - {options.rounds} rounds, load {os.getloadavg()[0]:.1f}; medians")
    for name, (cpu, wall) in results.items():
        print(f"  {name:40s} CPU {cpu:6.1f} ms   wall {wall:6.1f} ms")


if __name__ == "__main__":
    main()
