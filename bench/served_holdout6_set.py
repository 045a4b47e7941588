"""Fresh memories asked in other words, through the running server: the sixth hold-out set of issue 26.

Written in session 11 by a helper who had not looked at any ranking result on it, and committed before anything
ran on it, because hold-out 4 and hold-out 5 disagreed by 0.1 MRR against plain cosine and another helper of the
same session tunes on hold-out 4. Nobody tunes on it or reads its per-question output.
`python bench/served_fresh.py --set holdout6 --example-only` measures it the way the outside measure does. A
memory or question is changed after a result only to fix a rule the checker enforces, and the write-up
(bench/results/s11-holdout11.md) says so.

A different mix from the fourth and fifth on purpose. Those read as an assistant's notes about the team around
the example vault's maintainer: people, services, incidents, a third memory-bank facts, several long notes. This
one is what a coding assistant's hooks and `add_memory` calls leave behind day to day in one developer's vault:
mostly short, and mostly coding: why something was chosen over an alternative, what broke and the fix, a command
that works, how the user wants things done; then a few memory-bank facts, two in-progress notes and two longer
ones. About a dozen sit on purpose next to the example vault's books (the operations runbook, the Postgres
cheatsheet, the ledger schema reference) and its older notes on Celery, Alembic and locking, where the books
compete hardest. No memory repeats one of the five other fresh sets, though a few neighbour them (a fresh dev
database beside served_fresh_set's docker compose note). The questions are typed the way a developer types into an
assistant: short, lower case, sloppy, often a task rather than a question.

A memory: (key, collection, type, title, content); a question: (text, wanted keys). Every memory is wanted by
exactly one question, and no question shares a content word (after stemming and stop words) with a memory it
wants: bench/served_fresh.py checks both before it measures.
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    # -- why we chose X -----------------------------------------------------------------------------------------
    ("d01", "memory_bank", "decision", "Config is pydantic-settings, read once at startup",
     "Settings come from one `Settings(BaseSettings)` class with the `TW_` prefix, built once in `main.py` and "
     "passed down. Chosen over dynaconf because a missing or mistyped variable fails at boot with a clear "
     "message instead of at the first request that reads it."),
    ("d02", "memory_bank", "decision", "Public ids are ULIDs, not serial integers",
     "Anything an outside client can see (clients, uploads, postings) is addressed by a ULID string. Serial "
     "integers leaked how many clients we have and could be enumerated; ULIDs still sort by creation time, so "
     "keyset pagination keeps working. Internal foreign keys stay bigint."),
    ("d03", "memory_bank", "decision", "Stayed on Celery instead of moving to arq",
     "Looked at arq in November. Kept Celery: month-end close relies on chords and on beat, arq has neither in "
     "the same form, and rewriting forty tasks buys nothing we need. Revisit only if we drop sync SQLAlchemy."),
    ("d04", "memory_bank", "decision", "The upload screen polls every 2 s rather than using websockets",
     "Progress of a statement upload is shown by polling `GET /uploads/{id}` every two seconds. Websockets "
     "through the Fly proxy dropped after 60 s idle and needed sticky routing; polling is a few hundred cheap "
     "requests a day."),
    ("d05", "memory_bank", "decision", "Tests run against real Postgres via testcontainers",
     "The suite starts one `postgres:16` container per session with testcontainers, never SQLite. The exclusion "
     "constraints, JSONB queries and numeric rounding behave differently on SQLite and twice passed there while "
     "failing in production."),
    ("d06", "memory_bank", "decision", "Ledger change events go through LISTEN/NOTIFY, no Kafka",
     "Other services learn about new postings from a Postgres `NOTIFY ledger_changed` sent by a trigger, with "
     "the outbox row id as payload. Kafka or NATS was ruled out: one more thing to run for a few hundred events "
     "an hour, and NOTIFY is transactional with the write."),
    ("d07", "patterns", "decision", "Migration scripts are written by hand; autogenerate is only a draft",
     "`alembic revision --autogenerate` output is a starting point and gets read line by line: it misses "
     "server defaults, renames columns as drop plus add, and knows nothing about data backfills. Every revision "
     "is reviewed as if handwritten."),
    ("d08", "memory_bank", "decision", "No new code uses session.query()",
     "New code uses SQLAlchemy 2.0 `select()` with `session.execute()` / `session.scalars()`. The legacy "
     "`session.query()` style stays where it already is until the module is touched for another reason."),
    ("d09", "memory_bank", "decision", "Feature toggles are environment variables",
     "Half-finished features hide behind `TW_FLAG_<NAME>=1` variables read through the settings class. A hosted "
     "flag service was judged too much for one developer; a flag is removed in the release after it goes to "
     "everyone."),
    ("d10", "memory_bank", "decision", "Background PDF statements rendered by a separate worker queue",
     "PDF generation got its own Celery queue `pdf` and one Machine with 1 GB, because a single large render "
     "could hold a general worker for minutes and push it out of memory."),
    ("d11", "memory_bank", "decision", "Dashboard data fetching with TanStack Query, no global store",
     "The React side keeps server data in TanStack Query caches keyed by route params; there is no global "
     "store for it. Only UI state (open panels, filters) lives in component state."),

    # -- what broke and the fix ---------------------------------------------------------------------------------
    ("d12", "history", "learning", "CAMT task looped for two days on a malformed file",
     "A CAMT file with a truncated closing tag made the parser raise on every attempt, and the Celery task had "
     "no attempt cap, so it re-queued itself every three minutes from Saturday to Monday. Parse errors are now "
     "terminal: the upload is marked failed with the parser message, and other exceptions get at most five "
     "attempts."),
    ("d13", "history", "learning", "pytest hung after the last test: Sentry's background thread",
     "The suite printed its summary and then never exited. `sentry_sdk.init` ran on import of the app and left "
     "a non-daemon transport thread. The SDK is now initialised only when `TW_SENTRY_DSN` is set, which it "
     "never is under tests."),
    ("d14", "history", "learning", "Stale pooled connections after quiet periods",
     "After a night with no traffic the first request failed with `SSL SYSCALL error: EOF detected`: Fly's "
     "proxy drops TCP sessions idle for a while. The engine now has `pool_pre_ping=True` and "
     "`pool_recycle=300`."),
    ("d15", "history", "learning", "Santander CSV header started with a BOM",
     "Santander's CSV export starts with a UTF-8 byte order mark, so the first column came out as "
     "`\\ufeffDate` and the mapping said the date column was absent. Files are now opened with "
     "`encoding=\"utf-8-sig\"`, which strips it and reads plain UTF-8 unchanged."),
    ("d16", "history", "learning", "Reconcile tasks deadlocked: lock accounts in id order",
     "Two reconciliation tasks touching the same pair of accounts in opposite order each waited on the other "
     "until Postgres aborted one with `deadlock detected`. Rows are now locked with `SELECT ... FOR UPDATE` "
     "sorted by account id, so every task takes them in the same order."),
    ("d17", "history", "learning", "Workers exited with code 137 on the 256 MB Machines",
     "Celery workers vanished with no traceback; `fly logs` showed `exit code 137`, the kernel's OOM kill. The "
     "Machines had the default 256 MB. The worker group now runs on `shared-cpu-2x` with 1 GB."),
    ("d18", "history", "learning", "Dependency overrides leaked from one test into the next",
     "A test that replaced the current-user dependency left `app.dependency_overrides` filled, so later tests "
     "ran as that fake admin and passed for the wrong reason. The `client` fixture now clears the overrides on "
     "teardown."),
    ("d19", "history", "learning", "Amounts sorted as text in the dashboard",
     "The amounts column put 100.00 before 9.50 because money arrives as strings and the table sorted them as "
     "text. The column now has a numeric sort function that compares them with decimal.js."),
    ("d20", "history", "learning", "Preview apps were refused by CORS",
     "Per-PR preview deployments of the dashboard live at `tw-pr-<n>.pages.dev`, which the API's fixed origin "
     "list did not contain. `allow_origin_regex` now matches that pattern; production keeps its exact origin."),
    ("d21", "history", "learning", "The month-end chord never fired its callback",
     "The month-end close chord ran all its header tasks but the summary step never started: the header tasks "
     "had `ignore_result=True`, and a chord counts results in the backend. Header tasks now store their "
     "results."),
    ("d22", "history", "learning", "Passing ORM objects to .delay() gave stale rows",
     "A task received a pickled `Account` instance and wrote back values from before a concurrent change. "
     "Tasks now take primary keys only and load the row themselves inside their own session."),
    ("d23", "history", "learning", "Pre-commit mypy passed while CI failed",
     "The mypy hook from mirrors-mypy runs in its own virtualenv without our dependencies, so every third-party "
     "import was `Any` and errors were hidden. The hook is now `language: system` with `entry: uv run mypy`."),
    ("d24", "history", "learning", "Deploys killed long tasks: kill_timeout 120 for workers",
     "A deploy sends SIGTERM and Fly kills the Machine five seconds later by default, so a CAMT parse halfway "
     "through was lost and re-ran from scratch. The worker group now has `kill_timeout = 120` and Celery's warm "
     "shutdown finishes the current task."),
    ("d25", "history", "learning", "ruff format and black fought in the hooks",
     "Both black and `ruff format` ran in pre-commit, disagreed on a few trailing commas, and a commit never "
     "settled. black is gone; ruff does formatting and linting."),
    ("d26", "history", "learning", "Balances page slow: a materialised view refreshed after each upload",
     "The balances page summed every posting per account on each request, 4 s for the largest client. "
     "`account_balances` is now a materialised view with a unique index, refreshed `CONCURRENTLY` at the end of "
     "each statement upload."),
    ("d27", "history", "learning", "Celery eager mode hid a serialisation bug",
     "With `task_always_eager` in tests, arguments were never serialised, so a task given a `date` object "
     "passed locally and failed in staging with `Object of type date is not JSON serializable`. Tests now use "
     "the real worker fixture from `celery.contrib.pytest`."),

    # -- commands that work -------------------------------------------------------------------------------------
    ("d28", "patterns", "learning", "Fresh dev database in one step",
     "`make dev-reset` drops and recreates `tidewater_dev`, runs `alembic upgrade head` and loads "
     "`fixtures/seed.sql`. The compose Postgres container must already be up (`docker compose up -d pg`)."),
    ("d29", "patterns", "learning", "A Python shell inside production",
     "`fly ssh console -a tidewater --process-group worker -C \"python -m tidewater.shell\"` opens an IPython "
     "session with the settings, the engine and a session already made. Read only unless Dana says otherwise."),
    ("d30", "patterns", "learning", "Which Alembic revision production is on",
     "`fly ssh console -a tidewater -C \"alembic current\"` prints the head applied there; compare with "
     "`uv run alembic heads` on your branch before you merge a revision."),
    ("d31", "patterns", "learning", "Profiling the API with py-spy",
     "`py-spy record -o profile.svg --pid $(pgrep -f uvicorn) --duration 30` while you hit the endpoint gives a "
     "flame graph; inside Docker it needs `--cap-add SYS_PTRACE`."),
    ("d32", "patterns", "learning", "Regenerate the TypeScript API client",
     "After changing a pydantic response schema run `npm run gen:api` in `web/`: it reads the running API's "
     "OpenAPI document and rewrites `web/src/api/generated.ts`. CI fails when that file is out of date."),
    ("d33", "patterns", "learning", "Reading production data from a laptop, read-only",
     "`fly proxy 15432:5432 -a tidewater-db`, then `psql -h localhost -p 15432 -U tw_readonly tidewater`. The "
     "tw_readonly role has SELECT only, so a stray UPDATE fails instead of changing anything."),
    ("d34", "patterns", "learning", "Fast inner test loop",
     "`uv run pytest -x --lf -m \"not slow\" -p no:randomly` reruns the last failures first and skips the "
     "container-backed tests; the full run is for before a push."),
    ("d35", "patterns", "learning", "Requeue one failed upload by id",
     "`uv run tw uploads requeue <upload-id>` resets the row to `pending` and sends a new task. It refuses when "
     "postings already exist for that upload; then use `tw uploads purge` first."),

    # -- how the user wants things done ------------------------------------------------------------------------
    ("d36", "memory_bank", "preference", "Ask before adding a dependency",
     "The user wants to be asked before any new package goes into pyproject.toml or package.json, with the "
     "reason and what the standard library would need instead."),
    ("d37", "memory_bank", "preference", "Logging calls use %s arguments, not f-strings",
     "f-strings everywhere except logger calls: `log.info(\"parsed %s rows\", n)` so the message is only built "
     "when the level is on and Sentry groups events by template."),
    ("d38", "memory_bank", "preference", "pathlib, never os.path",
     "In new Python code the user wants `pathlib.Path` and its methods; `os.path.join` and friends only in "
     "code that is already like that."),
    ("d39", "memory_bank", "preference", "British spelling in anything a client reads",
     "User-facing text (dashboard labels, emails, error messages) uses British spelling: organisation, "
     "colour, cancelled, catalogue. Code identifiers stay American."),
    ("d40", "memory_bank", "preference", "Answer with the command first",
     "When the user asks how to do something, put the command or code first and the explanation after it, in "
     "two or three sentences at most."),
    ("d41", "memory_bank", "preference", "Table-driven tests with pytest.mark.parametrize",
     "Several cases of one behaviour go in one `@pytest.mark.parametrize` with ids, not a loop inside a test "
     "and not copies of the function."),

    # -- memory-bank facts --------------------------------------------------------------------------------------
    ("d42", "memory_bank", "fact", "Staging database app is tidewater-staging-db",
     "Staging's Postgres is the Fly app `tidewater-staging-db`, a single node with a 10 GB volume and no "
     "replica. It is rebuilt from the seed when it drifts; nobody needs its data."),
    ("d43", "memory_bank", "fact", "Errors go to Sentry project tidewater-api",
     "Unhandled exceptions from the API and the workers go to the Sentry project `tidewater-api`; the DSN is "
     "the Fly secret `TW_SENTRY_DSN`. Alerts for new issues go to Dana by e-mail."),
    ("d44", "memory_bank", "fact", "Domain registered at Gandi, DNS on Cloudflare",
     "tidewater.app is registered with Gandi (auto-renew on, card ending 4417). Its nameservers point at "
     "Cloudflare, where all records are managed."),
    ("d45", "memory_bank", "fact", "The dashboard is hosted on Cloudflare Pages",
     "The React build from `web/` deploys to Cloudflare Pages on every push to main; pull requests get their "
     "own preview address."),
    ("d46", "memory_bank", "fact", "Clients upload roughly 1,100 statements a month",
     "About 1,100 statement files a month across 40 clients, two thirds of them in the first three working "
     "days; the largest file so far was 38 MB of CAMT."),

    # -- next to the runbook, the cheatsheet and the schema reference ------------------------------------------
    ("d47", "patterns", "learning", "Dropping a column takes two releases",
     "To remove a column: first ship code that no longer reads or writes it, then drop it in a later "
     "revision. Dropping it in the same release broke the old Machines still serving during the rolling "
     "replacement."),
    ("d48", "patterns", "learning", "Check for idle-in-transaction sessions before a prod migration",
     "Before a revision that takes an ACCESS EXCLUSIVE lock, look in `pg_stat_activity` for sessions `idle in "
     "transaction` longer than a minute; the Metabase role leaves them behind and the ALTER queues behind it, "
     "and every query after it."),
    ("d49", "patterns", "learning", "Autovacuum tuned for postings",
     "`postings` gets `ALTER TABLE postings SET (autovacuum_vacuum_scale_factor = 0.02)`: at the default 0.2 "
     "autovacuum waited for millions of obsolete tuples and the heap kept growing after each month-end."),
    ("d50", "memory_bank", "constraint", "Statement lines carry a fingerprint unique per account",
     "`statement_lines` has a `fingerprint` column, SHA-256 of booking date, amount, currency and normalised "
     "description, with a unique constraint on `(account_id, fingerprint)`. Sending the same file twice books "
     "nothing new."),
    ("d51", "memory_bank", "constraint", "Journal entries must balance, checked at commit",
     "A deferred constraint trigger `check_balanced` on `postings` sums each journal entry's amounts at COMMIT "
     "and raises if they are not zero, so a half-written entry inside the transaction is allowed."),
    ("d52", "patterns", "learning", "Restore drill into a scratch Postgres app",
     "To prove a nightly dump restores: `fly postgres create --name tw-restore-test`, `pg_restore -j 4 -d` "
     "into it, compare row counts of postings and journal_entries with production, then `fly apps destroy` it. "
     "Takes about 25 minutes."),
    ("d53", "patterns", "learning", "Rotating the Tigris keys",
     "Create a second key pair in the Tigris console, `fly secrets set AWS_ACCESS_KEY_ID=... "
     "AWS_SECRET_ACCESS_KEY=...` (this restarts every Machine), confirm uploads land, then delete the old pair."),

    # -- in progress, and three longer notes --------------------------------------------------------------------
    ("d54", "working", "observation", "Upload latency doubled since Tuesday",
     "p95 of `POST /uploads` went from 300 ms to 700 ms after Tuesday's release. The virus scan now runs "
     "inline before the 201; suspect that. Not yet confirmed with a trace."),
    ("d55", "working", "plan", "Next: split parser.py by format",
     "`ingest/parser.py` is 1,400 lines holding CSV, OFX and CAMT. Plan: one module per format behind the "
     "`StatementParser` protocol, moved one format per PR, CSV first because it has the most tests."),
    ("d56", "history", "reflection", "Why the OFX rewrite took three weeks instead of one",
     "The estimate assumed every bank's OFX follows the 2.2 schema. Four of the eleven banks send SGML-style "
     "1.x files with unclosed tags, one sends dates with a bracketed offset, and one repeats transaction ids "
     "across accounts. Each found only when a client's real file failed. What to do next time: collect one "
     "real file from every bank before estimating, run the new parser on all of them in shadow mode beside the "
     "old one for a week, and compare outputs before switching."),
    ("d57", "history", "learning", "Debugging session: duplicated emails after the mailer moved to Celery",
     "Symptom: some clients got the monthly summary two or three times. Cause: the task was routed to a queue "
     "with `acks_late`, and the visibility timeout (one hour) was shorter than the countdown of the scheduled "
     "send, so Redis handed the same message to a second worker. Fix: the send is scheduled by beat at the hour "
     "instead of with a countdown, and each send writes a row to `sent_summaries` with a unique "
     "(client_id, period) first, so a second delivery does nothing."),
    ("d58", "memory_bank", "decision", "Why amounts are numeric(18,4) in the database but 2 places on screen",
     "Amounts are stored with four decimal places because card fees and FX conversions produce sub-penny "
     "values that must add up exactly over a month. They are rounded half-even to the currency's minor unit "
     "only when shown or exported, never in storage."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("where do env vars get parsed and validated", ("d01",)),
    ("why do urls have those long random codes instead of numbers", ("d02",)),
    ("should we swap the job runner for something async native", ("d03",)),
    ("why doesnt the status bar refresh via live push", ("d04",)),
    ("can we use an in-memory db for pytest to speed things up", ("d05",)),
    ("do we have a message bus, how do downstream consumers hear about stuff", ("d06",)),
    ("can i just trust the generated schema diff", ("d07",)),
    ("is the old orm syntax fine in a fresh file", ("d08",)),
    ("ship something unfinished dark in prod", ("d09",)),
    ("why do the printable reports get a dedicated box", ("d10",)),
    ("should i add redux for api responses in the web client", ("d11",)),
    ("why is the importer retrying forever", ("d12",)),
    ("all green but the terminal just sits there forever", ("d13",)),
    ("app 500s once in the morning then is fine", ("d14",)),
    ("spanish bank download has a weird invisible char glued to the leading field name", ("d15",)),
    ("jobs block each other and pg kills whichever loses", ("d16",)),
    ("the job runners just die silently", ("d17",)),
    ("mocked auth bleeds across pytest cases", ("d18",)),
    ("the figures list shows twelve ahead of nine, ordering is busted", ("d19",)),
    ("browser blocks calls from branch builds of the web ui", ("d20",)),
    ("group of jobs completes but the last bit doesnt kick off", ("d21",)),
    ("can i hand an sqlalchemy entity to a celery job", ("d22",)),
    ("type checker green on my machine, red in the pipeline", ("d23",)),
    ("shipping a new version cuts off jobs mid-run", ("d24",)),
    ("two code stylers keep undoing each other", ("d25",)),
    ("totals screen takes forever to load", ("d26",)),
    ("ok on my laptop, crashes once deployed: can't encode a datetime", ("d27",)),
    ("set up the db locally", ("d28",)),
    ("get a repl on prod", ("d29",)),
    ("what migration is live right now", ("d30",)),
    ("flamegraph of a slow route", ("d31",)),
    ("frontend typings stale after i edited a backend model", ("d32",)),
    ("poke at the live database from my mac without being able to break anything", ("d33",)),
    ("quickest way to redo only what broke while hacking", ("d34",)),
    ("retry a single stuck statement", ("d35",)),
    ("ok if i pull in something from pypi for this?", ("d36",)),
    ("formatted literals inside warnings ok?", ("d37",)),
    ("which filesystem api should i use for locations on disk", ("d38",)),
    ("us or uk english for the wording customers see", ("d39",)),
    ("how do i like replies formatted", ("d40",)),
    ("same check for 5 inputs, how should i write it", ("d41",)),
    ("what's the preprod pg called", ("d42",)),
    ("where do crashes get reported", ("d43",)),
    ("who do we buy the web address from", ("d44",)),
    ("where does the spa live", ("d45",)),
    ("what volume of bank docs do we get", ("d46",)),
    ("safe way to get rid of a field in prod", ("d47",)),
    ("schema change on the live db hangs, who's holding it up", ("d48",)),
    ("dead rows piling up on the ledger lines", ("d49",)),
    ("what stops a re-upload from doubling everything", ("d50",)),
    ("where is debits equal credits enforced", ("d51",)),
    ("check yesterday's backup is actually usable", ("d52",)),
    ("change the object store credentials", ("d53",)),
    ("why is sending a statement slower lately", ("d54",)),
    ("that giant file with all the readers, what are we doing about it", ("d55",)),
    ("why was that import format project so late", ("d56",)),
    ("customers getting the same notification twice", ("d57",)),
    ("why 4 dp in the db when we show 2", ("d58",)),
]
