"""The normalized memory shape every outward face returns (CLI --json, MCP tools, hooks)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .fields import extra_fields
from .model import BANK_DEFAULT, Memory
from .scoring import outcome_history, wilson_lower_bound


def iso(moment: datetime | None) -> str | None:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def age_label(moment: datetime | None, now: datetime | None = None) -> str:
    """Compact age: 40m, 5h, 3d, 6w, 4mo, 2y ('' when unknown)."""
    if moment is None:
        return ""
    seconds = max(0.0, ((now or datetime.now(timezone.utc)) - moment).total_seconds())
    minutes, hours, days = seconds / 60, seconds / 3600, seconds / 86400
    if hours < 1:
        return f"{int(minutes)}m"
    if days < 1:
        return f"{int(hours)}h"
    if days < 14:
        return f"{int(days)}d"
    if days < 60:
        return f"{int(days // 7)}w"
    if days < 365:
        return f"{int(days // 30)}mo"
    return f"{int(days // 365)}y"


def normalize(memory: Memory, now: datetime | None = None) -> dict[str, Any]:
    """One dict shape for every memory, whatever its collection; memory_bank adds importance/confidence."""
    shape: dict[str, Any] = {
        "id": memory.id,
        "collection": memory.collection,
        "type": memory.type,
        "title": memory.title,
        "content": memory.body.strip(),
        "path": memory.path,
        "created_at": iso(memory.created_at),
        "age": age_label(memory.created_at, now),
        "score": round(memory.score, 4),
        "wilson_score": round(wilson_lower_bound(memory.success_count, memory.uses), 4),
        "uses": memory.uses,
        "success_count": memory.success_count,
        "outcomes": list(memory.outcomes),
        "outcome_history": outcome_history(memory.outcomes),
        "last_outcome": memory.last_outcome,
        "last_used_at": iso(memory.last_used_at),
        "tags": list(memory.tags),
        "aliases": list(memory.aliases),
        "status": memory.status,
        "supersedes": list(memory.supersedes),
        "privacy": memory.privacy,
        "source": memory.source,
    }
    extra = extra_fields(memory)
    if extra:
        shape["fields"] = extra  # per-type fields (an objective's deadline) and keys of the user's own
    if memory.collection == "memory_bank":
        shape["importance"] = memory.importance if memory.importance is not None else BANK_DEFAULT
        shape["confidence"] = memory.confidence if memory.confidence is not None else BANK_DEFAULT
        shape["always_inject"] = memory.always_inject
    return shape
