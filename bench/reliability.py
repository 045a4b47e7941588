"""The reliability proof, long form: crash points, lost updates, hostile inputs and index drift.

    python bench/reliability.py --json            # >= 200 crash points, 4 scorers x 50, the corpus, a model run
    python bench/reliability.py --long --json     # more of everything (also: MEMDIR_LONG=1 pytest tests/reliability)
    python bench/reliability.py --attacks --json  # only the replayed outside attack (issue 28 items 5-8)

Prints {"crash_points", "torn_files", "lost_increments", "lost_edits", "hostile_inputs",
"unclear_errors", "index_drift", "seconds"}, then one row per replayed attack (tests/reliability/attacks.py):
how much of it got through, 0 when it was held. The bounded versions run in CI under tests/reliability/.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def crash_and_race(work: Path, points: int, rounds: int) -> dict:
    from tests.reliability.harness import crash_campaign, race

    crashes = crash_campaign(work, points, seed=int(time.time()))
    raced = race(work, scorers=4, rounds=rounds, memories=3)
    for failure in crashes.failures[:20]:
        print("crash:", failure, file=sys.stderr)
    return {
        "crash_points": crashes.crash_points,
        "torn_files": crashes.torn_files,
        "lost_increments": crashes.lost_increments + raced.lost_increments,
        "lost_edits": raced.lost_edits,
        "index_drift": crashes.index_drift + crashes.stray_temp_files + crashes.litter,
    }


def hostile(work: Path) -> dict:
    from click.testing import CliRunner

    from mcp_server.cli.commands import cli
    from tests.conftest import memory_text, write
    from tests.reliability.harness import drift_in_place, hostile_corpus, new_vault, open_index, snapshot, unclear_problems
    from tests.reliability.test_hostile import TRAVERSALS
    from vault import Vault
    from vault.errors import VaultError

    root = new_vault(work / "hostile-vault")
    write(root, "history/good.md", memory_text("m-00000001", "Good", "a good memory about postgres locks"))
    cases = hostile_corpus(root, work / "outside")
    before = snapshot(root)
    unclear: list[str] = []
    problems = [(p.path, p.line, p.reason) for p in Vault(root).scan().problems]
    unclear += unclear_problems(cases, problems)
    index = open_index(root)
    unclear += unclear_problems(cases, [(p.path, p.line, p.reason) for p in index.problems()])
    drifted = drift_in_place(index)
    rewritten = [p for p in before if snapshot(root).get(p) != before[p]]
    unclear += [f"{p}: rewritten" for p in rewritten]
    vault = Vault(root)
    runner = CliRunner()
    inputs = len(cases)
    for attack in TRAVERSALS:
        try:
            vault.resolve(attack)
            unclear.append(f"resolve({attack!r}) was accepted")
        except VaultError as exc:
            if not str(exc).strip():
                unclear.append(f"resolve({attack!r}): empty error")
        inputs += 1
        for args in (["show", attack], ["links", attack], ["score", attack, "worked"]):
            result = runner.invoke(cli, [*args, "--vault", str(root)])
            inputs += 1
            if result.exit_code not in (1, 2) or not isinstance(result.exception, SystemExit) or "Error" not in result.output:
                unclear.append(f"{args}: {result.output.strip()[:200]}")
    # An oversized question is asked by its beginning (max_query_chars, as the prompt hook does): an answer, not an
    # error. An oversized limit is refused, naming the bound.
    for args, refused in ((["search", "lock " * 20_000], False), (["search", "lock", "--limit", str(10**9)], True)):
        result = runner.invoke(cli, [*args, "--vault", str(root)])
        inputs += 1
        answered = result.exit_code == 0 and result.exception is None and "relevance" in result.output
        if not ((result.exit_code == 1 and "Error" in result.output) if refused else answered):
            unclear.append(f"{args[:1]} oversized ({'limit' if refused else 'question'}): {result.output.strip()[:200]}")
    for line in unclear[:20]:
        print("unclear:", line, file=sys.stderr)
    return {"hostile_inputs": inputs, "unclear_errors": len(unclear), "index_drift": len(drifted)}


def model(examples: int) -> int:
    """Run the stateful model; returns 1 if it found a counterexample (printed), else 0."""
    os.environ["MEMDIR_LONG"] = "1"
    os.environ["MEMDIR_LONG_EXAMPLES"] = str(examples)
    from hypothesis import settings
    from hypothesis.stateful import run_state_machine_as_test

    from tests.reliability.test_model import VaultMachine

    try:
        run_state_machine_as_test(VaultMachine, settings=settings.get_profile("reliability-long"))
    except Exception as exc:  # noqa: BLE001 - the report must still be printed
        print("model:", exc, file=sys.stderr)
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--long", action="store_true", help="more crash points, rounds and model examples")
    parser.add_argument("--points", type=int, help="crash points (default 200, --long 1000)")
    parser.add_argument("--examples", type=int, help="state-machine examples (default 40, --long 300)")
    parser.add_argument("--attacks", action="store_true", help="only the replayed outside attack (issue 28)")
    args = parser.parse_args()
    if args.attacks:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="memdir-attacks-") as scratch:
            rows = attacks(Path(scratch))
        report({**rows, "seconds": round(time.perf_counter() - started, 1)}, args.json)
        return
    points = args.points or (1000 if args.long else 200)
    examples = args.examples or (300 if args.long else 40)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memdir-reliability-") as scratch:
        work = Path(scratch)
        summary = crash_and_race(work, points, rounds=200 if args.long else 50)
        found = hostile(work)
        model_failed = model(examples)
        attacked = attacks(work)
    result = {
        "crash_points": summary["crash_points"],
        "torn_files": summary["torn_files"],
        "lost_increments": summary["lost_increments"],
        "lost_edits": summary["lost_edits"],
        "hostile_inputs": found["hostile_inputs"],
        "unclear_errors": found["unclear_errors"],
        "index_drift": summary["index_drift"] + found["index_drift"] + model_failed,
        **attacked,
        "seconds": round(time.perf_counter() - started, 1),
    }
    report(result, args.json)


def attacks(work: Path) -> dict[str, int]:
    """One row per replayed attack of 2026-11-26 (issue 28 items 5-8): how much got through (0: held)."""
    from tests.reliability.attacks import run_all

    return run_all(work)


def report(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>38}: {value}")


if __name__ == "__main__":
    main()
