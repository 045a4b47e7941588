"""How much memory a process holds, as /proc tells it: for `memdir status` and the servers' health checks.

Its own module because the registry (which reports the embedding host) and the embedding host (which
reports itself) both need it. Standard library only.
"""

from __future__ import annotations

from pathlib import Path


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        return None
    return None
