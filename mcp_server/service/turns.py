"""What each turn of a session was shown, and how it was scored: `.memdir/turns.jsonl`, one JSON line per event.

The session files (sessions.py) keep only the current turn; this log keeps the history the web view's
Turns page reads ("where was this memory shown, and did it help?"). Three kinds of line:

    {"kind": "prompt", "session", "turn", "at", "prompt": its first line (redacted), "shown": [{id, title,
     relevance, channel, labels}]}
    {"kind": "score", "session", "turn", "at", "scores": {id: outcome}}
    {"kind": "exchange", "session", "turn", "at", "stored": the working memory holding the exchange}

Local state (never committed), appended with O_APPEND; a torn or foreign line is skipped when read.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from vault import room
from vault.errors import DiskFullError

LOG_NAME = ".memdir/turns.jsonl"
PROMPT_CHARS = 200
READ_BYTES = 8 << 20  # the newest 8 MB: weeks of turns
KEEP_BYTES = 2 * READ_BYTES  # past this the log starts over, the older half kept as turns.jsonl.1 (bounded on disk)


def first_line(text: str) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line[:PROMPT_CHARS] + ("…" if len(line) > PROMPT_CHARS else "")


def record(vault_root: Path, kind: str, session: str, turn: int, at: float | None = None, **fields: Any) -> None:
    """Append a line to the turn log (`at`: when it happened, if not now: a spooled event replayed later)."""
    path = vault_root / LOG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"kind": kind, "session": session, "turn": turn, "at": round(time.time() if at is None else at, 3), **fields},
                      ensure_ascii=False) + "\n"
    try:
        if path.stat().st_size > KEEP_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))  # one older generation, replaced each time
    except FileNotFoundError:
        pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError as exc:
        why = room.reason(exc)
        if why is None:
            raise
        raise DiskFullError(f"could not append to {path}: {why}") from None


_PARSED: dict[str, tuple[int, int, list[dict[str, Any]]]] = {}  # path -> (inode, bytes parsed, entries)


def read(vault_root: Path) -> list[dict[str, Any]]:
    """The log's entries, oldest first (the newest READ_BYTES of it). What was parsed before is kept and only
    lines appended since are parsed: at thousands of turns the JSON decoding was most of a page's time."""
    path = vault_root / LOG_NAME
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return []
    with handle:
        info = os.fstat(handle.fileno())
        inode, done, entries = _PARSED.get(str(path), (info.st_ino, 0, []))
        if inode != info.st_ino or done > info.st_size:
            done, entries = 0, []  # replaced or truncated: read afresh
        start = max(done, info.st_size - READ_BYTES)
        handle.seek(start)
        data = handle.read(info.st_size - start)
    complete = data.rfind(b"\n") + 1  # a line still being written waits for the next read
    lines = data[:complete].split(b"\n")
    if start > done:
        entries = []
        if start > 0:
            lines = lines[1:]  # the first may be cut
    entries = entries + [entry for entry in map(_entry, lines) if entry is not None]
    _PARSED[str(path)] = (info.st_ino, start + complete, entries)
    return entries


def _entry(raw: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    if isinstance(entry, dict) and isinstance(entry.get("session"), str) and isinstance(entry.get("turn"), int):
        return entry
    return None
