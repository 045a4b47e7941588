"""memdir's file layer: the memory format, safe reads and writes, ids, paths and the domain rules."""

from .errors import (
    ConfigError,
    ConflictError,
    LockTimeout,
    NotFoundError,
    ParseError,
    PathError,
    SecretError,
    ValidationError,
    VaultError,
)
from .model import COLLECTIONS, OUTCOMES, SCORED_COLLECTIONS, TYPES, Memory
from .parse import parse
from .store import Problem, Scan, Vault, init_vault
from .write import Change, Writer

__all__ = [
    "COLLECTIONS",
    "OUTCOMES",
    "SCORED_COLLECTIONS",
    "TYPES",
    "Change",
    "ConfigError",
    "ConflictError",
    "LockTimeout",
    "Memory",
    "NotFoundError",
    "ParseError",
    "PathError",
    "Problem",
    "Scan",
    "SecretError",
    "ValidationError",
    "Vault",
    "VaultError",
    "Writer",
    "init_vault",
    "parse",
]
