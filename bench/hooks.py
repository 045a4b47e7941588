"""The prompt hook end to end: process start to printed context, with a warm vault server.

    python bench/hooks.py --json                  # 1k and 10k memories, the real model
    python bench/hooks.py --sizes 1000 --json
    python bench/hooks.py --cold                  # first prompt in a fresh project to the first context
    python bench/hooks.py --long --sizes 10000    # long prompts: bench/long_prompt_set.py's pastes, half of them
                                                  # behind 8 kB of access log (10 kB prompts)
    python bench/hooks.py --console-script        # each hook started as `memdir hook`, as before session 15

Each measurement starts `memdir hook prompt` as Claude Code does (a new process, hook JSON on
stdin) and stops when the process has exited with its output. "alone" runs one hook at a time;
"4 sessions" runs four sessions' hooks at once (each latency still measured per hook).
"""

from __future__ import annotations

import atexit
import compileall
import functools
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from servers import latency_summary, run_sizes, warm_server
from speed import queries


REPO = Path(__file__).resolve().parent.parent
CONSOLE_SCRIPT = "--console-script" in sys.argv  # the hooks as releases before session 15 registered them


@functools.cache
def hook_command(tree: Path = REPO) -> list[str]:
    """The words that start a hook of `tree` (this checkout by default), as `memdir init` registers them: a
    `memdir-hook` script (Python without its site initialisation, mcp_server/clients/hook_script.py); with
    --console-script, or a tree from before that script, the `memdir` console script's `memdir hook` (falls back to
    python -m). The script is the bench's own, in a private folder: the one `init` writes into the venv's bin/ is
    shared by every checkout using that venv, and it puts its checkout first on the path, so two trees timed through
    it would both run whichever tree wrote it last."""
    compiled(tree)
    script = Path(sys.executable).with_name("memdir")
    console = [str(script), "hook"] if script.exists() else [sys.executable, "-m", "mcp_server", "hook"]
    if CONSOLE_SCRIPT or not (tree / "mcp_server" / "clients" / "hook_script.py").is_file():
        return console
    # The tree's own script: another tree's may import what this one does not have (`leave`, session 20).
    spec = importlib.util.spec_from_file_location(f"hook_script_{abs(hash(tree))}",
                                                  tree / "mcp_server" / "clients" / "hook_script.py")
    assert spec is not None and spec.loader is not None
    own = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(own)
    private = Path(tempfile.mkdtemp(prefix="memdir-bench-hook-")) / own.SCRIPT_NAME
    atexit.register(shutil.rmtree, private.parent, True)
    private.write_text(own.script_text(str(Path(sys.executable).absolute()), str(tree)), encoding="utf-8")
    private.chmod(0o755)
    return [str(private)]


@functools.cache
def compiled(tree: Path) -> None:
    """Bytecode for `tree`'s packages, as an installed package has (pip compiles at install). With
    PYTHONDONTWRITEBYTECODE set (as on this machine) a tree that never wrote its __pycache__ (a `git archive` export,
    a checkout only ever run so) compiled every module in every hook, server and host process: a hook process here
    took 54 ms of CPU instead of 24 (perf stat, load ~7), and session 19's hook figures at 10k measured that
    (bench/results/s20-hook20.md)."""
    for package in ("mcp_server", "indexer", "vault"):
        compileall.compile_dir(tree / package, quiet=1)


def run_hook(root: Path, session: str, prompt: str, env: dict[str, str] | None = None,
             tree: Path = REPO) -> tuple[float, int]:
    """Milliseconds from process start to exit, and the length of the context it printed (`env`, `tree`: the hook's
    environment and code, bench/hook_pair.py's tree and server folder; this process's by default)."""
    payload = json.dumps({"session_id": session, "cwd": str(root.parent), "hook_event_name": "UserPromptSubmit",
                          "prompt": prompt, "transcript_path": "/dev/null", "permission_mode": "default"}).encode()
    started = time.perf_counter()
    result = subprocess.run([*hook_command(tree), "prompt", "--vault", str(root)], input=payload,
                            capture_output=True, timeout=60, env=env)
    elapsed = (time.perf_counter() - started) * 1000
    if result.returncode != 0:
        raise RuntimeError(result.stderr.decode())
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] if result.stdout.strip() else ""
    return elapsed, len(context)


def sessions_at_once(root: Path, prompts: list[str], count: int) -> list[float]:
    latencies: list[float] = []
    lock = threading.Lock()

    def session(number: int) -> None:
        session_id = str(uuid.uuid4())
        for prompt in prompts[number::count]:
            elapsed, _ = run_hook(root, session_id, prompt)
            with lock:
                latencies.append(elapsed)

    threads = [threading.Thread(target=session, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def long_prompts(count: int) -> list[str]:
    """`count` long prompts: the held-out pastes in turn as they are and behind 8 kB of log."""
    from long_prompt_set import QUESTIONS, padded

    pastes = [q for q, *_ in QUESTIONS]
    return [pastes[n % len(pastes)] if n % 2 else padded(pastes[n % len(pastes)]) for n in range(count)]


LONG = "--long" in sys.argv


def measure(size: int, data: Path, embedder: str, prompts: int) -> dict:
    questions = long_prompts(prompts * 2 + 5) if LONG else queries(prompts * 2 + 5, data)
    with warm_server(size, data, embedder) as root:
        session = str(uuid.uuid4())
        for prompt in questions[:5]:
            run_hook(root, session, prompt)  # warm: the OS caches, the server's first searches
        alone = [run_hook(root, session, q) for q in questions[5:5 + prompts]]
        context_chars = [chars for _, chars in alone]
        together = sessions_at_once(root, questions[5 + prompts:], 4)
    return {"memories": size, "alone": latency_summary([ms for ms, _ in alone], "hooks"), "4_sessions": latency_summary(together, "hooks"),
            "context_chars_p50": statistics.median(context_chars)}


def line(r: dict) -> str:
    return (f"{r['memories']:>6} memories: alone p50 {r['alone']['p50_ms']} ms p95 {r['alone']['p95_ms']} ms; "
            f"4 sessions p50 {r['4_sessions']['p50_ms']} ms p95 {r['4_sessions']['p95_ms']} ms")


def cold_start(prompt: str = "how do we stop two workers importing the same statement") -> list[dict]:
    """From the first prompt in a fresh copy of the example vault (no index, no server) to the first
    prompt hook that prints KNOWN CONTEXT, the session-start hook run first as Claude Code does; once
    with nothing of memdir running, once with the embedding host already up (another project open)."""
    import os
    import shutil
    import tempfile

    from mcp_server.embedding import host as embed_host
    from mcp_server.server import registry

    results = []
    for host_up in (False, True):
        with tempfile.TemporaryDirectory(prefix="memdir-cold-") as tmp:
            os.environ["MEMDIR_SERVERS_DIR"] = str(Path(tmp) / "servers")
            root = Path(tmp) / "project" / ".memories"
            shutil.copytree(Path(__file__).resolve().parent.parent / ".memories-example", root,
                            ignore=shutil.ignore_patterns(".memdir"))
            try:
                if host_up:
                    embed_host.ensure_host()
                session = str(uuid.uuid4())
                payload = json.dumps({"session_id": session, "cwd": str(root.parent), "hook_event_name": "SessionStart",
                                      "source": "startup", "transcript_path": "/dev/null"}).encode()
                subprocess.run([*hook_command(), "session-start", "--vault", str(root)], input=payload,
                               capture_output=True, timeout=60)
                started = time.perf_counter()
                prompts = 0
                while True:
                    prompts += 1
                    _, chars = run_hook(root, session, prompt)
                    if chars:
                        break
                    time.sleep(1.0)  # a user types the next prompt; nothing to wait on but time
                results.append({"embedding_host_already_up": host_up, "seconds_to_context": round(time.perf_counter() - started, 1),
                                "prompts": prompts})
            finally:
                registry.stop()
    return results


if __name__ == "__main__":
    if "--cold" in sys.argv:  # python bench/hooks.py --cold
        print(json.dumps(cold_start(), indent=2))
    else:
        for flag in ("--long", "--console-script"):
            if flag in sys.argv:
                sys.argv.remove(flag)
        run_sizes(__doc__, "prompts", "hooks per measurement", measure, line)
