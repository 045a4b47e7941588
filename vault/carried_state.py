"""A vault's `.memdir/` that a repository carries: never read.

`.memdir/` holds what memdir derives and keeps on this machine: the index (whose keyword files Whoosh reads with
pickle, and whose vector file FAISS parses), the embedding cache, the spool of hook events the server applies, the
sessions. A repository that commits it (the vault's .gitignore leaves it out, but a commit may add it anyway)
hands its contents to every clone: opening such a vault ran the repository's code in the user's server on their
first prompt (bench/results/s21-attack21.md). So a vault whose `.memdir/` git tracks is not opened, and says how
to remove it; memdir rebuilds what it holds from the memory files.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .errors import CarriedStateError

STATE = ".memdir"
GIT_SECONDS = 5.0


def check_not_carried(root: Path) -> None:
    """A CarriedStateError when git tracks anything under the vault's `.memdir/` (itself, a symlink in its place,
    or a file in it). Silent when there is no `.memdir/` yet, no git or no repository."""
    if not os.path.lexists(root / STATE):
        return  # nothing there to read: memdir makes it
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", STATE], cwd=root, capture_output=True,
                                timeout=GIT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return
    tracked = [name for name in listed.stdout.decode("utf-8", "replace").split("\0") if name]
    if listed.returncode != 0 or not tracked:
        return
    raise CarriedStateError(
        f"{root / STATE} is committed to the repository ({len(tracked):,} tracked "
        f"file{'s' if len(tracked) != 1 else ''}, e.g. {tracked[0]}): it is memdir's local index and state, and "
        "memdir does not read one a repository carries (it could run code). Remove it from git and delete it: "
        f"git rm -r -q --cached {STATE} && rm -rf {STATE} (in {root}); memdir rebuilds it from the memory files")
