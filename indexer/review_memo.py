"""Answers the review inbox keeps between processes, by the hash of the text they are about.

Scanning 10k bodies for credentials costs half a second and the reversal tests of the similar
pairs a second; both depend only on the texts. A server that starts again, or a `memdir review`
without a server, reads them from `.memdir/review/memo.json` and computes only what is new.
Entries about texts that left the vault are dropped when the file is written. Derived data: a
missing or damaged file only means computing again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any, Callable, Iterable

from vault import atomic
from vault.model import Memory

log = logging.getLogger("memdir.review")
FORMAT = 3  # 2: a changed value reads "a value changed: 'x' to 'y'"; 3: role lines imitate only in capitals


class ReviewMemo:
    """Three tables: credential labels and marker imitations by body (and title), reversal verdicts by pair of bodies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tables: dict[str, dict[str, Any]] | None = None
        self._grown = False
        self._lock = threading.Lock()

    def secrets(self, memory: Memory, compute: Callable[[], list[str]]) -> list[str]:
        return self._get("secrets", _body(memory), compute)

    def imitation(self, memory: Memory, compute: Callable[[], str]) -> str:
        return self._get("imitations", f"{_body(memory)}+{_digest(memory.title)}", compute)

    def reversal(self, a: Memory, b: Memory, compute: Callable[[], str]) -> str:
        return self._get("reversals", f"{_body(a)}+{_body(b)}", compute)

    def save(self, memories: Iterable[Memory]) -> None:
        """Write the memo back if it grew, keeping only what is about bodies among `memories`."""
        if not self._grown or self._tables is None:
            return
        live = {_body(m) for m in memories}
        with self._lock:
            self._tables = {table: {key: value for key, value in entries.items()
                                    if all(part in live for part in key.split("+")[: _BODIES[table]])}
                            for table, entries in self._tables.items()}
            data = json.dumps({"format": FORMAT, **self._tables}, separators=(",", ":")).encode()
            self._grown = False
        try:
            atomic.write_state(self.path, data, durable=False)
        except OSError as exc:  # a read-only vault still answers, it only cannot keep the answers
            log.info("could not keep the review memo in %s: %s", self.path, exc)

    def _get(self, table: str, key: str, compute: Callable[[], Any]) -> Any:
        tables = self._load()
        try:
            return tables[table][key]
        except KeyError:
            value = tables[table][key] = compute()
            self._grown = True
            return value

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._tables is not None:
            return self._tables
        with self._lock:
            loaded: Any = {}
            try:
                loaded = json.loads(self.path.read_bytes())
            except FileNotFoundError:
                pass
            except (OSError, ValueError) as exc:
                log.info("ignoring %s (%s): its answers are computed again", self.path, exc)
            if not isinstance(loaded, dict) or loaded.get("format") != FORMAT:
                loaded = {}
            self._tables = {table: dict(loaded[table]) if isinstance(loaded.get(table), dict) else {}
                            for table in _BODIES}
        return self._tables


_BODIES = {"secrets": 1, "imitations": 1, "reversals": 2}  # how many leading key parts name bodies


def _body(memory: Memory) -> str:
    # 16 hex digits of the body's sha256 (64 bits): a collision among one vault's bodies is not a concern.
    return (memory.body_hash or _digest(memory.body))[:16]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
