"""The composition root's view of memdir.toml: every layer's sections, read once per entry point."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from indexer.settings import INDEX_SECTIONS, SearchSettings, WatchSettings
from vault.config import load_sections, render_defaults
from vault.settings import VAULT_SECTIONS, DedupSettings, LifecycleSettings, ScoringSettings, VaultSettings

SECTIONS: dict[str, type] = {**VAULT_SECTIONS, **INDEX_SECTIONS}

HEADER = """memdir.toml: settings for this vault.
Every value below is the default, written out so you can see and change it.
Delete a line to go back to the default; unknown keys are errors."""


@dataclass(frozen=True)
class Config:
    vault: VaultSettings
    scoring: ScoringSettings
    lifecycle: LifecycleSettings
    dedup: DedupSettings
    search: SearchSettings
    watch: WatchSettings


def load_config(vault_root: Path) -> Config:
    return Config(**load_sections(vault_root, SECTIONS))


def default_config_text() -> str:
    return render_defaults(SECTIONS, HEADER)
