"""`python -m mcp_server ...` is the `memdir` command (used to start the server detached)."""

from .entry import main

main()
