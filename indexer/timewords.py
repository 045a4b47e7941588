"""Time words in a query, and whether a query asks for anything besides a time.

"what did we work on yesterday" or "what am I working on right now" name no topic: relevance
ranking has nothing to match and used to return nothing at all. Such a query is answered as a
timeline of the window its words name (or of the explicit window the caller gave), newest first.
A query that names a topic ("the kafka bug from last week") is searched as usual: its time words
never filter, because a time word in a question about the past (a LoCoMo conversation, an old
incident) is relative to when it happened, not to now.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

# Generous "since" windows: a timeline lists the window newest first, so a day too many costs little,
# and a local evening that is already tomorrow in UTC must not fall out of "today".
_FIXED = (
    (re.compile(r"\b(right now|at the moment|currently|these days)\b"), 3),
    (re.compile(r"\btoday\b|\bthis morning\b|\btonight\b"), 1.5),
    (re.compile(r"\byesterday\b"), 2.5),
    (re.compile(r"\b(this|the past) week\b"), 7),
    (re.compile(r"\blast week\b"), 14),
    (re.compile(r"\b(this|the past) month\b"), 31),
    (re.compile(r"\blast month\b"), 62),
    (re.compile(r"\b(recently|lately|recent|latest|so far)\b"), 14),
)
_COUNTED = re.compile(r"\b(?:last|past|previous)\s+(\d{1,3})\s+(day|week|month)s?\b")
_UNIT_DAYS = {"day": 1, "week": 7, "month": 31}

# Words that ask for activity without naming a subject. A query made only of these (and numbers)
# is vague: it asks "what happened", not "what do we know about X".
_GENERIC = frozenset("""
a about ago all am an and any anything are at be been being can could day days did do does doing done
during else everything far few for from get give going got had happen happened happening has have how
i i'm in is it last latest lately list me memories memory month months moment my new now of on or our
over past previous recent recently remind right show since so some stuff summarise summarize summary
tell that the these things this those to today tonight up us was we we've week weeks were what what's
when which while who with work worked working yesterday you your yet morning currently changed change
changes progress update updates status touched recap
""".split())


def window_days(query: str) -> float | None:
    """How many days back the query's own time words reach, or None when it names no time."""
    text = query.lower()
    counted = [int(n) * _UNIT_DAYS[unit] for n, unit in _COUNTED.findall(text) if int(n) > 0]
    fixed = [days for pattern, days in _FIXED if pattern.search(text)]
    found = counted + fixed
    return float(max(found)) if found else None


def window_start(query: str, now: datetime) -> datetime | None:
    days = window_days(query)
    return now - timedelta(days=days) if days is not None else None


def is_vague(query: str) -> bool:
    """True when the query names no subject, only activity and time ("what did we work on")."""
    words = _WORD.findall(query.lower())
    return bool(words) and all(w in _GENERIC or w.isdigit() for w in words)
