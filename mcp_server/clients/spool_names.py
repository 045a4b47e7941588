"""The session tag in a spool file's name: `<time_ns>-<pid>-s<32-bit FNV-1a of the session id>-<event>.json`.

A prompt checks the spool for earlier events of its session not applied yet (hooks_server._behind_earlier); it read
every earlier file to learn its session, 1-3 ms a prompt at the median and up to 9 ms in the slowest 5 % under nine
sessions (bench/results/s12-warm12.md). A name whose tag differs is another session's and is not read. The tag is a
filter, not an identity: two sessions may share one, so a file whose tag matches is still read and its session
compared, and a name without a tag (spooled by an older memdir) is read as before.

Imported by the hook process: it imports nothing (zlib's crc32 was a third of a millisecond to import).
"""

from __future__ import annotations


def session_tag(session_id: object) -> str:
    tag = 0x811C9DC5
    for byte in str(session_id).encode("utf-8", "surrogatepass"):
        tag = ((tag ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"s{tag:08x}"


def may_be_of(name: str, tag: str) -> bool:
    """Whether the spool name may hold an event of the session tagged `tag` (False only when its own tag differs)."""
    parts = name.split("-", 3)
    named = parts[2] if len(parts) == 4 else ""  # an older name's third part is its event: "stop.json"
    tagged = len(named) == 9 and named[0] == "s" and all(c in "0123456789abcdef" for c in named[1:])
    return not tagged or named == tag
