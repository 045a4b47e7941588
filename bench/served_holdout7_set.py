"""Fresh memories asked in other words, through the running server: the seventh hold-out set of issue 26.

Written in session 18 by the helper who then tunes how book sections rank against notes on hold-out 4, and
committed (and measured once on main) before any ranking changed, so that it checks that work for overfitting.
Nobody tunes on it or reads its per-question output. `python bench/served_fresh.py --set holdout7 --example-only`
measures it the way the outside measure does. A memory or question is changed after a result only to fix a rule
the checker enforces, and the write-up (bench/results/s18-books18.md) says so.

The mix: what a developer's assistant writes down day to day (decisions, learnings, fixes, how-tos,
preferences), about half on topics the example vault's three books also cover (the operations runbook, the
Postgres cheatsheet, the ledger schema reference: deploys, backups, locks, vacuum, postings, FX rates), where a
book section competes with the fresh note, and half on topics no book touches (the web client, the editor,
review habits, logging, CI). No memory repeats one of the six other fresh sets. The questions are typed the way
a developer types into an assistant: short, lower case, often a task rather than a question.

A memory: (key, collection, type, title, content); a question: (text, wanted keys). Every memory is wanted by
exactly one question, and no question shares a content word (after stemming and stop words) with a memory it
wants: bench/served_fresh.py checks both before it measures.
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    # -- next to the books: deploys, backups, Postgres, the ledger ----------------------------------------------
    ("h01", "memory_bank", "decision", "Rollbacks redeploy the previous image; migrations are never downgraded",
     "When a release misbehaves we redeploy the last good image tag. Alembic downgrade scripts are not "
     "trusted in production: every migration is written to be compatible with the previous code, so the old "
     "image runs fine against the newer schema."),
    ("h02", "history", "learning", "A release stalled because the migration waited behind an idle transaction",
     "The deploy hung for twelve minutes: `ALTER TABLE postings ADD COLUMN` queued for an ACCESS EXCLUSIVE lock "
     "behind a psql session left `idle in transaction` since lunch, and every later query queued behind the "
     "ALTER. Now migrations set `lock_timeout = '5s'` and retry."),
    ("h03", "memory_bank", "learning", "Nightly pg_dump failed once the archive grew past the volume",
     "The nightly dump started exiting with `No space left on device` in October. The dump now streams "
     "straight to S3 through `aws s3 cp -` with zstd compression instead of writing a local file first."),
    ("h04", "patterns", "fact", "Restore one table from the nightly dump into a scratch database",
     "`pg_restore -d scratch --table=journal_entries --data-only dump.zst`, after creating `scratch` from the "
     "schema-only section. Never restore into the main database directly: copy the rows across with "
     "`INSERT ... SELECT` once checked."),
    ("h05", "memory_bank", "decision", "FX rates are taken at the booking date, never the settlement date",
     "A foreign-currency line is converted with the European Central Bank reference rate of the day it was "
     "booked. Settlement-date rates made month-end totals change after close whenever a card settled late."),
    ("h06", "history", "learning", "Missing ECB rate on public holidays",
     "The central bank publishes nothing on TARGET holidays, so lines booked on 26 December had no rate and the "
     "conversion job raised. The lookup now falls back to the latest earlier published rate, at most five days "
     "back, and logs which one it took."),
    ("h07", "memory_bank", "learning", "Autovacuum could not keep up with statement_lines",
     "Dead tuples on `statement_lines` reached forty million and scans slowed badly. Set per-table "
     "`autovacuum_vacuum_scale_factor = 0.01` and `autovacuum_vacuum_cost_limit = 2000`; bloat stays under five "
     "percent since."),
    ("h08", "patterns", "fact", "Find the queries that eat the most database time",
     "`SELECT query, calls, total_exec_time FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 20;` "
     "Reset with `pg_stat_statements_reset()` after each release so the numbers describe the current code."),
    ("h09", "memory_bank", "decision", "Postings are immutable; corrections are reversing entries",
     "No UPDATE or DELETE ever touches a posting. A mistake is corrected by a new journal entry that reverses "
     "the wrong one and a third that books it right, both pointing at the original through `reverses_id`."),
    ("h10", "memory_bank", "learning", "Partial index for unreconciled lines",
     "The reconciliation screen filtered `statement_lines` on `matched_at IS NULL` with a sequential scan. A "
     "partial index `ON statement_lines (account_id, booked_on) WHERE matched_at IS NULL` took it from 3 s to "
     "40 ms."),
    ("h11", "history", "learning", "Redis outage: imports kept going, only the worker heartbeats failed",
     "During the provider's Redis maintenance window, uploads were accepted and stored, but Celery could not "
     "enqueue. They were picked up by the sweeper job once Redis came back; nothing was lost. Alert wording "
     "was changed so on-call does not page finance."),
    ("h12", "memory_bank", "decision", "Secrets live in Fly secrets, not in a vault service",
     "We looked at HashiCorp Vault and Doppler. Fly's own secrets store is enough for three apps and one "
     "staging copy; rotation is `fly secrets set` followed by a rolling restart."),
    ("h13", "patterns", "fact", "Kill a runaway report query without restarting anything",
     "Find its pid in `pg_stat_activity` by `application_name = 'reports'`, then `SELECT "
     "pg_cancel_backend(pid)`; use `pg_terminate_backend` only when cancel has no effect after a minute."),
    ("h14", "memory_bank", "learning", "Month-end close deadlocked two workers on the accounts table",
     "Two close tasks locked account rows in different orders. Both now lock with `SELECT ... FOR UPDATE` "
     "ordered by `account_id`, so one waits instead of deadlocking."),
    ("h15", "working", "plan", "Splitting the imports table into raw files and parsed batches",
     "In progress: `import_files` holds the uploaded blob and checksum, `import_batches` one row per parse "
     "attempt. Backfill script written, not yet run on staging; the API still reads the old table."),
    ("h16", "memory_bank", "decision", "Read replica only for the reports service",
     "The reports service reads from the replica; the API never does, because a client who just uploaded a "
     "statement expects to see it at once and replica lag reached ten seconds under load."),
    ("h17", "history", "learning", "Duplicate journal entries came from a retried HTTP request, not the importer",
     "The doubled entries in March came from the mobile client resending a POST after a timeout. Writes now take "
     "an `Idempotency-Key` header and the key is stored with a unique constraint for a day."),
    ("h18", "patterns", "fact", "Check replication lag on the standby",
     "On the primary: `SELECT client_addr, replay_lag FROM pg_stat_replication;` Anything above 30 s pages "
     "on-call; the reports dashboard shows it in the footer."),
    ("h19", "memory_bank", "learning", "Currency amounts summed as float in the CSV export",
     "The export built totals with Python floats and a 0.01 difference appeared on large months. It now sums "
     "`Decimal` values and quantizes once at the end."),
    ("h20", "memory_bank", "preference", "Psql output in expanded mode for wide rows",
     "The user likes `\\x auto` in `.psqlrc` and asks that query results pasted into chat keep that vertical "
     "layout rather than a wrapped table."),
    ("h21", "patterns", "fact", "Put the site into maintenance mode",
     "`fly scale count 0 -a tidewater-web` and point the proxy at the static maintenance page with "
     "`fly deploy -a tidewater-maint`. Reverse both in the opposite order afterwards."),
    ("h22", "history", "learning", "Connection storms after deploys exhausted max_connections",
     "Every new machine opened its full pool at boot, and during rolling deploys old and new overlapped. "
     "PgBouncer in transaction mode now sits in front, with twenty server connections."),
    # -- away from the books: the web client, tooling, habits ---------------------------------------------------
    ("h23", "memory_bank", "decision", "Dates in the UI use the browser's Intl formatter",
     "All dates and money are formatted with `Intl.DateTimeFormat` and `Intl.NumberFormat` from the user's "
     "locale. We removed moment.js; it was 70 kB of the bundle for three calls."),
    ("h24", "memory_bank", "preference", "Commit messages in the imperative, wrapped at 72",
     "Subject line under fifty characters in the imperative mood, a blank line, then a body explaining why, "
     "wrapped at seventy-two. No ticket numbers in the subject."),
    ("h25", "memory_bank", "preference", "Small pull requests, one concern each",
     "The user would rather review four PRs of a hundred lines than one of four hundred; refactors go in their "
     "own PR ahead of the behaviour change."),
    ("h26", "history", "learning", "Vite dev server stopped hot reloading inside Docker",
     "File change events do not cross the bind mount on macOS. Setting `server.watch.usePolling = true` in "
     "`vite.config.ts` restored it at some CPU cost."),
    ("h27", "memory_bank", "decision", "Structured logs as JSON lines with a request id",
     "Every log line is one JSON object via structlog, carrying `request_id` from the middleware, so a "
     "single customer complaint can be followed across the API and the workers."),
    ("h28", "patterns", "fact", "Cache pip downloads in the CI workflow",
     "`actions/setup-python` with `cache: pip` keyed on `requirements*.txt` cut the install step from "
     "ninety seconds to fifteen."),
    ("h29", "memory_bank", "preference", "Type hints on every public function",
     "The user wants full annotations on anything exported from a module, `from __future__ import "
     "annotations` at the top, and `Any` only with a comment saying why."),
    ("h30", "history", "learning", "Flaky end-to-end test was a race with a toast animation",
     "Playwright clicked the save button while the previous toast still covered it. Waiting for the toast to "
     "detach instead of a fixed timeout made the test stable."),
    ("h31", "memory_bank", "decision", "Tailwind over a component library",
     "Tried Material UI for the settings pages; overriding its theme to match the design took longer than "
     "writing the components. Tailwind with a handful of our own components stays."),
    ("h32", "patterns", "fact", "Bisect a regression quickly",
     "`git bisect start HEAD v1.8.0` then `git bisect run pytest tests/test_export.py -x -q`; it finds the "
     "offending commit unattended in a few minutes."),
    ("h33", "memory_bank", "learning", "Emoji in client names broke the PDF statement",
     "ReportLab's default font has no glyphs for them and rendered black boxes. The template now embeds "
     "Noto Sans with a Noto Emoji fallback."),
    ("h34", "memory_bank", "preference", "Explain before editing large files",
     "Before changing more than one function in a file, the user wants a two-line plan first and to say "
     "go; small single-function edits can be made straight away."),
    ("h35", "history", "learning", "Rate limiting the login endpoint",
     "Credential stuffing in February tried eight thousand passwords in an hour. Login attempts are now "
     "limited to five a minute per address and per account with slowapi, with a captcha after that."),
    ("h36", "memory_bank", "decision", "Uv replaces pip-tools for the lock file",
     "Dependency locking moved from pip-compile to `uv lock`; resolving took forty seconds before and two "
     "now, and one tool covers the virtualenv too."),
    ("h37", "patterns", "fact", "Preview the transactional emails locally",
     "Run MailHog with `docker run -p 8025:8025 mailhog/mailhog`, set `SMTP_HOST=localhost:1025`, and open "
     "the web inbox on port 8025."),
    ("h38", "memory_bank", "learning", "Dark mode made the charts unreadable",
     "Chart.js kept its default grey grid and labels on a near-black background. Colours now come from CSS "
     "variables read at render time, and the charts redraw when the theme toggles."),
    ("h39", "memory_bank", "preference", "Pytest fixtures over setUp methods",
     "No unittest-style classes in new tests: plain functions with fixtures, parametrize for tables of cases, "
     "and factories in `conftest.py`."),
    ("h40", "history", "learning", "Webhook signature check failed behind the proxy",
     "The payment provider's signature is computed over the raw body, but the JSON middleware had parsed and "
     "re-serialised it. The webhook route now reads `await request.body()` before anything else."),
    ("h41", "memory_bank", "decision", "Accessibility: every form field gets a visible label",
     "Placeholders are not labels. An audit found screen readers announced nothing for the search and filter "
     "inputs; every input now has a `<label>` and errors are linked with `aria-describedby`."),
    ("h42", "working", "plan", "Moving the mobile app to Expo Router",
     "Half the screens are ported; the deep links for password reset still go through the old navigator. "
     "Next: the onboarding stack, then drop react-navigation's linking config."),
    ("h43", "patterns", "fact", "Profile memory growth in a worker",
     "Start the worker under `memray run -o worker.bin`, run a batch, then `memray flamegraph worker.bin`; "
     "the leak last time was a module-level cache of parsed files."),
    ("h44", "memory_bank", "preference", "British spelling in code comments too",
     "Not only in customer text: comments and docstrings use colour, behaviour, organise. Identifiers follow "
     "the library they wrap."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("bad version shipped, undo it", ("h01",)),
    ("why did shipping hang for ages on a schema change", ("h02",)),
    ("backup job ran out of disk", ("h03",)),
    ("recover a lost bookkeeping record from yesterday's snapshot", ("h04",)),
    ("which exchange number applies to a purchase abroad", ("h05",)),
    ("forex crashes over christmas", ("h06",)),
    ("garbage growing on the uploaded bank entries", ("h07",)),
    ("what's slowest in postgres overall", ("h08",)),
    ("can i just edit an incorrect amount in place", ("h09",)),
    ("reconciling page is really sluggish", ("h10",)),
    ("what happens to submitted files if the message broker goes away", ("h11",)),
    ("where do api keys and passwords get stored", ("h12",)),
    ("stop a long sql that's hogging the db", ("h13",)),
    ("closing the books: a pair of processes block each other forever", ("h14",)),
    ("status of that refactor of file storage", ("h15",)),
    ("can the backend query the follower", ("h16",)),
    ("phone app double submits", ("h17",)),
    ("how far behind is the secondary", ("h18",)),
    ("spreadsheet download off by a penny", ("h19",)),
    ("how do i like sql answers shown", ("h20",)),
    ("take everything offline for an hour", ("h21",)),
    ("too many clients error right after we ship", ("h22",)),
    ("how should timestamps be shown to people", ("h23",)),
    ("how to word git history", ("h24",)),
    ("big diff or several little changes?", ("h25",)),
    ("frontend doesn't refresh on save in the container", ("h26",)),
    ("how do i trace a user's call through everything", ("h27",)),
    ("speed up github pipeline dependencies", ("h28",)),
    ("do i need typing on helpers", ("h29",)),
    ("browser e2e check fails randomly", ("h30",)),
    ("why not mui", ("h31",)),
    ("locate which revision broke it", ("h32",)),
    ("squares instead of smileys in the generated document", ("h33",)),
    ("ok to rewrite a whole module without asking?", ("h34",)),
    ("brute force sign-in guessing", ("h35",)),
    ("how are package versions pinned", ("h36",)),
    ("see outgoing mail without sending it", ("h37",)),
    ("graphs invisible in night ui", ("h38",)),
    ("how should unit checks be laid out", ("h39",)),
    ("stripe callback rejected as invalid", ("h40",)),
    ("web ui controls need to work with voiceover", ("h41",)),
    ("where are we with the phone nav rewrite", ("h42",)),
    ("celery process keeps using more ram", ("h43",)),
    ("american or uk english in source remarks", ("h44",)),
]
