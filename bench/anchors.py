"""What staleness checks cost: a project of code files and a vault of N memories that each cite 1-3 of them.

    python bench/anchors.py --json              # 10k memories citing 2,000 files, 10% of the files changed
    python bench/anchors.py --memories 1000

A search checks the candidates it ranks (at most 2 x [search] candidates = 200) and the prompt
hook the memories it shows, so "per prompt" times 200 random memories' checks, warm (the blob
cache filled, as in a running server). "full sweep" checks every memory once, cold and warm.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vault import Vault, init_vault  # noqa: E402
from vault.anchors import Anchors  # noqa: E402

CHECKED_PER_PROMPT = 200


def build(root: Path, memories: int, files: int, changed_share: float, rng: random.Random) -> tuple[Vault, int]:
    paths = [f"src/pkg{n % 40}/module{n}.py" for n in range(files)]
    for n, path in enumerate(paths):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f"def function_{n}_{k}(x):\n    return x * {k}\n\n" for k in range(40)))
    vault_root = root / ".memories"
    init_vault(vault_root, '[search]\nembedder = "hashing-256"\n')
    anchors = Anchors(vault_root)
    for n in range(memories):
        cited = rng.sample(range(files), rng.randint(1, 3))
        body = "Notes: " + ", ".join(f"`{paths[c]}::function_{c}_{n % 40}`" for c in cited) + ".\n"
        key = ", ".join(f'"{a}"' for a in anchors.anchor(body))
        (vault_root / "history" / f"m{n:05d}.md").write_text(
            f"---\nid: m-{n:08x}\ncollection: history\ntype: learning\ntitle: memory {n}\n"
            f"created_at: 2026-11-01T08:00:00Z\nanchors: [{key}]\n---\n{body}")
    changed = rng.sample(paths, int(files * changed_share))
    for path in changed:
        with open(root / path, "a") as handle:
            handle.write("def added_later():\n    pass\n")
    return Vault(vault_root), len(changed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=2_000)
    parser.add_argument("--changed", type=float, default=0.1, help="share of the code files changed after anchoring")
    parser.add_argument("--prompts", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as folder:
        vault, changed = build(Path(folder), args.memories, args.files, args.changed, rng)
        memories = list(vault.scan().memories)
        started = time.perf_counter()
        stale = sum(bool(vault.stale(m)) for m in memories)
        cold = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        for memory in memories:
            vault.stale(memory)
        warm = (time.perf_counter() - started) * 1000
        per_prompt = []
        for _ in range(args.prompts):
            chosen = rng.sample(memories, CHECKED_PER_PROMPT)
            started = time.perf_counter()
            for memory in chosen:
                vault.stale(memory)
            per_prompt.append((time.perf_counter() - started) * 1000)
        per_prompt.sort()
        report = {
            "memories": len(memories), "files": args.files, "files_changed": changed, "stale_memories": stale,
            "full_sweep_cold_ms": round(cold, 1), "full_sweep_warm_ms": round(warm, 1),
            "per_prompt_checks": CHECKED_PER_PROMPT,
            "per_prompt_p50_ms": round(statistics.median(per_prompt), 3),
            "per_prompt_p95_ms": round(per_prompt[int(0.95 * (len(per_prompt) - 1))], 3),
        }
    print(json.dumps(report, indent=2) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))


if __name__ == "__main__":
    main()
