"""A held-out book and questions on it, written before any tuning for issue 26's "never below plain cosine".

bench/book_questions_set.py asks the example vault's three books, and session 5's section rules were chosen on
it. This set asks a fourth book that no earlier set asks about and that no rule was tuned on: an internal
engineering handbook (bench/book_holdout_handbook.md, 23 sections: onboarding, code review, releases,
observability, on-call, customer data), written for this set in the style of a Notion export. bench/
book_questions.py --holdout adds it to the same vault (example vault + coding development set + 66 fresh notes),
where its sections compete with the notes on code review, deploys and secrets the vault already holds.

A question: (text, book id, wanted sections, kind), as in book_questions_set.py; no question shares a content
word with the title, heading path and text of a section it wants (checked by `--holdout --check`).
"""

from __future__ import annotations

from pathlib import Path

HANDBOOK_FILE = Path(__file__).resolve().parent / "book_holdout_handbook.md"
HANDBOOK = "m-5c07e1a9"

QUESTIONS: list[tuple] = [
    ("I just received my new computer; what do I execute to get the toolchain on it", HANDBOOK, ["Laptop setup"], "short"),
    ("how long should preparing a fresh developer machine last", HANDBOOK, ["Laptop setup"], "short"),
    ("how do I get permission to poke around on the live machines, and is that permanent", HANDBOOK,
     ["Access requests"], "short"),
    ("which tools am I let into on my first morning", HANDBOOK, ["Access requests"], "short"),
    ("what naming scheme do we follow for topic lines of development, and how should the notes in history read", HANDBOOK,
     ["Branches and commits"], "short"),
    ("how many sign-offs does a pull request touching the accounting core require", HANDBOOK, ["Code review"], "short"),
    ("what do we do about an automated check that passes or fails at random", HANDBOOK, ["Tests and CI"], "short"),
    ("how do we hide unfinished functionality from users until it is ready", HANDBOOK, ["Feature flags"], "short"),
    ("when do we clean up toggles that are switched on everywhere", HANDBOOK, ["Feature flags"], "short"),
    ("who approves the bot's weekly library upgrade PRs", HANDBOOK, ["Dependency updates"], "short"),
    ("at what hours does new code go out to production", HANDBOOK, ["Release train"], "short"),
    ("are there dates when shipping is forbidden", HANDBOOK, ["Release train"], "short"),
    ("an urgent bug can't hold off until the scheduled ship; what is the procedure", HANDBOOK, ["Hotfixes"], "short"),
    ("how are our builds numbered, and where do I describe what my PR brings for users", HANDBOOK,
     ["Changelog and versioning"], "short"),
    ("what personal details must not be written to our output streams", HANDBOOK, ["Logging"], "short"),
    ("how long do we retain application output", HANDBOOK, ["Logging"], "short"),
    ("which graphs should I look at before anything else when something seems slow", HANDBOOK, ["Metrics and dashboards"], "short"),
    ("how can I see one incoming call's path through to the asynchronous work it triggered, span by span", HANDBOOK,
     ["Tracing"], "short"),
    ("when does the duty shift change hands and what do I pass on", HANDBOOK, ["Rotation and handover"], "short"),
    ("what happens if the person who gets woken up doesn't respond", HANDBOOK, ["Paging and escalation"], "short"),
    ("how do we classify how bad an outage is", HANDBOOK, ["Severity levels"], "short"),
    ("after a major outage, what write-up is expected and by when", HANDBOOK, ["Postmortems"], "short"),
    ("how does a problem raised by a client reach us developers, and how fast must we react", HANDBOOK,
     ["Support tiers"], "short"),
    ("someone paid too much because our code misbehaved; am I allowed to give them money back myself", HANDBOOK,
     ["Refunds and billing disputes"], "short"),
    ("a company asked us to forget everything about them under European privacy rules; how is that done", HANDBOOK,
     ["Deleting a customer's data"], "short"),
    ("I found a vulnerability; who do I tell, and where", HANDBOOK, ["Reporting a security problem"], "short"),
    ("a colleague is quitting; what has to happen with their accounts", HANDBOOK, ["Offboarding"], "short"),
    ("Before I head home. My edit to the rounding of postings got a thumbs-up from Priya an hour ago and "
     "the pipeline is green. Is a single sign-off enough for me to press merge, or must somebody else look at it too?",
     HANDBOOK, ["Code review"], "long"),
    ("Grafana just went red: HTTP 500s on /api/statements for every org since 14:05, no sign of recovery, and our "
     "biggest account says they cannot see balances. I'm the person holding the phone this week. How serious do we "
     "label this and what are we obliged to put out publicly?", HANDBOOK, ["Severity levels"], "long"),
]

# question text -> (the one content word it shares with a wanted section, why it stays)
SHARED_ALLOWED: dict[str, tuple[str, str]] = {}
