"""The MCP face: the tools, their descriptions and schemas, the static tool list and the stdio proxy."""
