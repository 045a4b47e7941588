"""What the stdio proxy and its upstream side both say in an MCP handshake (standard library only)."""

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # negotiated by `initialize`
SERVER_INFO = {"name": "memdir", "version": "0.1.0"}
