"""Many assistant sessions on one project at once: N sessions, each sending a prompt hook and a Stop
capture every turn, on a copy of the example vault, from a cold start or warm.

    python bench/sessions.py                      # 9 sessions x 20 turns, cold then warm
    python bench/sessions.py --mode cold --sessions 9 --turns 20 --json
    python bench/sessions.py --think 5            # each answer takes 2.5-7.5 s between its prompt and its Stop

"cold": no server, no embedding host, no index (a fresh copy of the example vault); the sessions start
together. "warm": the server has the vault open and every vector built before the first prompt.
Without `--think` each session sends its next turn as soon as the last returned (nine sessions asking for CPU
back to back, the worst case); `--think S` models the assistant's answer between a prompt and its Stop, a pause of
0.5-1.5 x S seconds (seeded per session), and is printed in the run's first line.
Every hook is a new `memdir hook` process, as Claude Code starts it; a prompt hook's latency is from
process start to exit with its output. Printed per run: context rate and prompt hook p50 / p95 per
phase (the first 5 s after the first prompt, the rest; the first and second half of the prompts),
exchanges captured of those expected (counted in the vault once the spool is empty), Stop hook p50 / p95, and peak resident
memory (VmHWM) of the server and the embedding host, and the CPU a turn cost: its two hook processes, and the server's
and the host's from the first prompt until every captured exchange has its vectors, divided by the turns, and the file
events the server's watcher received over its life (the line it logs as it stops).

    python bench/sessions.py --session-groups     # each session's hooks in a CPU group of their own (see LAUNCHER)
    python bench/sessions.py --sample DIR         # the server's and the host's CPU by thread and stack (thread_cpu)
    python bench/sessions.py --mcp-ready          # warm: the turns begin once the MCP endpoint is built, as sessions
                                                  # that connected `memdir mcp` at their start find the server
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))

from mcp_server import client  # noqa: E402
from mcp_server.embedding import host as embed_host  # noqa: E402
from hooks import compiled, hook_command  # noqa: E402

EXAMPLE = REPO / ".memories-example"
EARLY_SECONDS = 5.0
KEEP_LOG: Path | None = None  # --log
RECORDS: Path | None = None  # --records
THINK = 0.0  # --think
AS_INSTALLED = False  # --as-installed
SAMPLE: Path | None = None  # --sample
SESSION_GROUPS = False  # --session-groups
MCP_READY = False  # --mcp-ready
CODE = REPO  # --code: the checkout whose hooks, server and host run


def hook_words() -> list[str]:
    """What starts a hook: as `memdir init` registers it (bench/hooks.py), or with --as-installed the code from
    PYTHONPATH without site (what the registered `memdir-hook` does; for a tree from before session 15)."""
    if AS_INSTALLED:
        return [sys.executable, "-S", "-c", "from mcp_server.entry import main; main()", "hook"]
    # The checkout's own `memdir-hook`, which puts that checkout first on its path: this one's ran this checkout's
    # hook code whatever `--code` said (until session 20; the server and host did follow it).
    return hook_command(CODE)


def prompts_of(vault: Path) -> list[str]:
    """One question per titled memory of the example vault, in the user's words."""
    titles = sorted({m.group(1).strip().strip("'\"") for p in vault.rglob("*.md")
                     for m in [re.search(r"^title: (.+)$", p.read_text(), re.M)] if m})
    return [f"remind me what we know about {title.lower()} before I change it" for title in titles]


# --session-groups: one small process per session, in a session (and so a CPU group) of its own, starts that
# session's hooks and times them as `hook` does. Linux's scheduler shares the CPU fairly between sessions
# (autogroup) before it shares it between processes: nine assistants in nine terminals are nine such groups, while
# the bench's own hooks are all in one, its nine sessions' hooks together getting one group's share.
LAUNCHER = """
import json, subprocess, sys, time
for line in sys.stdin:
    ask = json.loads(line)
    started = time.perf_counter()
    done = subprocess.run(ask["command"], input=ask["input"].encode(), capture_output=True, timeout=60)
    print(json.dumps({"ms": (time.perf_counter() - started) * 1000, "stdout": done.stdout.decode(),
                      "stderr": done.stderr.decode(errors="replace")}), flush=True)
import resource
spent = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"hooks_cpu_s": spent.ru_utime + spent.ru_stime}), flush=True)  # its hooks' CPU, not its own
"""
LAUNCHED_CPU: list[float] = []  # each launcher's hooks' CPU seconds, when it ends


def launcher() -> subprocess.Popen | None:
    if not SESSION_GROUPS:
        return None
    return subprocess.Popen([sys.executable, "-S", "-c", LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, start_new_session=True)


def hook(root: Path, event: str, payload: dict, via: subprocess.Popen | None = None) -> tuple[float, str, str]:
    """Milliseconds from start to exit, the context given, and why none was (the hook's stderr, classified)."""
    command = [*hook_words(), event, "--vault", str(root)]
    if via is not None:
        via.stdin.write(json.dumps({"command": command, "input": json.dumps(payload)}) + "\n")
        via.stdin.flush()
        answer = json.loads(via.stdout.readline())
        elapsed, stdout, stderr = answer["ms"], answer["stdout"], answer["stderr"]
    else:
        started = time.perf_counter()
        result = subprocess.run(command, input=json.dumps(payload).encode(), capture_output=True, timeout=60)
        elapsed = (time.perf_counter() - started) * 1000
        stdout, stderr = result.stdout.decode(), result.stderr.decode(errors="replace")
    context = ""
    if stdout.strip():
        context = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    return elapsed, context, "context" if context else why_none(stderr)


def why_none(stderr: str) -> str:
    """A context-less prompt's reason: the server was opening the vault, did not answer in the hook's time, or
    said something else; "none" when the hook said nothing (no server yet, or an answer without context)."""
    if not stderr.strip():
        return "none"
    if "is opening" in stderr:
        return "opening"
    return "no answer" if "did not answer" in stderr else "other"


def session(root: Path, number: int, turns: int, prompts: list[str], records: list[dict], lock: threading.Lock) -> None:
    sid = f"bench-{number}-{uuid.uuid4().hex[:8]}"
    base = {"session_id": sid, "cwd": str(root.parent), "transcript_path": "/dev/null"}
    answering = random.Random(number)  # the same answer times in every run (an A/B compares like with like)
    via = launcher()
    try:
        turns_of(root, number, turns, prompts, records, lock, sid, base, answering, via)
    finally:
        if via is not None:
            via.stdin.close()
            LAUNCHED_CPU.append(json.loads(via.stdout.readline())["hooks_cpu_s"])
            via.wait()


def turns_of(root: Path, number: int, turns: int, prompts: list[str], records: list[dict], lock: threading.Lock,
             sid: str, base: dict, answering: random.Random, via: subprocess.Popen | None) -> None:
    for turn in range(turns):
        prompt = prompts[(number * 7 + turn) % len(prompts)]
        at = time.monotonic()
        ms, context, reason = hook(root, "prompt", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                                            "permission_mode": "default"}, via)
        if THINK:
            time.sleep(THINK * answering.uniform(0.5, 1.5))  # the assistant answering: nothing to wait on, it is time
        answer = (f"Session {number}, turn {turn}: I read the notes on this and changed the handler in "
                  f"module_{number}_{turn}.py accordingly, then ran the tests, which passed.")
        stop_ms, _, _ = hook(root, "stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                                            "last_assistant_message": answer}, via)
        with lock:
            records.append({"session": sid, "at": at, "wall": time.time() - (time.monotonic() - at), "ms": ms, "context": bool(context), "reason": reason,
                            "stop_ms": stop_ms})


def captured(root: Path, sessions: set[str]) -> int:
    count = 0
    for path in (root / "working").rglob("*.md"):
        match = re.search(r"^session: (\S+)$", path.read_text(errors="replace"), re.M)
        count += bool(match and match.group(1).strip("'\"") in sessions)
    return count


def peak_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    return round(int(match.group(1)) / 1024, 1) if match else None


def cpu_s(pid: int | None) -> float | None:
    """User plus system CPU seconds a process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return None
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def waited_s(pid: int | None) -> float:
    """Seconds the process's threads (those alive now) have spent runnable but waiting for a core (schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*") if pid else ():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9


def phase(records: list[dict]) -> dict:
    if not records:
        return {"prompts": 0}
    ms = sorted(r["ms"] for r in records)
    reasons = {reason: sum(r["reason"] == reason for r in records) for reason in ("none", "opening", "no answer", "other")}
    return {"prompts": len(records), "with_context": sum(r["context"] for r in records),
            "without": {k: v for k, v in reasons.items() if v},
            "context_rate": round(sum(r["context"] for r in records) / len(records), 3),
            "p50_ms": round(statistics.median(ms), 1), "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1)}


def _quantiles(ms: list[float]) -> dict:
    ms = sorted(ms)
    return {"p50": round(statistics.median(ms), 1), "p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1)} if ms else {}


def run(mode: str, count: int, turns: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="memdir-sessions-") as tmp:
        os.environ["MEMDIR_SERVERS_DIR"] = str(Path(tmp) / "servers")  # this run's own server and host
        root = Path(tmp) / "project" / ".memories"
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".memdir"))
        toml = root / "memdir.toml"
        toml.write_text(toml.read_text().replace('user_vault = "~/.local/share/memdir"', 'user_vault = ""'))
        prompts = prompts_of(root)
        if SAMPLE is not None:
            os.environ["MEMDIR_SAMPLE_OUT"] = str(SAMPLE / f"{mode}.{{pid}}.jsonl")
        try:
            if mode == "warm":
                client.ensure(root)
                deadline = time.monotonic() + 300
                while client.request(client.running(), "GET", "/api/health", vault=root).get("unembedded") \
                        and time.monotonic() < deadline:
                    time.sleep(0.2)  # the backfill of a served vault: nothing to wait on from outside but its count
                server_log = Path(tmp) / "servers" / client.LOG_NAME
                while MCP_READY and "MCP endpoint ready" not in server_log.read_text(errors="replace") \
                        and time.monotonic() < deadline:
                    time.sleep(0.2)  # a line of the server's log: nothing to wait on from outside
            records: list[dict] = []
            lock = threading.Lock()
            threads = [threading.Thread(target=session, args=(root, n, turns, prompts, records, lock)) for n in range(count)]
            # The server's and the host's CPU from here on is what the turns cost them (warm: both are up already).
            before = {"server": cpu_s(getattr(client.running(), "pid", None)) or 0.0,
                      "host": cpu_s(getattr(embed_host.running(), "pid", None)) or 0.0,
                      "server waited": waited_s(getattr(client.running(), "pid", None)),
                      "host waited": waited_s(getattr(embed_host.running(), "pid", None))}
            started, load_before = time.monotonic(), os.getloadavg()[0]
            children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the hook processes this run waits for
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall, load_after = time.monotonic() - started, os.getloadavg()[0]
            waits = {"server": waited_s(getattr(client.running(), "pid", None)),
                     "host": waited_s(getattr(embed_host.running(), "pid", None))}
            spent = resource.getrusage(resource.RUSAGE_CHILDREN)
            hooks_cpu = sum(LAUNCHED_CPU) if SESSION_GROUPS else \
                spent.ru_utime + spent.ru_stime - children.ru_utime - children.ru_stime
            LAUNCHED_CPU.clear()
            hook_cpu_ms = 1000 * hooks_cpu / max(1, 2 * len(records))
            sids = {r["session"] for r in records}
            expected = len(records)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (list((root / ".memdir" / "spool").glob("*.json"))
                                                   or captured(root, sids) < expected):
                time.sleep(0.2)  # spooled events the server applies on its timer
            got = captured(root, sids)
            # The captured exchanges' vectors: the host embeds them behind the prompts' queries (at a lower priority),
            # so the CPU below is read once they are all in, and how long after the last turn that was is printed.
            server, host = client.running(), embed_host.running()
            embedded_after = None
            while server is not None and time.monotonic() < deadline + 60:
                try:
                    if not client.request(server, "GET", "/api/health", timeout=5, vault=root).get("unembedded"):
                        embedded_after = round(time.monotonic() - started - wall, 1)
                        break
                except (client.Unavailable, client.RemoteError):
                    pass
                time.sleep(0.2)  # the backfill's count: nothing to wait on from outside
            host = embed_host.running()
            per_turn = {"hooks": round(2 * hook_cpu_ms, 1)}
            for name, pid in (("server", server.pid if server else None), ("host", host.pid if host else None)):
                now = cpu_s(pid)
                per_turn[name] = round(1000 * (now - before[name]) / max(1, expected), 1) if now is not None else None
                # and how long its threads were runnable without a core, from the first prompt to the last turn
                per_turn[f"{name} waited"] = round(1000 * (waits[name] - before[f"{name} waited"]) / max(1, expected), 1)
            peaks = {"server_mb": peak_mb(server.pid if server else None), "host_mb": peak_mb(host.pid if host else None),
                     "server_cpu_s": cpu_s(server.pid if server else None), "host_cpu_s": cpu_s(host.pid if host else None)}
        finally:
            from mcp_server.server import registry
            registry.stop()
            logs = [Path(tmp) / "servers" / name for name in (client.LOG_NAME, embed_host.LOG_FILE)]
            timeline = milestones(logs, min((r["wall"] for r in records), default=0.0))
            events = watcher_events(logs[0])
            if KEEP_LOG is not None:  # the server's log: what it did meanwhile (merges, backfill, errors)
                shutil.copy(logs[0], KEEP_LOG.with_suffix(f".{mode}.log"))
                if logs[1].exists():
                    shutil.copy(logs[1], KEEP_LOG.with_suffix(f".{mode}.host.log"))
    records.sort(key=lambda r: r["at"])
    first = records[0]["at"] if records else 0.0
    if RECORDS is not None:  # each prompt: when it was sent (s after the first), its hook's ms, context or why none
        with RECORDS.with_suffix(f".{mode}.jsonl").open("w") as out:
            for r in records:
                out.write(json.dumps({"at_s": round(r["at"] - first, 3), "ms": round(r["ms"], 1), "reason": r["reason"],
                                      "session": r["session"]}) + "\n")
    context = [r for r in records if r["context"]]
    timeline["first context (prompt sent)"] = round(context[0]["at"] - first, 2) if context else None
    half = len(records) // 2
    return {"mode": mode, "sessions": count, "turns": turns, "think_s": THINK, "as_installed": AS_INSTALLED,
            "mcp_ready": MCP_READY and mode == "warm",
            "session_groups": SESSION_GROUPS, "wall_s": round(wall, 1),
            "load": [round(load_before, 1), round(load_after, 1)],
            "all": phase(records),
            "first_5s": phase([r for r in records if r["at"] - first < EARLY_SECONDS]),
            "after_5s": phase([r for r in records if r["at"] - first >= EARLY_SECONDS]),
            "first_half": phase(records[:half]), "second_half": phase(records[half:]),
            "captured": got, "expected": expected, "embedded_after_s": embedded_after, "timeline_s": timeline, "stop_hook_ms": _quantiles([r["stop_ms"] for r in records]), "hook_cpu_ms": round(hook_cpu_ms, 1), "peak_rss": peaks,
            "turn_cpu_ms": per_turn, "watcher_events": events}


# What a cold start goes through, in the server's and the embedding host's logs (their first line of each kind).
MILESTONES = {"server on": "memdir server on 127", "index open": ": index open in", "watching": "memdir.watcher INFO watching",
              "spool replayed": "hook events spooled while it was not served", "serving": "memdir.server INFO serving",
              "MCP ready": "MCP endpoint ready", "host on": "memdir embedding host on",
              "model loaded": "model loaded", "first backfill": "deferred units in"}


WATCHER_EVENTS = re.compile(r"memdir\.watcher INFO stopped watching .*: (\d+) file events received")


def watcher_events(log: Path) -> int | None:
    """The file events the server's watchers received over its life (warm-up included), from the line each logs as it
    stops: every one is an event watchdog read, built and dispatched. None when the code under test logs none."""
    counts = [int(m.group(1)) for m in map(WATCHER_EVENTS.search, log.read_text(errors="replace").splitlines()
                                           if log.exists() else []) if m]
    return sum(counts) if counts else None


def milestones(logs: list[Path], first_wall: float) -> dict:
    """Seconds from the first prompt to each milestone's first log line (its text after the level kept)."""
    found: dict = {}
    for log in logs:
        for text in (log.read_text(errors="replace").splitlines() if log.exists() else []):
            match = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ", text)
            if not match:
                continue
            at = time.mktime(time.strptime(match.group(1), "%Y-%m-%d %H:%M:%S")) + int(match.group(2)) / 1000
            for name, pattern in MILESTONES.items():
                if pattern in text and name not in found:
                    found[name] = (round(at - first_wall, 2), text.split(" INFO ", 1)[-1][-90:])
                    started = re.search(r", ([\d.]+) s after it\)", text) if name == "server on" else None
                    if started:  # the server logs its age as it listens (since session 22): when its process began
                        found["server process started"] = (round(at - first_wall - float(started.group(1)), 2), "")
    return dict(sorted(found.items(), key=lambda item: item[1][0]))


def line(r: dict) -> str:
    def p(name: str) -> str:
        x = r[name]
        without = ", ".join(f"{k} {v}" for k, v in x.get("without", {}).items())
        return (f"{name} {x.get('with_context', 0)}/{x['prompts']} context"
                f"{f' (without: {without})' if without else ''}, p50 {x.get('p50_ms')} p95 {x.get('p95_ms')} ms"
                if x["prompts"] else f"{name} -")
    think = f", think {r['think_s']} s" if r["think_s"] else ""
    think += ", hooks as installed" if r.get("as_installed") else ""
    think += ", a CPU group per session" if r.get("session_groups") else ""
    think += ", its MCP endpoint built first" if r.get("mcp_ready") else ""
    return (f"{r['mode']:>4}, {r['sessions']} sessions x {r['turns']} turns{think} ({r['wall_s']} s, load "
            f"{r['load'][0]} -> {r['load'][1]}): {p('all')}\n"
            f"      {p('first_5s')}; {p('after_5s')}\n      {p('first_half')}; {p('second_half')}\n"
            f"      captured {r['captured']}/{r['expected']}, all embedded {r['embedded_after_s']} s after the last turn (Stop hook p50 {r['stop_hook_ms'].get('p50')} "
            f"p95 {r['stop_hook_ms'].get('p95')} ms); CPU per hook process {r['hook_cpu_ms']} ms; peak RSS server {r['peak_rss']['server_mb']} MB, "
            f"host {r['peak_rss']['host_mb']} MB; CPU server {r['peak_rss']['server_cpu_s']} s, "
            f"host {r['peak_rss']['host_cpu_s']} s\n      CPU per turn (ms, to the last vector): "
            + ", ".join(f"{k} {v}" for k, v in r["turn_cpu_ms"].items())
            + f"; file events the server's watcher received (its whole life) {r.get('watcher_events')}"
            + "\n      timeline (s after the first prompt): "
            + "; ".join(f"{k} {v if not isinstance(v, tuple) else v[0]}" for k, v in r["timeline_s"].items()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("cold", "warm", "both"), default="both")
    parser.add_argument("--sessions", type=int, default=9)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--think", type=float, default=0.0, metavar="S",
                        help="the assistant's answer time between a prompt and its Stop: 0.5-1.5 x S seconds (default 0: "
                             "back to back)")
    parser.add_argument("--log", type=Path, help="keep each run's server log as LOG.<mode>.log")
    parser.add_argument("--records", type=Path, help="write each prompt (sent at, hook ms, context or why none) to "
                                                     "RECORDS.<mode>.jsonl")
    parser.add_argument("--as-installed", action="store_true",
                        help="start each hook as `python -S` with the code on PYTHONPATH, as a regular install runs it: "
                             "this venv's editable install adds a path finder to every process's site, which imports "
                             "pathlib, re and urllib.parse whatever the hook itself imports (a regular install's site "
                             "costs ~2 ms)")
    parser.add_argument("--session-groups", action="store_true",
                        help="start each session's hooks from a process in a session of its own, as nine assistants in "
                             "nine terminals do (Linux shares the CPU between sessions first: without it all the "
                             "sessions' hooks share the bench's one share)")
    parser.add_argument("--sample", type=Path, metavar="DIR",
                        help="sample the server's and the host's CPU by thread and stack (bench/thread_cpu) into "
                             "DIR/<mode>.<pid>.jsonl")
    parser.add_argument("--mcp-ready", action="store_true",
                        help="warm: start the turns once the server's MCP endpoint is built, as sessions whose "
                             "assistant connected `memdir mcp` at its start find it (without it the endpoint is built "
                             "after the first answer, ~0.3-0.5 CPU s inside the first second of turns)")
    parser.add_argument("--code", type=Path, help="run the hooks and the server from this checkout (an A/B in one run)")
    options = parser.parse_args()
    if options.code:
        os.environ["PYTHONPATH"] = str(options.code.resolve())  # the spawned hooks, server and host import it first
        # Its own example vault: a checkout refuses a memdir.toml that names settings it does not know (an older
        # one served nothing, every prompt got no context, when the vault was this checkout's).
        EXAMPLE = options.code.resolve() / ".memories-example"
        CODE = options.code.resolve()
    # The server and the embedding host start as `python -m mcp_server`, which puts the working directory first on
    # their path, before PYTHONPATH: run from a checkout, they imported that checkout whatever `--code` said.
    # Bytecode for the code under test, as an installed package has (hooks.compiled): an A/B against a checkout that
    # had its __pycache__ measured the compiler.
    for checkout in {REPO, *([options.code.resolve()] if options.code else [])}:
        compiled(checkout)
    os.chdir(tempfile.gettempdir())
    KEEP_LOG, THINK, AS_INSTALLED, SAMPLE = options.log, options.think, options.as_installed, options.sample
    RECORDS = options.records
    SESSION_GROUPS, MCP_READY = options.session_groups, options.mcp_ready
    if AS_INSTALLED and not options.code:
        os.environ["PYTHONPATH"] = str(REPO)  # -S: no site-packages, so the hooks find memdir here
    if options.sample:
        options.sample.mkdir(parents=True, exist_ok=True)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), str(BENCH / "thread_cpu")]))
    results = [run(m, options.sessions, options.turns) for m in (("cold", "warm") if options.mode == "both" else (options.mode,))]
    print(json.dumps(results, indent=2) if options.json else "\n".join(line(r) for r in results))
