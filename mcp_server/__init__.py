"""memdir's outward faces: the CLI, the vault server, MCP tools and Claude Code hooks."""
