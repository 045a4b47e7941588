"""A memdir writer that SIGKILLs itself at its K-th write-path system call (for crash tests).

Usage: python -m tests.crash_writer VAULT RELATIVE_PATH WRITES KILL_AT
Prints one line per acknowledged write ("ack <uses>") and per created file ("created <path>").
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from vault import Change, Vault


def arm(kill_at: int) -> None:
    calls = [0]

    def counted(function):
        def wrapper(*args, **kwargs):
            calls[0] += 1
            if calls[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return function(*args, **kwargs)

        return wrapper

    for name in ("write", "fsync", "replace", "link", "unlink", "rename"):
        setattr(os, name, counted(getattr(os, name)))


def main() -> None:
    root, relative, writes, kill_at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    vault = Vault(root)
    arm(kill_at)
    for _ in range(writes):
        memory = vault.edit(vault.load(relative), Change(derive=lambda m: {"uses": m.uses + 1}))
        print(f"ack {memory.uses}", flush=True)
        created = vault.add(f"takeaway after use {memory.uses}", collection="working", type="learning")
        print(f"created {created.path}", flush=True)


if __name__ == "__main__":
    main()
