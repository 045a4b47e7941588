"""Fresh memories asked in other words, through the running server: the fourth hold-out set of issue 26.

Written in session 10 by a helper who had not looked at any ranking result on it, and committed before anything
ran on it. Nobody tunes on it: its use is to tell whether a ranking change tuned on the three other fresh sets
(bench/fresh_paraphrase_set.py, bench/served_fresh_set.py, bench/served_notes_set.py) still holds on a set it has
never seen. `python bench/served_fresh.py --set holdout --example-only` measures it the way the outside measure
does. A memory or question is changed after a result only to fix a rule the checker enforces, and the write-up
(bench/results/s10-holdout10.md) says so.

A fourth author on purpose: these memories read as an assistant wrote them about the developer it works with
(Dana, the maintainer of the bundled example vault's "tidewater" ledger) and her team: decisions, gotchas, how-tos,
facts about people and services, memory-bank style project files (a tech context, a progress page) and six longer
notes of 150-300 words. Half the topics sit next to what the example vault already holds (FX rates, Celery,
Fly.io, Postgres, backups, migrations, statement parsing, the ledger), so its books and older notes compete as
they would in real use; the rest are new. No topic of the three other fresh sets is repeated. The questions are
what the developer would type into the assistant later, in her own words.

A memory: (key, collection, type, title, content); a question: (text, wanted keys). Every memory is wanted by
exactly one question, and no question shares a content word (after stemming and stop words) with a memory it
wants: bench/served_fresh.py checks both before it measures.
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    ("h01", "memory_bank", "decision", "FX revaluation runs on the last business day at 17:00 London",
     "Dana decided the month-end `fx.revalue_balances` task runs at 17:00 Europe/London on the last business day, "
     "after that day's ECB fix is stored, rather than at midnight on the 1st. Its postings are dated the period end."),
    ("h02", "patterns", "learning", "CAMT.053 amounts are unsigned; CdtDbtInd carries the direction",
     "In CAMT.053 XML every `<Amt>` is positive. Whether money came in or went out is in the sibling `<CdtDbtInd>` "
     "(CRDT or DBIT). The first parser ignored it and booked every refund as income; `parse_entry` now negates "
     "DBIT amounts before building postings."),
    ("h03", "history", "learning", "Long imports starved short tasks: prefetch multiplier 1",
     "User asked why small reconciliation tasks sat queued for minutes while a worker was busy. Assistant: each "
     "worker process prefetched 4 messages (the default `worker_prefetch_multiplier`), so short tasks waited behind "
     "a 20-minute CAMT import already reserved by the same process. Fix: `worker_prefetch_multiplier = 1` and "
     "`task_acks_late = True` for the imports queue."),
    ("h04", "memory_bank", "fact", "Production runs in Fly's lhr region, with a replica in ams",
     "All tidewater Machines run in `lhr`. The Postgres cluster has its primary in lhr and a read replica in `ams`, "
     "used only by the reporting role; nothing writes there."),
    ("h05", "patterns", "learning", "CREATE INDEX CONCURRENTLY needs an autocommit block in Alembic",
     "`CREATE INDEX CONCURRENTLY` cannot run inside a transaction, and Alembic wraps each revision in one, so the "
     "migration failed with `ActiveSqlTransaction`. Wrap it in `with op.get_context().autocommit_block():` and keep "
     "that revision to the one statement."),
    ("h06", "memory_bank", "fact", "Tomasz Nowak owns the React dashboard",
     "Tomasz Nowak is the contractor who built and maintains the React dashboard (`web/`). He works Tuesday to "
     "Thursday, Warsaw time (CET). Ask him before changing any API response the dashboard reads; he prefers a "
     "GitHub issue over Slack."),
    ("h07", "memory_bank", "decision", "On TARGET holidays the previous ECB fix is used",
     "The ECB publishes no reference rates on TARGET holidays and weekends. Conversions on those days use the most "
     "recent earlier fix, and each posting stores which date's rate it used (`fx_rates.as_of`)."),
    ("h08", "memory_bank", "constraint", "Redis must use maxmemory-policy noeviction",
     "The Redis instance is Celery's broker, so `maxmemory-policy` must be `noeviction`: under `allkeys-lru` Redis "
     "silently dropped queued messages when memory ran out. Running out should fail loudly instead."),
    ("h09", "memory_bank", "constraint", "Commits to main must be signed",
     "Branch protection on main requires verified signatures. Dana signs with her SSH key (`gpg.format = ssh`); "
     "set up signing before your first PR or GitHub refuses the merge."),
    ("h10", "history", "learning", "asyncpg behind PgBouncer: turn off the statement cache",
     "After connections moved through PgBouncer in transaction mode, asyncpg failed with `prepared statement "
     "\"__asyncpg_stmt_1__\" already exists`. Prepared statements don't survive a pooler that swaps server "
     "connections per transaction; `connect_args={\"statement_cache_size\": 0}` on the engine fixed it."),
    ("h11", "memory_bank", "fact", "Opening balances go against equity account 3900",
     "When a client joins, their opening balances are one journal entry dated the day before the first statement, "
     "with the other side on `3900 Opening balance equity`. The accountant clears 3900 at year end."),
    ("h12", "memory_bank", "decision", "WAL archiving for point-in-time recovery",
     "Since 24 Nov the WAL of tidewater-db is archived with wal-g to the Tigris bucket `tw-wal`, kept 14 days, so "
     "we can recover to any minute instead of only to the nightly dump."),
    ("h13", "memory_bank", "preference", "Reports are hand-written SQL in text()",
     "Dana wants reporting queries as plain SQL in `sqlalchemy.text()`, kept in `src/tidewater/reports/sql/`, not "
     "ORM expressions: she reads and EXPLAINs them in psql directly."),
    ("h14", "history", "learning", "A split card fee lost a penny: allocate the rounding",
     "User asked why two clients' trial balances were off by exactly £0.01 after the card-fee split shipped.\n"
     "Assistant traced it: a card-processor fee line is split across the cost centres a client chooses, by "
     "percentage. The split rounded each share to pennies on its own (`round(fee * pct, 2)`), so £10.00 split a "
     "third each became 3.33 + 3.33 + 3.33 and a penny vanished. The deferred balance trigger didn't catch it "
     "because the fee posting itself carried 9.99, not 10.00.\n"
     "Fix (PR #431): allocate with the largest-remainder method. Compute every share unrounded, floor each to the "
     "currency's minor unit, then hand the leftover pennies one by one to the shares with the biggest remainders, "
     "ties to the first cost centre. The shares now always add up to the original line, and a property test checks "
     "that for random amounts and 1 to 12 shares.\n"
     "Cleanup: a one-off correction entry per affected client, dated the day of the original line, with a memo "
     "pointing to the PR. The accountant at Harbour & Co was told by email.\n"
     "Worth remembering: any time an amount is split, the rounding has to be allocated, never done per share."),
    ("h15", "memory_bank", "context", "Tech context: the web dashboard",
     "## Stack\nReact 18 + TypeScript 5, built with Vite, served as static files by the FastAPI app under `/app`. "
     "Styling is Tailwind; component primitives come from Radix. Data fetching goes through TanStack Query against "
     "the `/api/v1` endpoints, typed from `openapi-typescript` output (`npm run gen:api`).\n"
     "## Layout\n`web/src/pages/` has one folder per route, `web/src/components/` the shared pieces, and "
     "`web/src/lib/api.ts` is the only place that calls fetch.\n"
     "## Conventions\n- Money arrives as strings and is formatted with `Intl.NumberFormat` in the client's locale; "
     "never parse it to a JS number for arithmetic.\n- Tables with more than 200 rows are virtualised "
     "(`@tanstack/react-virtual`).\n- Auth is the same session cookie as the API; no tokens in localStorage.\n"
     "## Testing\nVitest for units, Playwright for three smoke flows (log in, upload a statement, reconcile a "
     "line), run in CI on every PR touching `web/`.\n"
     "## Owner\nTomasz Nowak; Dana reviews API-facing changes only."),
    ("h16", "patterns", "learning", "How to add a new statement format",
     "Steps that worked for MT940 in November:\n"
     "1. Put two anonymised sample files in `tests/fixtures/statements/<format>/`, one ordinary month and one with "
     "a reversal.\n"
     "2. Write a parser in `src/tidewater/ingest/parsers/<format>.py` that yields `StatementLine` objects; never "
     "construct postings there. Amounts via `Decimal(text)`.\n"
     "3. Register it in `PARSERS` with a sniffing function that looks at the first 2 KB only (uploads are streamed, "
     "see the 50 MB limit).\n"
     "4. Add the MIME type and file extension to the upload allow-list in `api/uploads.py`.\n"
     "5. Golden test: parse each fixture and compare with a checked-in JSON of expected lines (`uv run pytest "
     "--update-golden` rewrites them; review the diff).\n"
     "6. Import one real file on staging and compare the closing balance with the bank's.\n"
     "Gotchas: MT940 `:61:` lines put the debit/credit mark before the amount and may use a comma as the decimal "
     "separator; the `:86:` narrative wraps across lines.\n"
     "7. Mention the new parser in the changelog and in the runbook, so whoever is on call knows the new sniffing "
     "rule exists."),
    ("h17", "memory_bank", "context", "Progress: ledger v2",
     "## What works\n- Steps 1 and 2 of the ledger v2 plan are on production: currency columns, fx_rates, the "
     "composite FK validated.\n- Dual-write (step 3) merged on 24 Nov after PR #418; every new import writes "
     "`postings.currency`.\n- The ECB fetch runs daily on production; 41 days of rates stored.\n"
     "## What's left\n- Step 4, the read path: reports still assume GBP everywhere.\n- Revaluation needs its "
     "advisory lock and natural key before it can run on production (the staging duplicates).\n- Backfill of "
     "currency on pre-v2 postings: all GBP, one UPDATE per 50k rows in a beat task, not started.\n"
     "## Known issues\n- Two clients have EUR accounts opened as GBP by mistake; fix by hand before the backfill.\n"
     "- The trial balance page times out for clients with more than 1 M postings.\n"
     "## Current status\nAbout 60 % of the December objective. The risk is step 4; Dana estimates two weeks."),
    ("h18", "memory_bank", "fact", "Harbour & Co, the accountants",
     "Harbour & Co is the accounting firm that does year-end accounts for 26 of our 40 clients.\n"
     "- Aisha Rahman is the partner. She signs off the chart-of-accounts mapping for new clients and is the one to "
     "ask about VAT treatment.\n"
     "- Ben Carter is her junior. He pulls the monthly trial balance exports on the 3rd working day and reports "
     "discrepancies by email to support@.\n"
     "- They work from the CSV export, not the API; a column rename breaks their macros, so any change to the "
     "export goes to Aisha two weeks ahead.\n"
     "- Monthly call: first Wednesday, 10:00, Dana plus whoever worked on ingestion that month.\n"
     "- They use Xero for their own books, which is why the export mimics Xero's journal import layout.\n"
     "- Their invoices go to Dana, who forwards them to the clients; we never pay them ourselves. They prefer a "
     "shared spreadsheet for open queries over long email threads."),
    ("h19", "patterns", "learning", "zoneinfo needs the tzdata package on slim images",
     "`ZoneInfo(\"Europe/London\")` raised `ZoneInfoNotFoundError` in the container but not on laptops: "
     "python:3.11-slim has no system zone database. Added the `tzdata` package to the dependencies so the IANA data "
     "ships with the wheels."),
    ("h20", "memory_bank", "decision", "Idempotency-Key header on POST /imports",
     "Clients that call `POST /api/v1/imports` may send an `Idempotency-Key` header. The first response is stored for "
     "24 hours under that key; a repeat with the same key returns it instead of creating a second import."),
    ("h21", "memory_bank", "constraint", "Public API limit: 60 requests a minute per key",
     "The public API allows 60 requests per minute per API key (slowapi, keyed on the key's id, counted in Redis). "
     "Over the limit it answers 429 with `Retry-After`. Internal dashboard calls are exempt."),
    ("h22", "working", "observation", "OFX dates from Metro carry a bracketed offset",
     "Some OFX 2 files from Metro give `DTPOSTED` as `20261103120000.000[-5:EST]`. `datetime.strptime` chokes on "
     "the bracket; strip it and read the offset, then keep only the date, per the booking-date rule."),
    ("h23", "memory_bank", "fact", "Chart of accounts numbering",
     "Account codes follow one scheme for every client: 1xxx assets, 2xxx liabilities, 3xxx equity, 4xxx income, "
     "5xxx-8xxx expenses, 9999 suspense (lines nobody has matched yet)."),
    ("h24", "memory_bank", "decision", "No FastAPI BackgroundTasks for ledger writes",
     "Anything that writes postings runs as a Celery task, never in FastAPI `BackgroundTasks`: those die with the "
     "web Machine on a deploy and leave no trace to retry."),
    ("h25", "working", "journal", "Session journal, 25 Nov",
     "- Morning: PR #418 rebase-merged by Dana; dual-write is on production.\n"
     "- Midday: tried a beat lock for revaluation; dropped it, the advisory lock inside the posting transaction is "
     "enough.\n"
     "- Afternoon: read through the MT940 spec with Dana; she wants it before Christmas for the Rabobank client.\n"
     "- Left for tomorrow: the backfill task draft."),
    ("h26", "memory_bank", "fact", "Client email goes to a shared Front inbox",
     "Client emails go to support@tidewater.app, a shared inbox in Front. Dana triages it at 09:00 and 16:00; "
     "anything about a wrong balance gets a GitHub issue labelled `client-data`."),
    ("h27", "patterns", "learning", "fly secrets set restarts every Machine",
     "`fly secrets set` redeploys all Machines at once, including a worker mid-import. Use `fly secrets set "
     "--stage` and let the next deploy pick them up, or set them outside import hours."),
    ("h28", "history", "learning", "Celery beat and the October clock change",
     "User asked why the 01:30 ECB backfill ran twice on 25 Oct. Assistant: beat runs with "
     "`timezone = 'Europe/London'`, and 01:30 happened twice when BST ended. Schedule London-local tasks outside "
     "01:00-02:00, or in UTC."),
    ("h29", "memory_bank", "preference", "Dana's shell is fish",
     "Dana uses fish. Give her commands without bash-only syntax: `set -x VAR value` instead of "
     "`export VAR=value`, no `$(...)` inside double quotes, no heredocs."),
    ("h30", "memory_bank", "constraint", "statement_timeout per database role",
     "The app role has `statement_timeout = 30s`, the reporting role 5 min; migrations run as the owner role with "
     "none. Work the app needs longer than 30 s for belongs in a Celery task."),
    ("h31", "patterns", "learning", "Database tests roll back a SAVEPOINT per test",
     "Database tests share one connection per session; each test runs inside a SAVEPOINT that is rolled back "
     "afterwards (`join_transaction_mode=\"create_savepoint\"` in SQLAlchemy 2). Code under test may call "
     "`commit()` freely. Much faster than truncating tables."),
    ("h32", "memory_bank", "decision", "Clients sign in with magic links",
     "Clients sign in with emailed magic links; a link is valid for 15 minutes and works once. No passwords are "
     "stored. Sessions last 12 hours."),
    ("h33", "working", "plan", "Tomorrow: profile the 38 MB CAMT import",
     "Tomorrow: import the 38 MB CAMT.053 file from the corporate client on staging with `memray` attached, to see "
     "whether iterparse + clear keeps the worker under 300 MB. If not, also delete earlier siblings "
     "(`del elem.getparent()[0]`)."),
    ("h34", "memory_bank", "fact", "Traces go to Honeycomb, 10 % sampled",
     "OpenTelemetry traces from the API and Celery go to Honeycomb (dataset `tidewater-prod`), head-sampled at "
     "10 %; errors are always kept. The trace id is in every log line as `trace_id`."),
    ("h35", "memory_bank", "fact", "VAT codes on postings",
     "Every expense and income posting carries a VAT code: S (20 %), R (5 %), Z (zero-rated), E (exempt), OS "
     "(outside scope). The accountant's export groups on it."),
    ("h36", "history", "learning", "MissingGreenlet after commit: expire_on_commit=False",
     "User asked about `MissingGreenlet` when reading `entry.postings` after `session.commit()` in an async "
     "endpoint. Assistant: commit expires every loaded attribute, and the next access tries a lazy load, which "
     "async sessions can't do implicitly. The session factory now uses `expire_on_commit=False`, and relationships "
     "needed after a commit are loaded with `selectinload`."),
    ("h37", "memory_bank", "fact", "Business days come from the gov.uk bank-holidays feed",
     "Business days are computed from the gov.uk bank-holidays JSON (England and Wales division), cached in the "
     "`holidays` table and refreshed every January by a beat task."),
    ("h38", "patterns", "learning", ".dockerignore dropped .git and broke the version",
     "The image build set version 0.0.0 because `.dockerignore` excluded `.git` and setuptools-scm found no tags. "
     "The build now passes `SETUPTOOLS_SCM_PRETEND_VERSION` from the CI tag instead."),
    ("h39", "memory_bank", "preference", "Dana runs migrations on staging and production herself",
     "Never run `alembic upgrade` against staging or production yourself. Write the revision, say what it locks, "
     "and tell Dana; she runs it."),
    ("h40", "working", "observation", "Auto-matching pairs 87 % of November's lines",
     "On the November data the auto-matcher paired 87 % of statement lines with postings; most of the others are "
     "card settlements that arrive two days later with a different reference."),
    ("h41", "memory_bank", "fact", "The Fly.io bill is about $180 a month",
     "The Fly.io bill runs about $180 a month: the Postgres volume and Machines are two thirds of it, Tigris "
     "storage the rest. Dana watches it; anything that would add more than $20 a month needs her OK."),
    ("h42", "patterns", "learning", "Hotfixes from a second git worktree",
     "For a hotfix while a feature branch is dirty: `git worktree add ../tw-hotfix main`, fix it there, open the PR "
     "from that folder, then `git worktree remove ../tw-hotfix`. No stashing, no half-committed WIP."),
    ("h43", "memory_bank", "fact", "pip-audit runs weekly against uv.lock",
     "A weekly GitHub Actions job runs `pip-audit` against `uv.lock` and opens an issue for any advisory; a high "
     "severity one means a dependency bump that week, outside the monthly routine."),
    ("h44", "history", "learning", "Restoring one client's postings from the WAL archive",
     "How Dana got back one client's postings after a bad manual UPDATE on 26 Nov, without touching the rest of "
     "production:\n"
     "1. Restore the WAL archive into a scratch cluster `tw-scratch` at 14:05, five minutes before the bad UPDATE "
     "(`wal-g backup-fetch`, then `recovery_target_time`).\n"
     "2. On the scratch side, copy that client's rows out: `\\copy (SELECT * FROM postings WHERE client_id = 17 "
     "AND booked_on >= '2026-11-01') TO 'c17.csv'`, and the same for their journal rows.\n"
     "3. On production, in one transaction: delete that client's rows for the damaged period, `\\copy ... FROM` "
     "the CSVs, and check the trial balance against the bank's closing balance before COMMIT.\n"
     "4. Destroy the scratch cluster; it is billed by the hour.\n"
     "It took 50 minutes. Lesson: a manual UPDATE on production goes in a transaction, with a SELECT of the "
     "affected rows before the COMMIT. Dana emailed the client what had changed and copied their accountant."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("at what hour are foreign-denominated holdings re-measured at each close", ("h01",)),
    ("why did payments leaving the account show up as receipts for the ISO 20022 files", ("h02",)),
    ("why did tiny background chores hang around until a big ingest finished", ("h03",)),
    ("where geographically are our servers, and is the data mirrored anywhere", ("h04",)),
    ("building a lookup structure on a huge table without locking writes errors out during a schema upgrade, "
     "what's the workaround", ("h05",)),
    ("who looks after the frontend and which days is he around", ("h06",)),
    ("what exchange figure do we apply when Frankfurt is closed, say Easter Monday or a Saturday", ("h07",)),
    ("which config keeps the task backend from quietly discarding pending jobs once RAM fills up", ("h08",)),
    ("how do I make my git history show as authenticated so it can land on the trunk", ("h09",)),
    ("why did the DB driver start complaining about duplicate named queries once we put a middleman in front "
     "of the database", ("h10",)),
    ("how do we book what a newly onboarded customer already held before their earliest bank file", ("h11",)),
    ("can we roll the data back to an arbitrary moment or only to the most recent full copy", ("h12",)),
    ("for financial summaries, do we go through the mapper classes or spell out the statements ourselves",
     ("h13",)),
    ("when a charge gets divided between departments the parts no longer sum to the whole, what's the right "
     "approach", ("h14",)),
    ("which UI framework and bundler do we use for the browser side, and how is that code organised", ("h15",)),
    ("what's the procedure to support a different layout that some lender exports, end to end", ("h16",)),
    ("where are we overall on the foreign-denomination rollout, what's outstanding", ("h17",)),
    ("who at the outside practice handles tax questions, and when's our regular catch-up with them", ("h18",)),
    ("why does looking up the UK clock region crash in our docker build but work on my mac", ("h19",)),
    ("if a partner's upload request times out and they fire it again, do we ingest it twice", ("h20",)),
    ("how hard can an integration hammer our endpoints before it gets throttled", ("h21",)),
    ("one lender's Quicken-format downloads break our parser on a weird trailing zone marker in the timestamps",
     ("h22",)),
    ("what does the leading digit of a general ledger identifier signify", ("h23",)),
    ("can I just kick off the journal insert after returning the HTTP response, in-process", ("h24",)),
    ("what did we get through midweek, and did the Dutch customer's file layout come up", ("h25",)),
    ("where do customer complaints land and how often does someone look", ("h26",)),
    ("changing an environment credential on our host killed a running ingest, how to avoid that", ("h27",)),
    ("why did a timed job execute two times the weekend daylight saving finished", ("h28",)),
    ("what terminal interpreter does the maintainer type into, so the snippets I send actually paste cleanly",
     ("h29",)),
    ("what's the maximum duration a single SQL call may take before the server cancels it", ("h30",)),
    ("how does the suite keep pytest cases isolated from each other's rows without wiping the db", ("h31",)),
    ("how do customers log on, and how long does that one-time URL stay usable", ("h32",)),
    ("what's the next step for checking RAM usage on the biggest XML upload", ("h33",)),
    ("where can I see request spans and what fraction is retained", ("h34",)),
    ("which sales tax percentages does the bookkeeping support", ("h35",)),
    ("touching child rows after persisting blows up with a coroutine-context error, why", ("h36",)),
    ("where does our calendar of non-trading public closures originate", ("h37",)),
    ("why does the deployed app report a zero release number", ("h38",)),
    ("am I allowed to push schema changes to the shared environments myself", ("h39",)),
    ("what share of bank entries get linked up without a human, and what's behind the remainder", ("h40",)),
    ("how much does hosting cost us and who approves extra spend", ("h41",)),
    ("how do I patch prod urgently without disturbing my messy in-progress checkout", ("h42",)),
    ("how do we find out about known vulnerabilities in third-party packages", ("h43",)),
    ("someone botched a single customer's bookkeeping directly on the live system, how do we bring only theirs to how it "
     "looked earlier that afternoon", ("h44",)),
]
