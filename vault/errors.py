"""Every error memdir raises, under one root.

    VaultError                  anything memdir refuses or cannot do
    ├── ParseError              a file is not a valid memory (path, line, reason)
    ├── ValidationError         a value given by a caller is not acceptable
    ├── PathError               a path or id would leave the vault or is malformed
    ├── NotFoundError           no memory with that id or path
    ├── ConflictError           someone else changed the file and the change cannot be re-applied
    ├── LockTimeout             another memdir writer held the lock too long
    ├── SecretError             content looks like a credential
    ├── ConfigError             memdir.toml is invalid
    └── DiskFullError           the disk or quota is full: a file could not be written (names which)

Higher layers add their own subclasses of VaultError (the indexer's IndexUnusable, for example),
so `except VaultError` catches everything memdir raises on purpose.

The CLI and the MCP tools turn these into user-facing messages; library code only raises.
"""

from __future__ import annotations


class VaultError(Exception):
    """Root of every error memdir raises on purpose."""


class ParseError(VaultError):
    """A file could not be read as a memory; it is reported and never rewritten."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {reason}")

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "reason": self.reason}


class ValidationError(VaultError):
    """A caller-supplied value is out of range, of the wrong type or unknown."""


class PathError(VaultError):
    """A path or id from outside would escape the vault or is not a legal name."""


class NotFoundError(VaultError):
    """No memory matches the id or path."""


class ConflictError(VaultError):
    """The file changed under us in a way the pending change cannot be merged into."""


class LockTimeout(VaultError):
    """The vault's write lock stayed busy past the timeout."""


class SecretError(VaultError):
    """Content looks like a credential and was refused; `findings` name kind, place and a masked preview."""

    def __init__(self, message: str, findings: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.findings = findings


class ConfigError(VaultError):
    """memdir.toml could not be read or holds an invalid value."""


class DiskFullError(VaultError):
    """The disk (or the user's quota) is full: the named file could not be written; nothing was half written."""


class CarriedStateError(VaultError):
    """The vault's `.memdir/` (its index and local state) came with the repository: memdir does not read it."""
