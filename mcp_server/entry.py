"""The `memdir` console script: `memdir hook ...` runs on the standard library alone; everything
else loads the click CLI. Claude Code runs a hook on every prompt, so it must start in milliseconds."""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from .clients.hooks import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "embed-host":  # started by vault servers, not by people
        from .embedding.host import main as host_main

        sys.exit(host_main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "mcp" and not {"-h", "--help"} & set(sys.argv[2:]):
        sys.exit(_mcp(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "serve" and not {"-h", "--help"} & set(sys.argv[2:]):
        # Before the CLI and the server are imported (seconds on a loaded machine): the hook events no spool could
        # take are handed to this process from here on (server/inbox.py).
        from .server.inbox import open_early

        open_early()
    import os

    from vault import carried_state, state_stamp

    from .cli.commands import main as cli_main
    from .config import stamp_key_path

    state_stamp.keep_key_at(stamp_key_path())  # every command and the server open indexes: stamp and check them
    carried_state.ask_git_in(os.environ)  # whether git tracks .memdir/ is asked of the vault's own repository
    cli_main()


def _mcp(args: list[str]) -> int:
    """`memdir mcp [--vault PATH]` without click: an assistant starts it before every session."""
    import os
    from pathlib import Path

    from .locate import locate, uninitialized

    given = os.environ.get("MEMDIR_VAULT") or ".memories"
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--vault" and rest:
            given = rest.pop(0)
        elif arg.startswith("--vault="):
            given = arg.split("=", 1)[1]
        else:
            print(f"Usage: memdir mcp [--vault PATH]\nError: unexpected argument {arg!r}", file=sys.stderr)
            return 2
    root = locate(given, Path.cwd()).absolute()
    refused = uninitialized(root)
    if refused is not None:
        print(f"Error: {refused}", file=sys.stderr)
        return 1
    from .tools.stdio import run_stdio

    run_stdio(root)
    return 0
