"""Questions a book answers, asked in other words: written before any search ran on them (issue 26).

The situation it measures: reference documents were ingested into the vault's books collection (a runbook,
a cheatsheet, a schema reference); each is indexed as one chunk per section. Later the developer asks
something one section answers, in their own words. The fresh-paraphrase set (bench/fresh_paraphrase_set.py)
asks only for notes, and its misses are mostly fresh notes pushed down by book sections; this set asks the
books, so that a rule for sections against notes is measured from both sides at once.

The vault is the fresh-paraphrase vault: the bundled example vault (.memories-example/, whose books/ holds
the three books asked about here) plus the coding development set plus the 66 fresh memories. The texts are
the project's own (the example vault is written for memdir).

A question: (text, book id, wanted sections, kind). A wanted section is the last part of a chunk's heading
path ("Stuck imports" for "Tidewater operations runbook > Incident response > Stuck imports"); a hit is the
book, shown with one of those sections. kind is "short" or "long" (a pasted paragraph or log around the ask).
No question shares a content word with the title, heading path and text of a section it wants, except where
`SHARED_ALLOWED` says which word and why (at most one word, and for few questions): bench/book_questions.py
checks that before it measures anything (`--check`).
"""

from __future__ import annotations

RUNBOOK, CHEATSHEET, SCHEMA = "m-d2e9f4a0", "p-3a9973c4", "m-81a5c6e3"

QUESTIONS: list[tuple] = [
    # the operations runbook
    ("is it fine to launch an extra instance of the clock that fires recurring jobs", RUNBOOK, ["Processes"], "short"),
    ("where do customers' original uploads end up being kept", RUNBOOK, ["Data stores"], "short"),
    ("why can't we count on per-connection settings surviving between queries", RUNBOOK, ["Data stores"], "short"),
    ("what are the stages between landing a pull request and the new code being live for users", RUNBOOK,
     ["Normal deploy"], "short"),
    ("what conventions does each schema-altering script have to obey", RUNBOOK, ["Database migrations"], "short"),
    ("the newest build is broken; how do I return to the one that worked before", RUNBOOK,
     ["Rolling back a deploy"], "short"),
    ("how do I peek at what the asynchronous consumers are busy doing right now", RUNBOOK,
     ["Queues and workers"], "short"),
    ("how do we stop two copies of one upload from being processed simultaneously", RUNBOOK, ["Locking"], "short"),
    ("a bank file upload broke halfway; how do I have it processed once more", RUNBOOK,
     ["Retrying a failed import"], "short"),
    ("totals disagree because a payment got recorded twice; what's the cleanup procedure", RUNBOOK,
     ["Duplicate ledger entries"], "short"),
    ("an upload has been in progress for an hour and never finishes", RUNBOOK, ["Stuck imports"], "short"),
    ("the in-memory store behind our task queue went offline; what do we need to do afterwards", RUNBOOK,
     ["Redis unavailable"], "short"),
    ("how far back can we recover if everything in prod gets wiped", RUNBOOK,
     ["Backups and restores", "Restoring from a backup"], "short"),
    ("how do I recover the accounting data from last night's saved copy", RUNBOOK,
     ["Restoring from a backup"], "short"),
    ("which credentials does each component need, and where can I see them", RUNBOOK,
     ["Secrets and configuration"], "short"),
    ("give me the handy one-liners for day-to-day ops", RUNBOOK, ["Useful commands"], "short"),
    ("how is the service split up: web tier, consumers and the clock", RUNBOOK, ["Processes"], "short"),
    ("what should I note down first when production misbehaves", RUNBOOK, ["Incident response"], "short"),
    # the Postgres cheatsheet
    ("which statements are executing at this moment, longest first", CHEATSHEET, ["What is running"], "short"),
    ("how do I find which backend connection is holding up another one", CHEATSHEET,
     ["Who is blocking whom"], "short"),
    ("how do I kill a runaway connection without restarting the server", CHEATSHEET,
     ["Cancel or terminate"], "short"),
    ("which requests to the database cost us most in aggregate, and how do I profile one", CHEATSHEET, ["Query performance"], "short"),
    ("what eats the most disk space, and how do I compact a swollen lookup structure without pausing inserts",
     CHEATSHEET, ["Maintenance"], "short"),
    ("handy tricks for the interactive terminal client", CHEATSHEET, ["psql habits"], "short"),
    # the ledger schema reference
    ("what fields describe one bookkeeping category like cash or a loan", SCHEMA, ["accounts"], "short"),
    ("how do we track how far along an uploaded document is and what went wrong", SCHEMA, ["imports"], "short"),
    ("where does each row of an uploaded export land once parsed", SCHEMA, ["statement_lines"], "short"),
    ("which table holds the header of each bookkeeping transaction", SCHEMA, ["journal_entries"], "short"),
    ("which sign means money going out versus coming in on a line of a booking", SCHEMA, ["postings"], "short"),
    ("where do we keep the daily exchange values from the European central bank", SCHEMA, ["fx_rates"], "short"),
    ("can a wallet's denomination be switched after it's opened", SCHEMA, ["Currency columns"], "short"),
    ("what rule guarantees that debits equal credits in every booking", SCHEMA, ["Invariants"], "short"),
    ("what database guard prevents a single upload from being brought in two times for the same customer", SCHEMA,
     ["Constraints and indexes"], "short"),
    ("which stages of the foreign-money rework are done already", SCHEMA, ["Applied"], "short"),
    ("what is left to do on the foreign-money rework", SCHEMA, ["Pending"], "short"),
    # long: a pasted log or paragraph around the ask
    ("ERROR 2026-11-24T09:12:44Z consumer-2 job=4411 sha=9f3a... still marked in progress after 45 min\n"
     "WARN  2026-11-24T09:13:02Z consumer-2 heartbeat missed\n"
     "the customer uploaded their monthly export this morning and it never completed. "
     "how do I find what is blocking it and free it?", RUNBOOK, ["Stuck imports"], "long"),
    ("We pushed at lunch and since then the API returns 500s on every page that lists transactions. The "
     "build from this morning was fine. I want customers on that earlier build again as quickly as possible, "
     "and I'm not sure whether the data-model change it shipped matters.",
     RUNBOOK, ["Rolling back a deploy"], "long"),
]

# question text -> (the one content word it shares with a wanted section, why it stays)
SHARED_ALLOWED: dict[str, tuple[str, str]] = {}
