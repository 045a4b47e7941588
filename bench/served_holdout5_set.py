"""Fresh memories asked in other words, through the running server: the fifth hold-out set of issue 26.

Written in session 10 by the lead, after the fourth set (bench/served_holdout_set.py) had been measured, so that the
next round of ranking work can tune on the fourth and check itself here. Committed before anything ran on it; nobody
tunes on it. `python bench/served_fresh.py --set holdout5 --example-only` measures it the way the outside measure
does. A memory or question is changed after a result only to fix a rule the checker enforces, and the commit that
changes it says so.

Another voice again: notes the assistant kept while working with Dana (the example vault's maintainer of the
"tidewater" ledger) through an incident, code reviews and the onboarding of Sam Reyes, a part-time data engineer:
decisions, gotchas, how-tos, people and services, memory-bank style facts, four longer notes. About half the topics
sit next to what the example vault already holds (backups, Postgres, Celery, FX rates, statement imports, money in
Decimal), so its books and older notes compete; the rest are new. No topic of the four other fresh sets is repeated.

A memory: (key, collection, type, title, content); a question: (text, wanted keys). Every memory is wanted by
exactly one question, and no question shares a content word (after stemming and stop words) with a memory it
wants: bench/served_fresh.py checks both before it measures.
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    ("f01", "memory_bank", "fact", "Sam Reyes joined as a part-time data engineer",
     "Sam Reyes started on 23 Nov as a part-time data engineer, Mondays and Wednesdays. Sam owns the analytics "
     "export and the Metabase dashboards; import questions can go to Sam on those days."),
    ("f02", "memory_bank", "fact", "Metabase reads a DuckDB file rebuilt every night",
     "Metabase dashboards read `analytics.duckdb`, rebuilt at 02:00 UTC from a `pg_dump` of production and uploaded "
     "to Tigris. Figures are therefore up to a day old; nothing queries production live."),
    ("f03", "history", "learning", "An abandoned replication slot filled the Postgres volume",
     "The Postgres volume went from 40 % to 93 % in four days with no unusual writes. A logical replication slot "
     "left by the Airbyte trial kept every WAL segment since. Dropped it with `pg_drop_replication_slot`; an alert "
     "now fires when `pg_replication_slots` shows an inactive slot older than an hour."),
    ("f04", "patterns", "learning", "Filter NULLs with .is_(None), never `is None`",
     "In a SQLAlchemy filter, `Posting.reversed_at is None` is evaluated by Python to False, so the query silently "
     "returns nothing. Write `Posting.reversed_at.is_(None)`. Ruff's E711 fix turns `== None` into `is None`, so the "
     "rule is disabled for `src/tidewater/queries/`."),
    ("f05", "memory_bank", "fact", "Nightly dumps are encrypted with age",
     "The nightly dumps are encrypted with `age` before upload. The private key is in Dana's 1Password and on a "
     "printed sheet in a sealed envelope at Harbour & Co; without one of them the dumps are unreadable."),
    ("f06", "patterns", "learning", "pg_dump in directory format with four jobs",
     "`pg_dump -Fd -j 4` cut the nightly dump of the 40 GB database from 41 to 12 minutes; `pg_restore -j 4` reads "
     "the same directory. The plain SQL format can't be written in parallel."),
    ("f07", "memory_bank", "constraint", "The mTLS certificate for the bank API expires on 31 March",
     "Our client certificate for the bank partner's mutual-TLS API expires every 31 March. Renewal: new CSR from "
     "`ops/mtls/`, upload it in the partner portal, then replace the Fly secret the week before. Calendar reminder "
     "on 1 March."),
    ("f08", "memory_bank", "fact", "Open banking consents last 90 days",
     "Bank feeds come through TrueLayer. A consent lasts 90 days; after that the client must re-consent in the "
     "dashboard, and we email them 7 days before it lapses."),
    ("f09", "history", "learning", "The postings list made 400 queries a page",
     "User asked why `GET /postings` took 3 s. Assistant: each row loaded its journal and account lazily, about "
     "400 queries a page. One joined query fixed it, and `assert_max_queries(3)` in its test keeps it so."),
    ("f10", "memory_bank", "decision", "API errors are RFC 9457 problem details",
     "Every error from the public API is `application/problem+json` (RFC 9457) with `type`, `title`, `status`, "
     "`detail`, plus our `code`. No bare strings, no HTML error pages."),
    ("f11", "memory_bank", "preference", "PR descriptions need a testing section",
     "Dana wants every PR description to end with a \"How to test\" section listing the commands, and screenshots "
     "when the dashboard changes. A PR without one waits."),
    ("f12", "memory_bank", "fact", "Staging sits behind Cloudflare Access",
     "Staging is https://staging.tidewater.app behind Cloudflare Access: sign in with your work Google account. "
     "API clients use a service token from 1Password (`cf-access-staging`)."),
    ("f13", "history", "learning", "Cloudflare cached one client's balance page for another",
     "Incident, 12 Nov: a client briefly saw another client's balances. The balance endpoint returned no "
     "Cache-Control header and a Cloudflare page rule cached `/api/*` for 60 s. Every authenticated response now "
     "sends `Cache-Control: private, no-store`, and the page rule is gone."),
    ("f14", "patterns", "learning", "Add task arguments with defaults; deploy workers first",
     "After a deploy added a required `period` argument to `reconcile_account`, messages already queued failed with "
     "TypeError. New task arguments get defaults, and workers are deployed before the code that sends the new "
     "argument."),
    ("f15", "memory_bank", "fact", "Logs are kept 30 days in Better Stack",
     "Application logs ship to Better Stack; retention is 30 days. Older incidents need the weekly archive Sam "
     "exports to Tigris as gzipped NDJSON."),
    ("f16", "working", "observation", "Revolut CSV rows without a Completed Date are pending",
     "About 3 % of rows in the Revolut CSV exports have an empty `Completed Date`: they are card payments still "
     "pending. The `Started Date` is filled for all of them."),
    ("f17", "memory_bank", "decision", "Pending card transactions are not imported",
     "Rows that are still pending are skipped at import and counted as `pending_skipped` in the import summary. "
     "They come back settled in a later statement and are booked then."),
    ("f18", "history", "reflection", "Incident: staging sent reminders to real clients",
     "What happened: on 17 Nov the Monday staging refresh copied production's client e-mail addresses, and the "
     "overdue-statement reminder job ran on staging at 09:00. Fourteen real clients received a reminder with "
     "made-up figures.\n"
     "Why it could: the refresh scrubbed names and bank details but not e-mail addresses, and staging used the "
     "production Postmark server token.\n"
     "What changed: the refresh now rewrites every address to `client+<id>@staging.tidewater.app`; staging has its "
     "own Postmark server in sandbox mode, which accepts mail and delivers none; the reminder job refuses to run "
     "when `ENV != production` unless `--force` is given.\n"
     "Follow-up: Dana wrote to the fourteen clients the same day; none had acted on the reminder. A test now "
     "checks that the refresh leaves no address outside the staging domain."),
    ("f19", "working", "context", "Sam's first week: access and setup",
     "What Sam Reyes got in the first week:\n"
     "- GitHub: member of the `tw-data` team, write access to `tidewater` and `tw-analytics`, no admin.\n"
     "- Fly.io: read-only viewer in the `tidewater` organisation; no SSH to production Machines.\n"
     "- 1Password: the `tw-data` vault (Tigris read key, Metabase admin, Better Stack read-only).\n"
     "- Laptop: `uv sync`, the Postgres container on port 5433, and a copy of the anonymised seed data; the "
     "Makefile's `make dev` brings everything up.\n"
     "First tasks: move the DuckDB rebuild from a cron on Dana's machine to a scheduled GitHub Action, and document "
     "the Metabase models. Sam pairs with Dana on Wednesday afternoons."),
    ("f20", "working", "context", "Review notes on PR #452, bulk re-categorisation",
     "My review of PR #452 (POST /postings/categorise, many ids at once):\n"
     "1. The updates run one by one without a transaction: a failure halfway leaves half the batch changed. Wrap "
     "the batch in one transaction.\n"
     "2. No limit on the number of ids: one call could touch the whole ledger. Cap it at 500 and return 422 "
     "above.\n"
     "3. Only one audit event for the batch. Write one per posting, so an accountant can see each change.\n"
     "4. Nit: the category id is validated after the lookup; validate first and skip the query.\n"
     "Dana agreed with 1-3 and asked for 4 in a follow-up."),
    ("f21", "memory_bank", "fact", "Category rules: first match by priority wins",
     "Auto-categorisation rules are checked in ascending `priority`; the first rule whose payee pattern and amount "
     "range both match sets the category, and later rules are not looked at."),
    ("f22", "history", "learning", "A client's payee regex froze a worker: rules run on re2",
     "A client rule `(a+)+b` took a worker's CPU for minutes on a long payee string (catastrophic backtracking). "
     "Payee patterns are now compiled with `google-re2`, which runs in linear time and rejects backreferences when "
     "the rule is saved."),
    ("f23", "memory_bank", "fact", "Monthly summary emails go out on the third business day",
     "Each client's monthly summary e-mail is sent at 09:00 Europe/London on the third business day of the month, "
     "after the accountant's close."),
    ("f24", "memory_bank", "decision", "Relationships use lazy='raise' in the API",
     "All ORM relationships are declared with `lazy=\"raise\"`, so code that forgets to eager-load fails in tests "
     "instead of issuing a hidden query per row in production."),
    ("f25", "patterns", "learning", "uvicorn --reload misses edits in Docker on macOS",
     "With the source bind-mounted from macOS, `uvicorn --reload` never restarted: file events don't cross the "
     "mount. Set `WATCHFILES_FORCE_POLLING=true` in the compose file and pass `--reload-dir src`."),
    ("f26", "memory_bank", "fact", "Legal entity and VAT number",
     "The company is Tidewater Ledger Ltd, registered in England and Wales, company number 14829301, VAT number "
     "GB 392 1847 22. The product is called Tidewater Books on invoices and in the UI."),
    ("f27", "history", "learning", "Pydantic model_dump(mode='json') for webhook payloads",
     "Outgoing webhooks failed with `Object of type Decimal is not JSON serializable`. `model_dump()` keeps Decimal "
     "objects; `model_dump(mode=\"json\")` turns them into strings, which is what our payloads promise."),
    ("f28", "memory_bank", "decision", "Departed clients are archived, never deleted",
     "A client who leaves is archived (`archived_at` set), not deleted. Uploads for an archived client are refused "
     "with 409 and a message naming the archive date."),
    ("f29", "memory_bank", "fact", "Local development ports",
     "Local ports: API 8000, dashboard 5173, Flower 5555, Postgres 5433 (not 5432, so it does not clash with a "
     "Homebrew Postgres)."),
    ("f30", "patterns", "learning", "The outbound e-mail queue uses FOR UPDATE SKIP LOCKED",
     "Several mailer processes take work from the `outbox` table with `SELECT ... FOR UPDATE SKIP LOCKED LIMIT 50`, "
     "so no two of them send the same message and none waits for another."),
    ("f31", "working", "plan", "Thursday: budgets.amount from float to numeric",
     "Found during review: `budgets.amount` is still `double precision`. On Thursday: migrate it to "
     "`numeric(18,4)` with a USING cast, check that totals match before and after, then drop the float column."),
    ("f32", "memory_bank", "fact", "Dana is away 22 December to 5 January",
     "Dana is on leave from 22 Dec to 5 Jan. Sam covers import problems on Mondays and Wednesdays; nothing is "
     "deployed in that window except a security fix Dana approves by phone."),
    ("f33", "patterns", "learning", "CI matrix: fail-fast false",
     "The test matrix (3.11 on amd64 and arm64) cancelled the other job as soon as one failed, which hid a second, "
     "arm64-only failure for a week. The workflow now sets `fail-fast: false`."),
    ("f34", "memory_bank", "constraint", "Fiscal periods cannot overlap: an exclusion constraint",
     "`fiscal_periods` has `EXCLUDE USING gist (client_id WITH =, daterange(starts_on, ends_on, '[]') WITH &&)`, "
     "which needs the `btree_gist` extension. Two periods of one client can never share a day."),
    ("f35", "history", "learning", "Decimal precision 28 cut a revaluation product",
     "A revaluation of a very large balance lost its last digits: the default Decimal context has 28 significant "
     "digits. The revaluation now computes inside `localcontext(prec=38)` and quantizes once at the end."),
    ("f36", "patterns", "learning", "Adding a currency",
     "To support a new currency: add it to the `currencies` seed with its minor unit; check the ECB publishes a "
     "reference rate for it (if not, rates are entered by hand in the admin); add a statement fixture in that "
     "currency to `tests/fixtures/`."),
    ("f37", "history", "learning", "The date picker showed the previous day west of UTC",
     "Clients in North America saw every date one day early in the dashboard's date picker: `new Date(\"2026-11-27\")` "
     "parses as UTC midnight. Dates without a time are now parsed with date-fns `parseISO`, which reads them as "
     "local dates."),
    ("f38", "memory_bank", "fact", "The anomaly check flags postings over 5x the client's median",
     "A nightly job flags any posting more than five times the client's median absolute amount over the last 90 "
     "days; flags appear in the accountant's queue, not to the client."),
    ("f39", "history", "reflection", "What the November import backlog taught us",
     "On 3 Nov, the first working day after month end, 260 statement imports queued at once and the last finished "
     "after 14:00. Three things made it slow: one worker process served both imports and everything else; each "
     "import parsed the whole file before writing anything; and a retry storm started when the bank API answered "
     "429 and every task retried after the same 10 seconds.\n"
     "Since then imports have their own queue and two dedicated processes, parsing streams rows in batches of "
     "1,000, and retries are spread with jitter. On 1 Dec the same volume would take an estimated 90 minutes; "
     "Sam will chart the queue length that day to check."),
    ("f40", "working", "journal", "Session journal, 27 Nov",
     "Worked with Dana on the archived-client uploads and the NULL filter bug in reversed postings. Sam's first "
     "DuckDB rebuild as a GitHub Action ran in 11 minutes. Left for tomorrow: the float column in budgets, and "
     "the reply to the bank partner about the certificate renewal."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("who is the new hire helping with reporting, and what's their weekly schedule", ("f01",)),
    ("how current are the numbers in the BI charts", ("f02",)),
    ("why did the database disk keep growing when nobody was inserting anything", ("f03",)),
    ("my ORM where-clause checking for a missing timestamp brings back zero records", ("f04",)),
    ("if the maintainer can't be reached, how would we open the backup archives", ("f05",)),
    ("how did we make the overnight copy of our data quicker", ("f06",)),
    ("when does the credential we present to the lender's interface lapse, and how is it renewed", ("f07",)),
    ("how often must customers re-authorise our link to their lender", ("f08",)),
    ("the ledger entries endpoint was slow because of hundreds of round trips, how was that solved and kept solved", ("f09",)),
    ("what shape do failure responses from our HTTP interface take", ("f10",)),
    ("what should I write when I open a change request for review", ("f11",)),
    ("how do I reach the pre-production site, it asks me to log in", ("f12",)),
    ("a customer momentarily viewed somebody else's figures, what caused that", ("f13",)),
    ("after a release, jobs already waiting blew up with unexpected parameter errors", ("f14",)),
    ("how far back can I search what the app printed", ("f15",)),
    ("why do some lines in the fintech spreadsheet have no settlement day", ("f16",)),
    ("do we record spending that hasn't cleared yet", ("f17",)),
    ("what went wrong when customers got dummy messages from the pre-live environment", ("f18",)),
    ("what permissions did the newcomer on the BI side receive initially", ("f19",)),
    ("what did I object to in the mass relabelling pull request", ("f20",)),
    ("when two automatic classification criteria both fit, which one applies", ("f21",)),
    ("a user's matching expression hung a background process for ages, what did we do about it", ("f22",)),
    ("when do customers receive their periodic digest", ("f23",)),
    ("how do we make forgotten up-front fetching of associated objects break loudly", ("f24",)),
    ("my containerised server doesn't reboot itself when I alter code on my Mac", ("f25",)),
    ("what's our formal business name and tax identifier for billing", ("f26",)),
    ("the callback body couldn't encode monetary amounts, why", ("f27",)),
    ("what happens if somebody sends in a file for a customer who has left", ("f28",)),
    ("which number should my SQL client connect to on my own laptop", ("f29",)),
    ("how do several dispatchers pull unsent outgoing post without grabbing the same row", ("f30",)),
    ("which table still stores money the wrong way, and when is that being fixed", ("f31",)),
    ("who's minding things over the holidays, and can we ship then", ("f32",)),
    ("continuous integration halted the sibling run the moment its partner broke, masking an extra bug", ("f33",)),
    ("what prevents accounting years of the same customer from colliding", ("f34",)),
    ("why did a huge currency multiplication lose its trailing figures", ("f35",)),
    ("steps to handle a further money denomination such as Swiss francs", ("f36",)),
    ("people in Canada see yesterday on the calendar widget", ("f37",)),
    ("how do we spot suspiciously large entries for a customer", ("f38",)),
    ("why was everything sluggish right after the October close, and what came out of it", ("f39",)),
    ("what was done yesterday and what's still open", ("f40",)),
]
