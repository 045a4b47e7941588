"""Fresh memories asked in other words, through the running server: the eighth hold-out set of issue 26.

Written in session 21 by the lead while a helper tuned how book sections rank against fresh notes, and committed
before that work was measured on it, so that it checks such work for overfitting. Nobody tunes on it or reads its
per-question output. `python bench/served_fresh.py --set holdout8 --example-only` measures it the way the outside
measure does. A memory or question is changed after a result only to fix a rule the checker enforces, and the
write-up says so.

The mix is the seventh's: half on topics the example vault's three books also cover (deploys, workers and queues,
backups, psql, locks, query plans, maintenance, the ledger's tables and invariants, incidents), so that a book
section competes with the fresh note, and half on topics no book touches (the web client, the editor, reviews,
logging, CI, process). No memory repeats a fact of the seven other fresh sets. The questions are typed the way a
developer types into an assistant: short, lower case, often a task rather than a question.

A memory: (key, collection, type, title, content); a question: (text, wanted keys). Every memory is wanted by
exactly one question, and no question shares a content word (after stemming and stop words) with a memory it
wants: bench/served_fresh.py checks both before it measures.
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    # -- next to the books: deploys, workers, backups, Postgres, the ledger, incidents -----------------------------
    ("k01", "memory_bank", "decision", "Canary: one Machine takes the new image for fifteen minutes first",
     "A release goes to a single web Machine, which serves its share of requests for fifteen minutes while we "
     "watch Sentry and the p95 in Grafana; only then does `fly deploy --strategy rolling` replace the rest."),
    ("k02", "history", "learning", "Data migrations touch 10,000 rows per transaction",
     "The fx backfill rewrote 30 million postings in one UPDATE: the WAL volume filled and replicas fell an hour "
     "behind. Data migrations now loop over primary-key ranges of 10,000 and commit after each batch."),
    ("k03", "patterns", "fact", "Purge a Celery queue",
     "`celery -A tidewater purge -Q imports -f` drops everything waiting in that queue. Only with Dana's OK: the "
     "purged uploads have to be requeued by hand from the `imports` table afterwards."),
    ("k04", "memory_bank", "fact", "Worker concurrency is four per Machine",
     "`CELERY_CONCURRENCY=4` in fly.toml's worker group; each Machine has 1 GB, and a fifth child pushed the "
     "CAMT parser into swap. Scale out with more Machines, never more children."),
    ("k05", "history", "learning", "Advisory lock keys collided between import and reconcile",
     "Import and reconcile both took `pg_advisory_lock(crc32(account_id))`, so an import of account 17 made "
     "reconciling account 17 wait, and hash collisions made unrelated accounts wait too. Keys are now the "
     "two-integer form (kind, account_id)."),
    ("k06", "patterns", "fact", "A sweeper resets imports stuck in parsing",
     "When a worker is OOM-killed mid-import the row stays in `parsing` with nobody on it. The beat task "
     "`sweep_stale_imports` puts any import untouched for 30 minutes back to `queued`, at most three times."),
    ("k07", "memory_bank", "decision", "Backups are kept 35 days, weekly ones for a year",
     "The nightly dumps older than 35 days are deleted except Sunday's, which is kept twelve months for the "
     "auditors. The bucket's lifecycle rule does it; nobody deletes by hand."),
    ("k08", "memory_bank", "constraint", "Staging and production never share a credential",
     "Every token exists twice, one per environment. A staging Postmark token showed up in a screenshot in May "
     "and could not reach a real client's inbox because of this."),
    ("k09", "patterns", "preference", "BEGIN before any ad-hoc UPDATE in psql",
     "Open a transaction first, check the count it reports, then COMMIT. `\\set ON_ERROR_ROLLBACK interactive` "
     "in ~/.psqlrc keeps one mistyped statement from aborting everything done so far."),
    ("k10", "memory_bank", "decision", "The balance endpoint uses FOR UPDATE NOWAIT and answers 409",
     "Two edits racing on one ledger used to queue behind each other for seconds. Now the second one gets "
     "`409 Conflict` at once with `Retry-After: 1`, and the dashboard retries quietly."),
    ("k11", "memory_bank", "preference", "EXPLAIN (ANALYZE, BUFFERS) in every slow-query PR",
     "A pull request that claims a query got quicker pastes the plan from before and after, run on the staging "
     "copy, buffers included; timings from a laptop's empty database are not evidence."),
    ("k12", "patterns", "fact", "Monthly REINDEX CONCURRENTLY of the postings indexes",
     "`postings_account_id_idx` bloated to three times its fresh size. A job on the first Sunday of each month "
     "runs `REINDEX INDEX CONCURRENTLY` on the postings indexes, one at a time."),
    ("k13", "memory_bank", "fact", "created_at and updated_at are set by a trigger",
     "Every table has both; `set_updated_at()` fires BEFORE UPDATE, so the application never writes them and a "
     "psql fix by hand still leaves a correct trail."),
    ("k14", "memory_bank", "decision", "Crypto is out of scope",
     "The ledger refuses non-ISO codes: no BTC, no USDT, no loyalty points. Asked again in November by two "
     "clients; the answer stays no until the regulator's position is clear."),
    ("k15", "memory_bank", "constraint", "A posting's account must belong to its entry's client",
     "A trigger on postings compares `accounts.tenant_id` with `journal_entries.tenant_id` and raises on a "
     "mismatch; an import bug in March had booked one client's fee to another's ledger."),
    ("k16", "patterns", "fact", "Foreign keys between entries and postings are deferred",
     "They are `DEFERRABLE INITIALLY DEFERRED`: the importer writes postings before their journal entry and the "
     "check happens at COMMIT, so a bulk load needs no particular sequence."),
    ("k17", "working", "plan", "Ledger v2 cutover on a Saturday behind a read-only banner",
     "Saturday 08:00 London: writes paused, a banner on the dashboard, the copy and the checks, then writes "
     "back on around noon. Dana runs it; Tomasz watches the dashboard's error rate."),
    ("k18", "memory_bank", "constraint", "Deploys to production need two approvals",
     "The GitHub environment `production` requires two reviewers from Dana, Tomasz and Priya; a hotfix still "
     "needs both, by phone if it has to be."),
    ("k19", "history", "learning", "Fly stopped the workers because they serve no HTTP",
     "`auto_stop_machines` saw no traffic on the worker Machines and stopped them overnight, so imports waited "
     "until morning. The worker group now sets `auto_stop_machines = false` and `min_machines_running = 2`."),
    ("k20", "memory_bank", "decision", "Uploaded statements are kept 13 months",
     "The uploaded originals stay in the Tigris bucket thirteen months, then a lifecycle rule expires them; the "
     "parsed lines stay in Postgres for good."),
    ("k21", "memory_bank", "fact", "Incident severities",
     "SEV1: the ledger is wrong or nobody can sign in, page on-call at any hour. SEV2: one bank's imports fail, "
     "next business day. SEV3: cosmetic, a ticket."),
    ("k22", "history", "learning", "A replica promoted during maintenance kept the old max_connections",
     "After Neon's maintenance promoted the replica, it came up with the replica's 100 max_connections instead "
     "of 300 and the API hit `too many clients` within minutes. The role settings are now set on both."),

    # -- away from the books: web client, editor, reviews, logging, CI, process --------------------------------
    ("k23", "memory_bank", "decision", "Forms are validated with zod schemas generated from OpenAPI",
     "The dashboard's forms run the same zod schema the API client is generated from, so a field the server "
     "refuses is refused before the request is made."),
    ("k24", "patterns", "fact", "Recommended VS Code extensions are listed in the repository",
     "`.vscode/extensions.json` recommends ruff, ESLint, Prettier, Even Better TOML and the Tailwind IntelliSense "
     "extension; VS Code offers them when the folder is opened."),
    ("k25", "memory_bank", "preference", "Approve with nits",
     "Reviewers approve and leave nits; the author fixes them without another round of review. Anything that "
     "is more than a nit is a request for changes, said as such."),
    ("k26", "patterns", "fact", "DEBUG logging for one request through a header",
     "Production logs at INFO. Staff can send `X-Debug: 1` with a staff token and that one request logs at "
     "DEBUG, SQL included, tagged with the request id."),
    ("k27", "memory_bank", "fact", "Slow-marked tests execute only on main and nightly",
     "Tests marked `slow` (bank sandboxes, the 38 MB CAMT file) are skipped for pull requests, which get the "
     "fast subset in about four minutes; main and the nightly workflow execute everything."),
    ("k28", "memory_bank", "preference", "Topic refs are named initials/ticket-slug",
     "For example `do/TW-412-camt-dates`; the bot links the Jira ticket from the prefix, and refs without one "
     "get a warning comment."),
    ("k29", "patterns", "preference", "Component tests query by role",
     "Testing Library's `getByRole` with the accessible name, never `data-testid`: a test that cannot find a "
     "button by its name has found an accessibility bug."),
    ("k30", "patterns", "preference", "Enums are StrEnum",
     "`class Status(StrEnum)`: JSON, the database and log lines all see the same text, and comparing with a "
     "plain string works in tests."),
    ("k31", "patterns", "fact", "Outbound HTTP retries use tenacity with jitter",
     "`@retry(wait=wait_random_exponential(max=8), stop=stop_after_delay(20))` on the bank connectors' GETs only; "
     "POSTs are never repeated unless they carry an idempotency key."),
    ("k32", "memory_bank", "fact", "Better Uptime checks /healthz every minute",
     "From three regions; two failures in a row open an incident and post to #ops. `/healthz` answers without "
     "touching Postgres or Redis."),
    ("k33", "memory_bank", "constraint", "Bundle budget: 250 kB gzipped for the dashboard's first load",
     "`size-limit` fails CI above it. Charts and the PDF preview are loaded lazily; moment.js was replaced by "
     "date-fns to get under it."),
    ("k34", "memory_bank", "decision", "Feature work starts with a one-page RFC",
     "Anything over three days: a one-page RFC in Notion (problem, options, the choice, what we will not do), "
     "comments for two days, then code."),
    ("k35", "memory_bank", "preference", "Spikes are time-boxed to two days",
     "A spike ends after two days with a short write-up of findings; its code is thrown away, not polished into "
     "the product."),
    ("k36", "history", "learning", "CSP blocks anything inline: use the nonce",
     "The new Content-Security-Policy refused the chat widget's inline bootstrap. Templates put the per-response "
     "`nonce` on every inline block; `unsafe-inline` stays out."),
    ("k37", "memory_bank", "decision", "Consent banner only for analytics",
     "The banner asks before PostHog loads; session and CSRF cookies are essential and set without asking. EU "
     "counsel agreed in September."),
    ("k38", "memory_bank", "fact", "Releases are announced in #changelog with a screenshot",
     "Every user-visible change gets a line and a screenshot in #changelog on Slack; the Friday digest to "
     "clients is built from it."),
    ("k39", "patterns", "fact", "PDF statement snapshot tests compare extracted text",
     "`pdftotext -layout` of the rendered statement is compared with a stored snapshot; pixel comparisons broke "
     "on every font update."),
    ("k40", "memory_bank", "constraint", "Windows contributors use WSL2",
     "Native Windows is unsupported (the ofx parser's C extension and the Makefile). WSL2 with Ubuntu 24.04 and "
     "the repository inside the WSL filesystem, not under /mnt/c."),
    ("k41", "memory_bank", "decision", "Breaking changes to the public API get 90 days of Deprecation headers",
     "A removed field or route first sends `Deprecation` and `Sunset` headers for 90 days and is listed in the "
     "changelog; integrators with traffic on it get an email."),
    ("k42", "memory_bank", "fact", "The mobile app's minimum is iOS 16 and Android 10",
     "Below that is under 2 % of sessions; raising it again is decided each January from the crash-free numbers."),
    ("k43", "memory_bank", "fact", "Retro every other Friday, 30 minutes",
     "At 15:30 after the demo; one thing to keep, one to change, one owner each. Notes go to the Notion page "
     "'Retros'."),
    ("k44", "patterns", "fact", "Requests over 500 ms go to the slow_requests table",
     "A middleware writes route, duration and SQL count for any request past 500 ms; a weekly Metabase question "
     "lists the worst routes."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("try a build on a small slice of the fleet before everybody", ("k01",)),
    ("changing tons of records in a single pass during a schema upgrade bloated everything", ("k02",)),
    ("empty out the backlog of pending jobs without running them", ("k03",)),
    ("how many parallel task processes does each box run", ("k04",)),
    ("a pair of background jobs blocked each other for no reason", ("k05",)),
    ("uploads frozen half-way forever when a process dies", ("k06",)),
    ("how long do we hold on to previous database snapshots", ("k07",)),
    ("can test and live use the same api key?", ("k08",)),
    ("protect myself from a typo when fixing rows by hand in the sql console", ("k09",)),
    ("a pair of people modifying simultaneously, what does the latter see", ("k10",)),
    ("what do reviewers expect when i say my sql change is faster", ("k11",)),
    ("btree growing huge and wasteful, is anything scheduled for that", ("k12",)),
    ("who maintains the modification time columns", ("k13",)),
    ("can customers hold bitcoin with us", ("k14",)),
    ("stop a company's money landing in a different company's records", ("k15",)),
    ("inserting parent and child records in any order", ("k16",)),
    ("when do we flip over to the new bookkeeping model and what will folks notice", ("k17",)),
    ("who has to sign off before something goes live", ("k18",)),
    ("background consumers keep going to sleep on their own", ("k19",)),
    ("how long are the bank documents people send us retained", ("k20",)),
    ("when does an outage wake somebody at night versus wait till morning", ("k21",)),
    ("after the provider's upgrade the db refused new logins", ("k22",)),
    ("how does the frontend check input before submitting", ("k23",)),
    ("which plugins should my ide have", ("k24",)),
    ("do tiny remarks hold up merging", ("k25",)),
    ("turn on verbose output for a single call in prod", ("k26",)),
    ("why didn't the long integration suite run on my branch", ("k27",)),
    ("what should i call my git branch", ("k28",)),
    ("how to pick elements in react unit specs", ("k29",)),
    ("how are fixed sets of choices represented in python", ("k30",)),
    ("what library re-attempts flaky calls to third parties", ("k31",)),
    ("what pings the service to see if it's alive", ("k32",)),
    ("how big may the javascript sent to browsers be", ("k33",)),
    ("do i need a written proposal before building something big", ("k34",)),
    ("how long may an exploratory prototype take", ("k35",)),
    ("why won't my injected script tag execute on the page", ("k36",)),
    ("do we need permission from visitors before tracking them", ("k37",)),
    ("where do people hear about what went out this week", ("k38",)),
    ("how do we check the printable documents haven't changed looks", ("k39",)),
    ("can i develop on my pc without linux", ("k40",)),
    ("how much notice do partners have before we remove an endpoint", ("k41",)),
    ("oldest phones we still support", ("k42",)),
    ("when do we look back at how the sprint went", ("k43",)),
    ("at what latency does a call get flagged as sluggish", ("k44",)),
]
