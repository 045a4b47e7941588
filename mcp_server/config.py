"""The composition root's view of memdir.toml: every layer's sections, read once per entry point."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from indexer.settings import INDEX_SECTIONS, SearchSettings, WatchSettings
from vault.errors import ConfigError
from vault.config import above_zero, load_sections, render_defaults, setting, within
from vault.settings import VAULT_SECTIONS, DedupSettings, LifecycleSettings, ScoringSettings, VaultSettings

@dataclass(frozen=True)
class ContextSettings:
    """What the Claude Code prompt hook injects each turn."""

    slots_working: int = setting(1, "best working memory (the current days)")
    slots_history: int = setting(1, "best history memory")
    slots_overall: int = setting(2, "best memories from any collection, after the two above")
    min_relevance: float = setting(0.35, "memories less relevant than this are not injected: the channels' evidence, "
                                         "not the calibrated number search and the Turns page show, which can be lower "
                                         "(docs/search.md, step 4)")
    max_chars: int = setting(6000, "size budget of the whole injected block (Claude Code's cap is 10,000)")
    content_chars: int = setting(400, "longest text shown for one memory")
    capture_exchanges: bool = setting(True, "the Stop hook stores each exchange as a working memory")

    def __post_init__(self) -> None:
        # min_relevance is left open above 1: a value over every relevance injects nothing but standing facts.
        within(self, 0, 100, "slots_working", "slots_history", "slots_overall")
        above_zero(self, "max_chars", "content_chars")


@dataclass(frozen=True)
class ServerSettings:
    """How this user's memdir server (started on demand by hooks and `memdir mcp`) treats this vault."""

    idle_exit_seconds: float = setting(1800.0, "close this vault after this long without a request to it (the next hook or tool call opens it "
                                                "again; the server exits when it serves no vault); 0 = never")
    shared_embedder: bool = setting(True, "the vaults of this user share one embedding model in its own process "
                                          "(false: each vault loads its own copy into the server, about 70-170 MB more each)")

    def __post_init__(self) -> None:
        within(self, 0.0, float("inf"), "idle_exit_seconds")


SECTIONS: dict[str, type] = {**VAULT_SECTIONS, **INDEX_SECTIONS, "context": ContextSettings, "server": ServerSettings}

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
    context: ContextSettings
    server: ServerSettings


def load_config(vault_root: Path) -> Config:
    return Config(**load_sections(vault_root, SECTIONS))


USER_VAULT_ENV = "MEMDIR_USER_VAULT"
INT8_ENV = "MEMDIR_INT8"


def int8_override() -> bool | None:
    """$MEMDIR_INT8: "always" or "never" takes or leaves the int8 graph whatever the CPU; anything else, None: the
    CPU decides (taken where it has VNNI, docs/search.md). The tests set "always" to check the graph on any CPU."""
    value = os.environ.get(INT8_ENV, "").strip().lower()
    return True if value == "always" else False if value == "never" else None




def user_vault_root(config: Config, project_root: Path) -> Path | None:
    """The personal vault beside the project's: $MEMDIR_USER_VAULT, else `[vault] user_vault`.

    None when it is disabled (an empty value) or names the project vault itself. A ConfigError when one holds
    the other: a user vault inside the project vault is read as project files and committed with them, so every
    private memory would be shared (memdir.toml is committed: anyone could set it so).
    """
    raw = os.environ.get(USER_VAULT_ENV, config.vault.user_vault)
    if not raw.strip():
        return None
    root = Path(raw).expanduser().absolute()
    mine, project = root.resolve(), project_root.resolve()
    if mine == project:
        return None
    if mine.is_relative_to(project) or project.is_relative_to(mine):
        where = "inside the project vault" if mine.is_relative_to(project) else "around the project vault"
        named = f"${USER_VAULT_ENV}" if USER_VAULT_ENV in os.environ else "[vault] user_vault in memdir.toml"
        raise ConfigError(f"{named} is {root}, {where} {project}: private memories there would be project files, "
                          "read and committed with the project. Set it to a folder outside the project "
                          "(the default is ~/.local/share/memdir), or to \"\" to turn private memories off")
    return root


def stamp_key_path() -> Path:
    """The user's index stamp key (vault/state_stamp.py): `$XDG_STATE_HOME/memdir/`, default ~/.local/state/memdir/;
    kept as long as the user, unlike the servers folder, which may be a tmpfs emptied at every boot (every index would
    then be rebuilt)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "memdir" / "index-stamp.key"


def default_config_text() -> str:
    return render_defaults(SECTIONS, HEADER)
