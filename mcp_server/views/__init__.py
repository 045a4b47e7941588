"""The outward model of a memory and its renderings, shared by the CLI, the MCP tools and the hooks."""
