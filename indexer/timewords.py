"""Time words in a query: the window they name, and whether the query asks for anything besides a time.

"what did we work on yesterday" or "where did we leave off" name no topic: relevance ranking has
nothing to match in them and used to return nothing at all. Such a query is answered as a timeline
of the window its words name (or of the explicit window the caller gave), newest first.

A query that names a topic and a time ("the redis problem from yesterday") is searched as usual,
and memories written inside the window rank higher (a boost, not a filter): a time word in a
question about the past - an old incident, a conversation from 2023 - is relative to when that
happened, not to now, and a filter would hide exactly the answer.

Days are calendar days in the local time zone of the process (the user's machine): "yesterday"
is yesterday 00:00 to today 00:00, "last week" is Monday to Monday, "in October" the most recent
October.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH_ABBREVIATIONS = {m[:3]: n for n, m in enumerate(MONTHS, 1)} | {"sept": 9}
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "a": 1, "an": 1,
            "couple": 2, "few": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 31}
# Words that ask where one's own work stands: the last few days' memories answer them, in a timeline or a boost.
_ACTIVITY = r"\b(left off|leave off)\b"
# The present tense: "what am I in the middle of" asks for the last few days' memories, but "what are the workers
# doing right now" asks how to see the present state, which no memory's date says (bench/results/search.md, issue 26
# session 8: a note written that day beat the runbook's section on "right now" alone).
_PRESENT = r"\b(right now|at the moment|currently|these days|so far|in the middle of)\b"
_COUNT = r"(\d{1,3}|one|two|three|four|five|six|seven|a|an|a couple of|a few)"


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime  # exclusive
    words: str  # what in the query named it, for the caller to show

    def holds(self, moment: datetime | None) -> bool:
        return moment is not None and self.start <= moment < self.end


def _count(text: str) -> int:
    text = text.replace(" of", "").split()[-1]
    return int(text) if text.isdigit() else _NUMBERS[text]


def _midnight(moment: datetime) -> datetime:
    return datetime.combine(moment.date(), time.min, tzinfo=moment.tzinfo)


def _month_start(year: int, month: int, tz) -> datetime:
    return datetime(year + (month - 1) // 12, (month - 1) % 12 + 1, 1, tzinfo=tz)


def _windows(text: str, now: datetime, tz: tzinfo | None, present: bool = True) -> list[tuple[datetime, datetime, str]]:
    """Every (start, end, words) the text names, in the time zone `tz` (None: the machine's); the present
    tense's words ("right now", "currently") only when `present`."""
    local = now.astimezone(tz)
    today = _midnight(local)
    end = local + timedelta(seconds=1)
    day = timedelta(days=1)
    monday = today - timedelta(days=today.weekday())
    found: list[tuple[datetime, datetime, str]] = []

    def add(match: re.Match | None, start: datetime, stop: datetime) -> None:
        if match:
            found.append((start, stop, match.group(0)))

    text = _calendar_dates(text, local, found)  # "in January 2022" names that January, not the latest one
    patterns = [(_ACTIVITY, 3), (r"\b(recently|lately|recent|latest|last few days)\b", 14)]
    if present:
        patterns.append((_PRESENT, 3))
    for pattern, days in patterns:
        add(re.search(pattern, text), local - timedelta(days=days), end)
    add(re.search(r"\b(today|this morning|this afternoon|tonight|earlier today)\b", text), today, end)
    add(re.search(r"(?<!before )\byesterday\b", text), today - day, today)
    add(re.search(r"\bday before yesterday\b", text), today - 2 * day, today - day)
    for match in re.finditer(rf"\b{_COUNT}\s+days?\s+ago\b", text):
        n = _count(match.group(1))
        add(match, today - n * day, today - (n - 1) * day)
    for match in re.finditer(rf"\b{_COUNT}\s+weeks?\s+ago\b", text):
        n = _count(match.group(1))
        add(match, monday - 7 * n * day, monday - 7 * (n - 1) * day)
    add(re.search(r"\b(the other day|a few days ago|a couple of days ago|few days back)\b", text),
        today - 6 * day, today)
    add(re.search(r"\b(this|the past) week\b", text), monday, end)
    add(re.search(r"\blast week\b", text), monday - 7 * day, monday)
    add(re.search(r"\bthis month\b", text), _month_start(local.year, local.month, local.tzinfo), end)
    add(re.search(r"\blast month\b", text), _month_start(local.year, local.month - 1, local.tzinfo),
        _month_start(local.year, local.month, local.tzinfo))
    for match in re.finditer(rf"\b(?:last|past|previous)\s+{_COUNT}\s+(day|week|month)s?\b", text):
        add(match, local - timedelta(days=_count(match.group(1)) * _UNIT_DAYS[match.group(2)]), end)
    for match in re.finditer(r"\b(since|on|last)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", text):
        back = (today.weekday() - WEEKDAYS.index(match.group(2))) % 7
        if match.group(1) == "last" and back == 0:
            back = 7
        start = today - back * day
        add(match, start, end if match.group(1) == "since" else start + day)
    for match in re.finditer(r"\b(in|since|during)\s+([a-z]+)\b", text):
        name = match.group(2)
        month = MONTHS.index(name) + 1 if name in MONTHS else _MONTH_ABBREVIATIONS.get(name) if len(name) in (3, 4) else None
        if month is None or (name == "may" and match.group(1) != "in"):
            continue
        year = local.year if month <= local.month else local.year - 1
        start = _month_start(year, month, local.tzinfo)
        add(match, start, end if match.group(1) == "since" else _month_start(year, month + 1, local.tzinfo))
    return found


_MONTH_NAME = "|".join(MONTHS) + "|" + "|".join(sorted(_MONTH_ABBREVIATIONS))
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# Dates with a year, most precise first: each is masked once read, so "1 February, 2023" is not also "February 2023".
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+({_MONTH_NAME})\.?,?\s*{_YEAR}\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH_NAME})\.?\s+{_DAY},?\s*{_YEAR}\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH_NAME})\.?,?\s+{_YEAR}\b")
_IN_YEAR = re.compile(rf"\b(?:in|during|since|of)\s+{_YEAR}\b")


def _month_number(name: str) -> int:
    return MONTHS.index(name) + 1 if name in MONTHS else _MONTH_ABBREVIATIONS[name]


def _calendar_dates(text: str, local: datetime, found: list[tuple[datetime, datetime, str]]) -> str:
    """Add the windows of the dates the text writes out with their year ("on 9 November, 2022": that day; "in
    January 2022": that month; "in 2023": that year; after "since", from then to now; after "before", the week up
    to and including the day) and return the text with them blanked out. A month or day named without a year is
    left to the relative words (the most recent such month)."""
    tz = local.tzinfo
    end = local + timedelta(seconds=1)

    def add(match: re.Match, start: datetime, stop: datetime) -> None:
        before = text[max(0, match.start() - 7):match.start()]
        if re.search(r"\bsince\s+$", before):
            stop = end
        elif re.search(r"\bbefore\s+$", before):
            start = stop - timedelta(days=8)
        found.append((start, stop, match.group(0)))

    for pattern, read in ((_DAY_MONTH_YEAR, lambda m: (int(m[1]), _month_number(m[2]), int(m[3]))),
                          (_MONTH_DAY_YEAR, lambda m: (int(m[2]), _month_number(m[1]), int(m[3])))):
        for match in pattern.finditer(text):
            day, month, year = read(match)
            try:
                start = datetime(year, month, day, tzinfo=tz)
            except ValueError:  # "31 February": no such day, no window
                continue
            add(match, start, start + timedelta(days=1))
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    for match in _MONTH_YEAR.finditer(text):
        month, year = _month_number(match[1]), int(match[2])
        add(match, _month_start(year, month, tz), _month_start(year, month + 1, tz))
    text = _MONTH_YEAR.sub(lambda m: " " * len(m.group(0)), text)
    for match in _IN_YEAR.finditer(text):
        year = int(match[1])
        add(match, datetime(year, 1, 1, tzinfo=tz), datetime(year + 1, 1, 1, tzinfo=tz))
    return _IN_YEAR.sub(lambda m: " " * len(m.group(0)), text)


def window(query: str, now: datetime, tz: tzinfo | None = None, present: bool = True) -> Window | None:
    """The time window the query's own words name (the union when they name several), or None. `present` False:
    the present tense names none (a question about a topic; see _PRESENT)."""
    found = _windows(query.lower(), now, tz, present)
    if not found:
        return None
    return Window(min(f[0] for f in found), max(f[1] for f in found), ", ".join(sorted({f[2] for f in found})))


def window_days(query: str, now: datetime, tz: tzinfo | None = None) -> float | None:
    """How many days back from now the query's window begins, or None when it names no time."""
    named = window(query, now, tz)
    return None if named is None else (now - named.start).total_seconds() / 86400


# Words that ask for activity without naming a subject. A query made only of these (and numbers,
# weekdays, months and type words) is vague: it asks "what happened", not "what do we know about X".
_GENERIC = frozenset("""
a about after ago all am an and any anything are at back be been before being between can could couple day
days did do does doing done during else everything far few for from get give going got had happen happened
happening has have how i i'm in is it last latest lately leave left list me memories memory month months
middle moment my new now of off on or other our over past pick picked previous recap recent recently remind
resume right show since so some stuff summarise summarize summary tell that the these things this those
to today tonight up us was we we've week weeks were what what's when where which while who with work
worked working yesterday you your yet morning afternoon currently changed change changes progress update
updates status touched continue again make made
""".split()) | frozenset(WEEKDAYS) | frozenset(MONTHS) | frozenset(_MONTH_ABBREVIATIONS)

# A vague query may still name the kind of memory it wants: "what did we decide this week".
TYPE_WORDS = {
    "decision": "decision", "decisions": "decision", "decide": "decision", "decided": "decision",
    "learning": "learning", "learnings": "learning", "learned": "learning", "learnt": "learning",
    "lesson": "learning", "lessons": "learning",
    "plan": "plan", "plans": "plan", "todo": "plan", "todos": "plan", "next": "plan",
    "preference": "preference", "preferences": "preference",
    "constraint": "constraint", "constraints": "constraint", "rule": "constraint", "rules": "constraint",
    "observation": "observation", "observations": "observation", "noticed": "observation",
    "journal": "journal", "session": "journal", "sessions": "journal",
}


def _words(query: str) -> list[str]:
    return _WORD.findall(query.lower())


def is_vague(query: str) -> bool:
    """True when the query names no subject, only activity, time and kinds of memory ("what did we work on")."""
    words = _words(query)
    return bool(words) and all(w in _GENERIC or w in TYPE_WORDS or w in _NUMBERS or w.isdigit() for w in words)


def vague_types(query: str) -> tuple[str, ...]:
    """The memory types a vague query names ("what did we decide" → decision), or () for all."""
    return tuple(sorted({TYPE_WORDS[w] for w in _words(query) if w in TYPE_WORDS}))
