"""Wall and CPU seconds of the end-to-end tests, per test file (one client each), all descendants counted.

The memdir server a hook or a test starts detaches from its parent, so its CPU never reaches the
test's own rusage. This script makes itself a child subreaper (Linux prctl): every orphaned
descendant is reparented to it and reaped here, so RUSAGE_CHILDREN holds the CPU of node, the npm
binaries, the hooks and the servers alike.

    PYTHONPATH=$PWD .venv/bin/python bench/e2e_times.py                 # every file under tests/e2e
    PYTHONPATH=$PWD .venv/bin/python bench/e2e_times.py --checkout DIR test_codex.py test_opencode.py

`--checkout` measures another checkout's tests (a copy of main: before and after in one period).
`--together` runs the files in one pytest instead, as CI does; `--workers N` adds `-n N --dist loadgroup`
(pytest-xdist: the tests spread over N worker processes, the browser tests on one). The load average is printed with each row.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def measured(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s of it and every descendant, exit code, last output line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = process.communicate()[0].decode(errors="replace")
    code = process.returncode
    wall = time.monotonic() - started
    while True:  # reap the orphans (servers stopped by the tests) so their CPU is counted
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.2)  # an orphan still running: the tests stop theirs; bounded below
            if time.monotonic() - started - wall > 20:
                break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in output.splitlines() if line.strip()]
    if os.environ.get("E2E_TIMES_LOG"):
        with open(os.environ["E2E_TIMES_LOG"], "a") as log:
            log.write(f"==== {' '.join(command)}\n{output}\n")
    return wall, cpu, code, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files under tests/e2e (default: all)")
    parser.add_argument("--checkout", type=Path, default=Path.cwd(), help="the checkout whose tests run")
    parser.add_argument("--together", action="store_true", help="all the files in one pytest run")
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers (-n N --dist loadgroup); 0: none")
    args = parser.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed: CPU of detached servers could not be counted")
    checkout = args.checkout.resolve()
    files = args.files or sorted(p.name for p in (checkout / "tests" / "e2e").glob("test_*.py"))
    env = {**os.environ, "MEMDIR_E2E": "1", "PYTHONPATH": str(checkout)}
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=0"]
    if args.workers:
        pytest += ["-n", str(args.workers), "--dist", "loadgroup"]
    runs = [(name, [f"tests/e2e/{name}"]) for name in files]
    if args.together:
        runs = [("all together", [f"tests/e2e/{name}" for name in files])]
    print(f"{'tests':34} {'wall s':>7} {'CPU s':>7} {'load':>5}  result")
    for name, paths in runs:
        wall, cpu, code, last = measured(pytest + paths, checkout, env)
        print(f"{name:34} {wall:7.1f} {cpu:7.1f} {os.getloadavg()[0]:5.1f}  {last if code == 0 else f'FAILED ({code}) {last}'}",
              flush=True)


if __name__ == "__main__":
    main()
