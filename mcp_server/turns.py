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
from typing import Any, Iterator

LOG_NAME = ".memdir/turns.jsonl"
PROMPT_CHARS = 200
READ_BYTES = 8 << 20  # the newest 8 MB: weeks of turns


def first_line(text: str) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line[:PROMPT_CHARS] + ("…" if len(line) > PROMPT_CHARS else "")


def record(vault_root: Path, kind: str, session: str, turn: int, **fields: Any) -> None:
    path = vault_root / LOG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"kind": kind, "session": session, "turn": turn, "at": round(time.time(), 3), **fields},
                      ensure_ascii=False) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def read(vault_root: Path) -> Iterator[dict[str, Any]]:
    path = vault_root / LOG_NAME
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - READ_BYTES))
            data = handle.read()
    except FileNotFoundError:
        return
    lines = data.split(b"\n")
    if size > READ_BYTES:
        lines = lines[1:]  # the first may be cut
    for raw in lines:
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("session"), str) and isinstance(entry.get("turn"), int):
            yield entry
