"""The parts of a long prompt that say what it is about: its error lines and the user's own sentences.

A prompt the assistant receives is often a paste (a traceback, a log tail, CI output, a diff) and a line of
question. Embedded whole, MiniLM reads its first 256 word pieces, most of them frames, timestamps and paths
that several notes share, and the search reads its first `max_query_chars` characters: in a long paste the
exception line (last in a Python traceback) and the user's question (typed under the paste) are what falls
off. This picks them out without a model, by the shape of the lines:

- an error line names an exception or error (`stripe.error.SignatureVerificationError: ...`,
  `ERR_PNPM_OUTDATED_LOCKFILE`, `FAILED tests/...`, `Error: ...`, `OOMKilled`); the last two distinct ones;
- a sentence of the user's is prose: not indented, no assignment, no log level or timestamp in front, four words
  or more, few symbols (code and log lines are dense with them); the last three.

The search embeds their text as a second query and pools its vector with the whole prompt's, when the paste names a
failure; a paste longer than a query is read is asked by them alone (indexer/search.py).
"""

from __future__ import annotations

import re

# An exception or error named in a line: a CamelCase name ending in Error/Exception/..., an ERR_ code, a failed
# test, a FATAL, a line that starts with "error:", or the few well-known kill/refusal words of logs and browsers.
_ERROR = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Violation|Timeout|Warning)\b"
    r"|\bERR_[A-Z0-9_]+\b|\bFAILED\b|\bFATAL\b|^\s*(?:E\s+)?(?:error|Error|ERROR)\b|\bOOMKilled\b|\bRefused to\b"
    r"|\bblocked by CORS\b")
# Words one of which every match of _ERROR holds: a substring test per line first (a 10 kB paste's 130 lines through
# the regex alone took 20 ms on a loaded machine; most lines hold none of these).
_FAILURE_WORDS = ("Error", "Exception", "Violation", "Timeout", "Warning", "ERR_", "FAILED", "FATAL", "error", "ERROR",
                  "OOMKilled", "Refused to", "blocked by CORS")
# A log line's prefix: a timestamp, a bracketed time or level, a level word, a shell prompt.
_LOG_PREFIX = re.compile(r"^\s*(?:\[?\d{4}-\d\d-\d\d[T ]|\[\d|\$ |#\d|\w*(?:INFO|DEBUG|WARN|WARNING|TRACE)\b|INFO\b)")
_WORDS = re.compile(r"[A-Za-z][A-Za-z']+")
_SYMBOLS = re.compile(r"[^\w\s,.?!'()-]")
ERROR_LINES = 2  # a traceback's own line and the one that caused it; more repeat the same failure
USER_LINES = 3
MAX_LINE_CHARS = 300  # a minified line or a JSON blob is not a sentence


def salient_text(prompt: str, failure_only: bool = True) -> str:
    """The prompt's error lines and its user's sentences, one a line, in the prompt's order; "" when they are the
    whole prompt (nothing to set apart), when there are none, or (`failure_only`) when it names no failure.

    A paste without a failure (a diff, a code block, a coverage table) is what it is about: its code says more
    than the user's line under it ("Maya says we don't page like that" under a diff using offset and limit), and
    read by that line alone the answer fell from 5th to 10th (bench/results/search.md, issue 26 session 8)."""
    raw = [line.rstrip() for line in prompt.splitlines() if line.strip()]
    lines = [line.strip() for line in raw]
    errors = _last_distinct([n for n, line in enumerate(lines) if _names_failure(line)], lines, ERROR_LINES)
    user = _last_distinct([n for n, line in enumerate(raw) if n not in errors and _is_prose(line)], lines, USER_LINES)
    chosen = sorted(errors | user)
    if not chosen or len(chosen) == len(lines) or (failure_only and not errors):
        return ""
    return "\n".join(lines[n][:MAX_LINE_CHARS] for n in chosen)


def _names_failure(line: str) -> bool:
    return any(word in line for word in _FAILURE_WORDS) and _ERROR.search(line) is not None


def _is_prose(line: str) -> bool:
    """A sentence someone typed, not a line of code (indented, an assignment), of log or of output."""
    if len(line) > MAX_LINE_CHARS or line[:1].isspace() or " = " in line or _LOG_PREFIX.match(line) \
            or line.startswith(("Traceback ", "File ", "at ", "```", "+", "-", "@@")):
        return False
    if len(_WORDS.findall(line)) < 4:
        return False
    return len(_SYMBOLS.findall(line)) <= max(1, len(line) // 40)


def _last_distinct(positions: list[int], lines: list[str], count: int) -> set[int]:
    """The last `count` of these lines whose text differs (a log repeats one failure a thousand times)."""
    seen: set[str] = set()
    kept: set[int] = set()
    for n in reversed(positions):
        if lines[n] in seen:
            continue
        seen.add(lines[n])
        kept.add(n)
        if len(kept) == count:
            break
    return kept
