"""Per-type fields (seed 002): what an objective, a plan, a preference or a learning may carry.

They are ordinary frontmatter keys, kept as written and passed through to every outward shape
with the other keys memdir does not own; `doctor` checks the ones named here, so a deadline that
is not a date is found (with file, line and reason) before a lifecycle rule or a person relies
on it. A hand-edited file with a bad field is still served; a tool write that sets one (update,
a move to the user vault) is refused, naming the field (curator.py calls `misfits`).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Callable, Mapping

from .model import KNOWN_KEYS, Memory

PROGRESS = ("pending", "in-progress", "blocked", "done")


def _date(value: Any) -> str | None:
    if isinstance(value, (date, datetime)):
        return None
    if isinstance(value, str):
        try:
            date.fromisoformat(value.strip()[:10])
            return None
        except ValueError:
            pass
    return f"{value!r} is not a date (YYYY-MM-DD)"


def _one_of(*choices: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if value in choices else f"{value!r} is not one of {', '.join(choices)}"
    return check


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() else f"{value!r} is not a text"


def _texts(value: Any) -> str | None:
    ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    return None if ok else f"{value!r} is not a list of texts"


def _unit(value: Any) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0
    return None if ok else f"{value!r} is not a number from 0 to 1"


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"{value!r} is not true or false"


TYPE_FIELDS: Mapping[str, Mapping[str, Callable[[Any], str | None]]] = {
    "objective": {"deadline": _date, "progress": _one_of(*PROGRESS), "blockers": _texts},
    "plan": {"deadline": _date, "progress": _one_of(*PROGRESS)},
    "preference": {"domain": _text, "alternatives": _texts, "weight": _unit},
    "learning": {"language": _text, "tool": _text, "applied": _flag},
    "decision": {"decided_on": _date, "alternatives": _texts},
}
# Keys other tools write that are memdir's business, not the user's: left out of `fields`.
INTERNAL = frozenset({"session", "previous"})


def problems(memory: Memory) -> list[tuple[str, str]]:
    """(key, reason) for each per-type field of the memory whose value does not fit its type."""
    return misfits(memory.type, memory.frontmatter)


def misfits(memory_type: str, values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, reason) for each of `values` that is a per-type field of `memory_type` and does not fit it:
    what `doctor` reports for a file, and what a tool write is refused for before anything is written."""
    found = []
    for key, check in TYPE_FIELDS.get(memory_type, {}).items():
        if key in values:
            reason = check(values[key])
            if reason:
                found.append((key, f"{memory_type} field {key}: {reason}"))
    return found


def extra_fields(memory: Memory) -> dict[str, Any]:
    """The frontmatter keys memdir does not own (per-type fields and anyone's own), JSON-ready."""
    return {str(k): _jsonable(v) for k, v in memory.frontmatter.items()
            if k not in KNOWN_KEYS and k not in INTERNAL}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value
