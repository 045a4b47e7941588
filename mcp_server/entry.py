"""The `memdir` console script: `memdir hook ...` runs on the standard library alone; everything
else loads the click CLI. Claude Code runs a hook on every prompt, so it must start in milliseconds."""

from __future__ import annotations

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from .hooks import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "embed-host":  # started by vault servers, not by people
        from .embed_host import main as host_main

        sys.exit(host_main(sys.argv[2:]))
    from .cli import main as cli_main

    cli_main()
