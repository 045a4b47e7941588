"""Turns not worth remembering: acknowledgements ("thanks, that worked") and turns spent scoring.

Stored, they come back later as "highly relevant" context for the next "thanks", and they dilute
the working collection. A prompt made only of acknowledgement words, answered briefly, carries
nothing to recall; a short answer that only reports scoring memories is bookkeeping.
"""

from __future__ import annotations

import re

ACKNOWLEDGEMENT_WORDS = frozenset("""
    thanks thank thx ty you u cheers ok okay k kk great perfect cool nice good awesome excellent brilliant
    wonderful amazing fine sure yes yep yeah yup right got it that this worked works working fixed done
    sounds looks lgtm all set now much very so really indeed appreciated appreciate exactly correct
    the trick did helped helpful makes sense understood noted alright a lot lol haha wow well
    """.split())
WORD = re.compile(r"[a-z]+")
SCORING_REPORT = re.compile(r"\bscor(e|ed|ing)\b.*\bmemor(y|ies)\b|\bscore_memories\b", re.IGNORECASE | re.DOTALL)
MAX_SHORT_ANSWER_CHARS = 240  # a longer answer says more than "glad it helped" or "I scored them"
MAX_SCORING_PROMPT_WORDS = 8


def is_acknowledgement(prompt: str) -> bool:
    """A prompt whose every word is a thanks, an okay or a "that worked": nothing in it to recall."""
    words = WORD.findall(prompt.lower().replace("'", ""))
    return bool(words) and all(word in ACKNOWLEDGEMENT_WORDS for word in words)


def is_trivial_exchange(prompt: str, answer: str) -> bool:
    """Whether an exchange is an acknowledgement or a scoring-only turn (then it is not captured). Only
    with a short answer: "ok" answered by a whole plan is the go-ahead for real work."""
    answer = answer.strip()
    if len(answer) > MAX_SHORT_ANSWER_CHARS:
        return False
    if is_acknowledgement(prompt):
        return True
    return len(WORD.findall(prompt.lower())) <= MAX_SCORING_PROMPT_WORDS and bool(SCORING_REPORT.search(answer))
