"""Which vault a relative `--vault` names: the nearest one, from a folder upward. Standard library only.

Claude Code starts hooks and MCP servers from wherever the user launched it, often a subfolder
of the project, and leaves `CLAUDE_PROJECT_DIR` unset for MCP servers. A relative vault path
(`.memories`, `./.memories`) is therefore looked up like git looks up `.git`: in the folder,
then in each parent, and the first initialized vault wins. So one user-level registration
serves every project its own vault, and a project's `.mcp.json` works from any subfolder.

On strings (`os.path`): a hook process looks its vault up on every prompt, and `pathlib` imports `re` and
`urllib.parse` (bench/results/s9-nine9.md); `locate` gives the CLI its Path.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # a constant, not typing's (client.py)
if TYPE_CHECKING:
    from pathlib import Path

MARKER = "memdir.toml"  # an initialized vault has one


def nearest(given: str, start: str) -> str:
    """The vault `given` names seen from `start`: an absolute path as is; a relative one in the nearest
    folder (start, then its parents) where it is an initialized vault; else under `start`."""
    path = os.path.normpath(os.path.expanduser(given))
    if os.path.isabs(path):
        return path
    # abspath asks for the working folder only for a relative `start`: a hook whose working folder was deleted (a
    # removed worktree) is still given an absolute `cwd`, and os.getcwd() would raise there (review of session 9).
    first = folder = os.path.abspath(start)
    while True:
        if os.path.isfile(os.path.join(folder, path, MARKER)):
            return os.path.join(folder, path)
        parent = os.path.dirname(folder)
        if parent == folder:
            return os.path.join(first, path)
        folder = parent


def uninitialized(root: str | os.PathLike[str]) -> str | None:
    """Why `root` is not a vault (None when it is one), in the words every entry point uses.

    One rule for the CLI, the server, `memdir mcp` and the hooks: a vault is a folder with a memdir.toml, the
    marker `init` writes and the upward lookup above looks for. A folder without one is refused rather than taken
    as a vault: a mistyped `--vault` (or a command run from the wrong folder) would otherwise get a `.memdir/`
    and an index of whatever Markdown lies there.
    """
    if os.path.isfile(os.path.join(root, MARKER)):
        return None
    return f"no initialized vault at {os.fspath(root)} (no {MARKER}); memdir init {os.fspath(root)} makes it one"


def locate(given: str | Path, start: Path) -> Path:
    from pathlib import Path

    return Path(nearest(os.fspath(given), os.fspath(start)))
