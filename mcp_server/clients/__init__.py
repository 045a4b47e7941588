"""The assistants memdir wires into: Claude Code's hooks (both sides), its settings, and snippets for others."""
