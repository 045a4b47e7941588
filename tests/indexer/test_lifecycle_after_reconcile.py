"""A lifecycle run decides from what the files say: before its owner's reconcile has read them it leaves the run to
the next one, and a decision is carried out only if the memory itself still calls for it (review of session 8: a
working memory rescued to memory_bank while no server ran was trashed from the index's old row; a memory deleted
between the plan and its application stopped the run with an AttributeError)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from indexer import curator as curator_module
from indexer.curator import Curator
from indexer.embed import HashingEmbedder
from indexer.index import Index
from mcp_server.config import load_config
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from vault import Vault

LATER = datetime(2026, 12, 1, tzinfo=timezone.utc)


def _vault(root: Path) -> None:
    write(root, "working/old.md", memory_text("m-00000001", "Old scratch", "a scratch note nobody used",
                                              collection="working"))
    write(root, "working/other.md", memory_text("m-00000002", "Other scratch", "another scratch note",
                                                collection="working"))


def _curator(index: Index, root: Path) -> Curator:
    config = load_config(root)
    return Curator(index, config.scoring, config.lifecycle, config.dedup)


def test_a_memory_rescued_while_no_server_ran_is_not_trashed_before_the_reconcile(hashing_root: Path, monkeypatch):
    _vault(hashing_root)
    open_index(hashing_root).close()
    rescued = hashing_root / "working" / "old.md"
    rescued.write_text(rescued.read_text().replace("collection: working", "collection: memory_bank"))
    monkeypatch.setattr(curator_module, "RECONCILE_WAIT_SECONDS", 0.0)
    owner = Index.open(Vault(hashing_root), HashingEmbedder(), reconcile=False)  # as a server opens it
    try:
        assert _curator(owner, hashing_root).gc(now=LATER) == []  # not reconciled yet: nothing decided
        assert rescued.exists() and (hashing_root / "working" / "other.md").exists()
        owner.reconcile()
        applied = _curator(owner, hashing_root).gc(now=LATER)
        assert "m-00000001" not in {a.decision.id for a in applied} and rescued.exists()
        assert "m-00000002" in {a.decision.id for a in applied}  # the rules still run once it has reconciled
    finally:
        owner.close()


def test_a_memory_gone_between_the_plan_and_its_application_is_left_and_the_others_applied(hashing_root: Path,
                                                                                        monkeypatch):
    _vault(hashing_root)
    index = open_index(hashing_root)
    try:
        real_memory = index.memory
        monkeypatch.setattr(index, "memory", lambda memory_id: None if memory_id == "m-00000001" else real_memory(memory_id))
        applied = _curator(index, hashing_root).gc(now=LATER)
        assert {a.decision.id for a in applied} == {"m-00000002"}
    finally:
        index.close()
