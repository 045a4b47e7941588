"""Which vault a relative `--vault` names: the nearest one, from a folder upward. Standard library only.

Claude Code starts hooks and MCP servers from wherever the user launched it, often a subfolder
of the project, and leaves `CLAUDE_PROJECT_DIR` unset for MCP servers. A relative vault path
(`.memories`, `./.memories`) is therefore looked up like git looks up `.git`: in the folder,
then in each parent, and the first initialized vault wins. So one user-level registration
serves every project its own vault, and a project's `.mcp.json` works from any subfolder.
"""

from __future__ import annotations

from pathlib import Path

MARKER = "memdir.toml"  # an initialized vault has one


def locate(given: str | Path, start: Path) -> Path:
    """The vault `given` names seen from `start`: an absolute path as is; a relative one in the nearest
    folder (start, then its parents) where it is an initialized vault; else under `start`."""
    path = Path(given).expanduser()
    if path.is_absolute():
        return path
    start = start.absolute()
    for folder in (start, *start.parents):
        if (folder / path / MARKER).is_file():
            return folder / path
    return start / path
