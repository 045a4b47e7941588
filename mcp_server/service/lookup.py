"""Turn what a user typed (an id or a vault-relative path) into a memory, or a clear error."""

from __future__ import annotations

from vault import Memory, Vault
from vault.errors import PathError
from vault.ids import check_id


def looks_like_path(ref: str) -> bool:
    return "/" in ref or "\\" in ref or ref.lower().endswith(".md") or ref.startswith(".")


def lookup(vault: Vault, ref: str) -> Memory:
    if looks_like_path(ref):
        path = vault.resolve(ref)
        if not path.is_file():
            raise PathError(f"{ref} is not a file in the vault")
        return vault.load_file(path)
    return vault.find(check_id(ref))
