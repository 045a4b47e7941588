"""Fresh notes asked in other words, through the running server: a tuning set for notes against notes (issue 26).

Written in session 22 for tuning how memdir's vector channel ranks one note against another, and committed before
anything was measured on it. Unlike the seventh and eighth sets (half of theirs sit beside the example vault's
books), every memory here is a note written next to one or two of the example vault's own notes (not its books): a
follow-up to a decision, the same subsystem's next trap, the person or the date a note leaves open. So the fresh
note's rival is another short note of the same project that shares its subject, and the question, which shares no
content word with the fresh note, often shares some with the older one. This is the half of the gap to plain cosine
that books do not explain (session 21: with the books left out of every list, memdir's vector channel ranked the
eighth hold-out's notes at MRR@10 0.706 against 0.753 for whole-memory cosine).

`python bench/served_fresh.py --set tune9 --example-only` measures it the way the outside measure does. The
questions are typed the way a developer asks an assistant: short, long, a pasted error or log line, "what did we
decide about ...". A memory or question is changed after a result only to fix a rule the checker enforces, and the
write-up says so.

A memory: (key, collection, type, title, content); a question: (text, wanted keys). Every memory is wanted by
exactly one question, and no question shares a content word (after stemming and stop words) with a memory it
wants: bench/served_fresh.py checks both before it measures. The comment before each memory names the older
note(s) it sits beside.
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    # uv-run-everything, ruff-rule-selection
    ("t01", "patterns", "fact", "Pre-commit runs ruff through uv",
     "`.pre-commit-config.yaml` has two local hooks, `uv run ruff check` and `uv run ruff format --check`, so they use "
     "the locked ruff version rather than a mirror's. Each clone needs `uv run pre-commit install` once."),
    # timezone-bug-statement-dates
    ("t02", "patterns", "learning", "CAMT value dates can precede the booking date",
     "In CAMT.053 `ValDt` is sometimes up to three days before `BookgDt` (card payments settle late). Reconciliation "
     "matches on `BookgDt` only; `ValDt` is stored for interest calculations and never used for matching."),
    # job-locking-v3-postgres-advisory-locks
    ("t03", "patterns", "learning", "Advisory lock keys use hashtextextended, never hashtext",
     "`hashtext()` returns a 32-bit int, and two accounts' keys collided in testing, so one import waited on an "
     "unrelated one. `hashtextextended(:key, 0)` returns a bigint, which is what `pg_try_advisory_xact_lock` takes."),
    # job-locking-v1-redis-setnx, job-locking-v2-redis-lock-extend
    ("t04", "memory_bank", "fact", "Redis holds only Celery's broker and results now",
     "Since the v3 locking change nothing else lives in Redis: no caches, no locks, no rate limiters. It is an "
     "Upstash instance with `maxmemory-policy noeviction`, so a full instance refuses writes instead of silently "
     "dropping messages."),
    # flaky-test-unordered-ledger-query
    ("t05", "patterns", "fact", "pytest-randomly shuffles the suite in CI",
     "CI runs with pytest-randomly, which prints `Using --randomly-seed=NNN` at the top. Pass that seed to "
     "`uv run pytest -p randomly --randomly-seed=NNN` to get the identical shuffle on your machine."),
    # retry-celery-tasks-idempotently
    ("t06", "patterns", "decision", "Import tasks: soft time limit 10 min, hard 12 min",
     "`import_statement` has `soft_time_limit=600` and `time_limit=720`. On `SoftTimeLimitExceeded` it rolls back, "
     "marks the upload `failed` with the reason, and does not retry; the hard limit only catches a hung C parser."),
    # job-locking-v2-redis-lock-extend, celery-visibility-timeout-redelivery
    ("t07", "patterns", "learning", "worker_prefetch_multiplier is 1",
     "With the default of 4, a child that took a 20-minute CAMT import had already reserved three small imports, "
     "which sat untouched while other children were idle. `worker_prefetch_multiplier = 1` together with "
     "`acks_late` means each child reserves exactly one message."),
    # decimal-for-money
    ("t08", "patterns", "decision", "Rounding residue goes to account 7990",
     "When a multi-line entry is converted to GBP, the converted lines can miss zero by a penny or two. That "
     "residue is posted as its own line to 7990 Rounding differences; it is never spread over the other lines."),
    # uv-run-everything, dependency-bump-checklist
    ("t09", "patterns", "preference", "uv.lock conflicts: regenerate, never hand-merge",
     "On a rebase or merge conflict in `uv.lock`, take main's copy (`git checkout --theirs uv.lock` during a "
     "rebase) and run `uv lock`. Hand-edited lockfiles have broken `uv sync --locked` in CI twice."),
    # ruff-rule-selection
    ("t10", "history", "decision", "ruff's T20 rule added: no print() in src/",
     "Two `print(statement_id)` calls reached production and cluttered the Fly logs. `T20` is now selected; use "
     "`structlog.get_logger()` instead. Tests and scripts/ are exempt via `per-file-ignores`."),
    # keep-migration-commits-unsquashed, prefer-squash-merges
    ("t11", "memory_bank", "decision", "Rebase-merge is only for Alembic PRs",
     "Dana settled the open question on 24 Nov: a PR that adds an Alembic revision is rebased and merged so each "
     "revision is its own commit on main; every other PR is squashed as before."),
    # celery-visibility-timeout-redelivery
    ("t12", "patterns", "fact", "The beat schedule lives in worker.py",
     "`app.conf.beat_schedule` in `src/tidewater/worker.py` is the only place cron entries are defined; "
     "django-celery-beat was rejected because a schedule edited in a database is invisible in review."),
    # fx-rates-from-ecb
    ("t13", "patterns", "decision", "When the ECB fetch fails, reuse yesterday's rate and alert",
     "After three failed attempts `fx.fetch_ecb_rates` copies the previous business day's row forward with "
     "`stale = true` and sends a Sentry warning. Revaluation refuses to post with a stale rate at period end."),
    # ofx-cp1252-encoding-fix
    ("t14", "history", "learning", "Barclays CSV exports start with a byte-order mark",
     "The parser read the first header as '\\ufeffTransaction' because Barclays writes a UTF-8 BOM. CSVs are now "
     "opened with `encoding='utf-8-sig'`, and the separator is sniffed with `csv.Sniffer` on the first 4 KB because "
     "some exports use semicolons."),
    # alembic-enum-autogenerate
    ("t15", "history", "learning", "compare_server_default must be switched on in env.py",
     "Autogenerate ignores `server_default` edits unless `context.configure(compare_server_default=True)`; a "
     "`DEFAULT now()` added on a model produced an empty revision. It is now on in `migrations/env.py`."),
    # outage-review-duplicate-ledger-entries
    ("t16", "patterns", "decision", "A nightly trial-balance check pages on mismatch",
     "`ledger.check_trial_balance` runs at 02:00 and compares each client's ledger closing balance with the last "
     "bank closing balance. Any difference opens a PagerDuty incident; the 14 Nov outage went unseen for a day "
     "because nothing compared them."),
    # fly-release-command-migrations
    ("t17", "patterns", "fact", "release_command_timeout is 10 minutes",
     "`[deploy] release_command_timeout = \"10m\"` in fly.toml; Fly's default of five minutes was too short for "
     "backfills on the big clients. Anything slower belongs in a Celery task, not in Alembic."),
    # pr-418-review-notes
    ("t18", "working", "observation", "PR #431 review notes",
     "Dana's review of PR #431 (ledger v2 read path), 26 Nov: the engine fixture should be session-scoped and every "
     "test wrapped in a SAVEPOINT that rolls back; asserting on rendered HTML is brittle, assert on the query result."),
    # ledger-v2-step-3-in-progress, ledger-v2-migration-plan
    ("t19", "memory_bank", "plan", "Ledger v2 step 4: reads go through a view behind a flag",
     "Step 4 adds the view `v_postings_gbp` (postings joined to `fx_rates`) and moves the P&L, balance sheet and "
     "trial balance to it one at a time behind the flag `ledger_v2_reads`, each compared with the old output for "
     "the two pilots first."),
    # duplicate-fx-postings-investigation
    ("t20", "history", "reflection", "Confirmed: two beat Machines on staging",
     "`fly status` showed two beat Machines after Tuesday's bare `fly scale count 2`. Scaled back to one, and the "
     "beat process now exits at start if another beat holds the Redis key `beat:singleton`."),
    # dana-okafor-profile
    ("t21", "memory_bank", "fact", "Dana is away 22 Dec to 3 Jan",
     "No deploys while Dana is on leave except hotfixes, which Priya Shah approves. Anything that can wait goes "
     "into the January list."),
    # session-journal-2026-11-21
    ("t22", "working", "journal", "Session journal, 24 Nov",
     "- Morning: PR #418 rebased and merged; migrations ran in 40 s on production.\n- Afternoon: started step 4, "
     "the view for GBP reports.\n- Open: Kestrel Marine's October statement still has three unmatched lines."),
    # notes/fly-io-deploy-quirks
    ("t23", "patterns", "fact", "fly secrets set --stage, then deploy",
     "`fly secrets set KEY=value` restarts every Machine at once. With `--stage` the secret waits for the next "
     "`fly deploy`, which rolls Machines one at a time."),
    # ledger-glossary
    ("t24", "memory_bank", "fact", "Unmapped statement lines post to 9999 Suspense",
     "A line the rules cannot map to an account posts against 9999 Suspense. The suspense balance must be zero "
     "before a month is closed; the close screen blocks until it is."),
    # dana-okafor-profile
    ("t25", "memory_bank", "fact", "Priya Shah owns Fly.io networking and DNS",
     "Priya Shah (platform team) set up the private 6PN network, the `tidewater.app` DNS zone and the TLS "
     "certificates. Questions about Fly networking go to her in #platform, not to Dana."),
    # tidewater-project-context
    ("t26", "memory_bank", "fact", "Some clients' accountants upload over SFTP",
     "Besides the web upload, `sftp.tidewater.app` accepts files from six accountancy firms. It is a small Fly "
     "Machine that watches its inbox folder and posts each file to the upload endpoint with the firm's API key."),
    # python-311-only
    ("t27", "patterns", "fact", "typing.override comes from typing_extensions",
     "`@override` is in `typing` only from 3.12; import it from `typing_extensions` (already a dependency through "
     "Pydantic). `Self`, `tomllib` and `ExceptionGroup` are 3.11 and fine."),
    # ship-multi-currency-by-december
    ("t28", "memory_bank", "fact", "The pilots are Harbour Bakery and Kestrel Marine",
     "Harbour Bakery has a EUR account for its French supplier; Kestrel Marine has EUR and USD accounts for "
     "charter income. Both agreed to reconcile November by hand beside the new ledger."),
    # never-force-push-main
    ("t29", "memory_bank", "constraint", "Branch protection on main includes admins",
     "GitHub requires one approving review and green `test` and `lint` checks on main, and the rule is enforced "
     "for administrators too, so nobody can bypass it from the web UI."),
    # ledger-v2-migration-plan
    ("t30", "memory_bank", "decision", "Step 5 waits for two clean month-ends",
     "The contract step runs only after November and December both close with every pilot account reconciled in "
     "its own currency. Until then the old check stays, so step 4 can be undone."),
    # code-style-preferences
    ("t31", "memory_bank", "preference", "Google-style docstrings on public API only",
     "Docstrings use the Google layout (Args, Returns, Raises) and only on what other modules import. Private "
     "helpers get none; their names should say enough."),
    # statement-file-size-limit
    ("t32", "memory_bank", "constraint", "Original statements are kept seven years",
     "Uploaded files go to the Tigris bucket `tidewater-statements` with object lock in compliance mode for seven "
     "years, as HMRC requires. They cannot be deleted early, even by us."),
    # prefer-squash-merges
    ("t33", "patterns", "fact", "A GitHub Action checks PR titles",
     "`amannn/action-semantic-pull-request` rejects a PR whose title is not Conventional Commits (`fix(ingest): ...`). "
     "Since the squash uses the title as the subject, the check keeps main's log in that form."),
    # celery-visibility-timeout-redelivery, statement-file-size-limit
    ("t34", "patterns", "learning", "Celery children recycled every 50 tasks",
     "`--max-tasks-per-child=50` on the import process group. lxml's parser leaked about 20 MB per CAMT statement "
     "and the OOM killer ended a child after a few hundred; recycling keeps RSS under 400 MB."),
    # flaky-test-unordered-ledger-query
    ("t35", "patterns", "fact", "Each xdist worker gets its own database",
     "With `pytest -n auto`, conftest creates `test_tidewater_gw0`, `test_tidewater_gw1`, ... from a template "
     "database, so parallel workers never see each other's rows."),
    # decimal-for-money
    ("t36", "patterns", "learning", "JPY arrives without minor units",
     "JPY values arrive as `12500`, with no fractional part; the currency exponent table says 0. "
     "Quantizing JPY to two decimals made a test expect `12500.00` against the bank's `12500`."),
    # timezone-bug-statement-dates
    ("t37", "patterns", "fact", "The uploads dashboard counts by London day",
     "The 'imported today' tile groups `imported_at` by `Europe/London` calendar day, not UTC, so a file uploaded "
     "at 00:30 BST counts for the new day. The underlying column stays UTC."),
    # outage-review-duplicate-ledger-entries
    ("t38", "patterns", "fact", "scripts/dedupe_postings.py, dry run first",
     "`uv run python scripts/dedupe_postings.py --client 17 --since 2026-11-14 --dry-run` lists the duplicate "
     "postings it would reverse. Without `--dry-run` it posts reversals; it never deletes."),
    # ofx-cp1252-encoding-fix, tidewater-project-context
    ("t39", "memory_bank", "constraint", "MT940 is not supported",
     "We read CSV, OFX and CAMT.053 only. A client whose bank offers MT940 is asked for CAMT.053, which every UK "
     "bank on our list can produce."),
    # alembic-enum-autogenerate, keep-migration-commits-unsquashed
    ("t40", "patterns", "preference", "Alembic revision ids are timestamps",
     "Create revisions with `uv run alembic revision --rev-id 20261124_1030 -m ...` so files sort by date and two "
     "branches never produce two random heads that look alike."),
    # notes/fly-io-deploy-quirks
    ("t41", "memory_bank", "fact", "Fly primary region is lhr",
     "The app, workers and Postgres primary run in `lhr`; a read replica runs in `ams` for failover only, never "
     "for reads."),
    # never-force-push-main
    ("t42", "patterns", "fact", "Hotfixes start from the deployed tag",
     "The deploy workflow tags each release `v2026.11.24.1`. A hotfix branches from that tag, not from main, and "
     "its PR targets main; the tag after it is deployed by hand with `fly deploy --image`."),
    # code-style-preferences
    ("t43", "memory_bank", "preference", "Absolute imports only inside src/tidewater",
     "ruff's TID252 forbids `from ..ledger import x`; write `from tidewater.ledger import x`. No wildcard imports "
     "anywhere."),
    # dependency-bump-checklist
    ("t44", "history", "decision", "Renovate turned off in August",
     "Renovate opened about forty PRs a month and Dana merged none of them. It is disabled; the monthly checklist "
     "replaced it."),
    # ship-multi-currency-by-december, fx-rates-from-ecb
    ("t45", "memory_bank", "decision", "GBP reports use the month-end rate",
     "Balance sheets in GBP convert foreign balances at the last ECB rate of the month; the P&L converts each "
     "posting at its own date's rate. The accountants confirmed both."),
    # dana-okafor-profile
    ("t46", "memory_bank", "preference", "Standup is async in #tidewater-dev at 09:15",
     "Three lines by 09:15 London time: done, doing, blocked. No call unless someone is blocked."),
    # statement-file-size-limit
    ("t47", "memory_bank", "constraint", "Uploads refuse zip archives",
     "The upload endpoint accepts one statement per file; `.zip` and `.7z` are refused with a message asking for "
     "the files one by one, because a zip bomb could fill the worker's disk."),
    # retry-celery-tasks-idempotently
    ("t48", "patterns", "fact", "Xero export sends an Idempotency-Key",
     "The export task sends `Idempotency-Key: export-{entry_id}` on every POST to Xero, so a retried task after a "
     "timeout does not create a second invoice."),
    # ledger-glossary, outage-review-duplicate-ledger-entries
    ("t49", "memory_bank", "constraint", "Journal entries are reversed, never edited",
     "A wrong entry is corrected by posting its reversal and then the right entry; postings are append-only, and "
     "the database role the app uses has no UPDATE or DELETE grant on them."),
    # ship-multi-currency-by-december, ledger-glossary
    ("t50", "memory_bank", "fact", "Unrealised FX gain/loss is account 7100",
     "`fx.revalue_balances` posts the month-end difference against 7100 Unrealised FX gain/loss and reverses it on "
     "the first day of the next month."),
    # ledger-v2-step-3-in-progress
    ("t51", "working", "context", "[WIP] step 4: v_postings_gbp is slow on Kestrel",
     "The view takes 4 s for Kestrel Marine's 90,000 postings: it looks up `fx_rates` row by row. Trying an index on "
     "`fx_rates (currency, date DESC)` and a LATERAL join before moving the P&L."),
    # fly-release-command-migrations
    ("t52", "patterns", "learning", "Concurrent index builds need an autocommit block",
     "`op.create_index(..., postgresql_concurrently=True)` must run inside `with op.get_context().autocommit_block():`, "
     "in a revision of its own; Alembic's transaction would make Postgres refuse it."),
    # celery-visibility-timeout-redelivery
    ("t53", "patterns", "fact", "Two Celery queues: imports and default",
     "`task_routes` sends `import_statement` to `imports` and everything else to `default`. Fly runs "
     "`worker-imports` and `worker-default` as separate process groups, so a backlog of big files never delays "
     "revaluation."),
    # python-311-only
    ("t54", "memory_bank", "fact", "The base image is pinned by digest",
     "`FROM python:3.11-slim-bookworm@sha256:...`; the digest is bumped in the monthly checklist, so Debian security "
     "fixes arrive once a month, not on every build."),
    # uv-run-everything
    ("t55", "patterns", "fact", "CI caches uv's downloads keyed on uv.lock",
     "`astral-sh/setup-uv` with `enable-cache: true` and `cache-dependency-glob: uv.lock`: a job whose lockfile did "
     "not change restores wheels instead of fetching them again."),
    # decimal-for-money, ofx-cp1252-encoding-fix
    ("t56", "patterns", "learning", "Negative amounts: parentheses or a trailing minus",
     "Some CSV exports write `(12.50)` or `12.50-` for -12.50. The parser normalises both before `Decimal(text)`, "
     "and a value with both forms is rejected."),
    # outage-review-duplicate-ledger-entries
    ("t57", "memory_bank", "fact", "SEV levels",
     "SEV1: a client's ledger is wrong or imports are stopped for everyone. SEV2: one client blocked. SEV3: anything "
     "with a workaround. SEV1 and SEV2 get a written review within a week."),
    # keep-migration-commits-unsquashed, prefer-squash-merges
    ("t58", "memory_bank", "preference", "Conventional Commits scopes",
     "Allowed scopes: `ingest`, `ledger`, `fx`, `worker`, `api`, `deps`, `ci`. A PR touching two of them uses the "
     "one its title is about; no scope lists."),
    # tidewater-project-context
    ("t59", "memory_bank", "fact", "Sentry project tidewater-api",
     "Exceptions from the app and the workers go to the Sentry project `tidewater-api`; an alert rule mails Dana "
     "about any new issue from `tidewater.ledger`."),
    # statement-file-size-limit
    ("t60", "patterns", "learning", "iterparse needs huge_tree for attachments",
     "A CAMT.053 file carried a 12 MB base64 attachment in one element; `iterparse` refused it until "
     "`huge_tree=True` was passed. Only for files from the upload bucket, never for untrusted input elsewhere."),
    # fx-rates-from-ecb
    ("t61", "patterns", "fact", "TARGET2 closing days are a hardcoded list",
     "New Year's Day, Good Friday, Easter Monday, 1 May, 25 and 26 December: no ECB publication. The list lives in "
     "`fx/calendar.py` per year, and `fx.fetch_ecb_rates` skips them instead of retrying."),
    # dana-okafor-profile, code-style-preferences
    ("t62", "memory_bank", "preference", "A fix PR starts with the red test",
     "Dana wants the first commit of a fix to add the failing test alone, so CI shows it red before the change "
     "turns it green."),
    # never-force-push-main
    ("t63", "memory_bank", "constraint", "Commits on main must be signed",
     "Sign with an SSH key: `git config gpg.format ssh`, `git config user.signingkey ~/.ssh/id_ed25519.pub`, "
     "`git config commit.gpgsign true`, and add the same key on GitHub as a signing key."),
    # ledger-glossary (reconciliation)
    ("t64", "memory_bank", "constraint", "Reconciliation tolerance is zero",
     "A statement line and a posting match only when the amounts are equal to the penny. Close-but-not-equal pairs "
     "are shown for review and never matched automatically."),
    # celery-visibility-timeout-redelivery
    ("t65", "patterns", "fact", "Flower runs at flower.internal",
     "Celery's Flower dashboard is at `http://flower.internal:5555` on the 6PN network, behind basic auth (the "
     "password is in 1Password, 'tidewater flower')."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("something lints my code every time i save work to git, how do i set that up on a fresh laptop", ("t01",)),
    ("a bank line has two calendar fields, which one do we reconcile against", ("t02",)),
    ("which postgres function turns our mutex names into numbers, and why that function", ("t03",)),
    ("what else do we keep in the in-memory store apart from queued jobs", ("t04",)),
    ("a test only fails when tests execute in a certain sequence, how do i replay that sequence locally", ("t05",)),
    ("how long can a background job run before the worker kills it", ("t06",)),
    ("a quick job waited behind a slow job on the same box while other processes did nothing", ("t07",)),
    ("the sterling amounts of a foreign journal don't add up exactly, where does the leftover fraction end up", ("t08",)),
    ("after pulling, the dependency pin file is full of <<<<<<< markers, what now", ("t09",)),
    ("I left a stray debugging output in and the pipeline went red", ("t10",)),
    ("what did we decide about landing pull requests with schema changes", ("t11",)),
    ("where are the periodic job timings configured", ("t12",)),
    ("httpx.ConnectTimeout: timed out while getting eurofxref-daily.xml, what happens to today's conversion", ("t13",)),
    ("KeyError: 'Date'  row keys: ['\\ufeffDate', 'Amount', 'Description']", ("t14",)),
    ("I changed a column's fallback value in the orm class and alembic generated nothing", ("t15",)),
    ("how would we notice if the books stop agreeing with reality", ("t16",)),
    ("how much time does the pre-rollout db upgrade step get before the platform gives up", ("t17",)),
    ("what feedback did the boss leave on the db setup in the specs of the reporting-side change", ("t18",)),
    ("how do the profit and loss pages move over to the per-currency schema", ("t19",)),
    ("so why did the month-end foreign exchange job run twice", ("t20",)),
    ("who signs off urgent fixes over christmas", ("t21",)),
    ("when did the dual-write change finally land", ("t22",)),
    ("how can I change an env var without every box rebooting at once", ("t23",)),
    ("where does money go when the categorisation can't work out what it is", ("t24",)),
    ("who can help with https certs for our custom hostname", ("t25",)),
    ("can a customer send their bank exports without using the website", ("t26",)),
    ("which decorator for marking a method that replaces its parent's do I pull from the backport package", ("t27",)),
    ("which two customers are trying the foreign-currency feature first", ("t28",)),
    ("can an org owner skip the mandatory sign-offs on the default trunk", ("t29",)),
    ("when can the legacy sterling-only integrity rule finally be deleted", ("t30",)),
    ("what comment format does the boss want above functions", ("t31",)),
    ("how long must we hold on to the raw documents customers give us", ("t32",)),
    ("my merge proposal fails an automated lint on its heading format", ("t33",)),
    ("billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL) Job: 412.", ("t34",)),
    ("concurrent spec processes trample each other's data", ("t35",)),
    ("how many places after the point does yen have", ("t36",)),
    ("the daily intake chart puts a statement from just after midnight under the wrong date", ("t37",)),
    ("how do I clean up doubled entries safely without making it worse", ("t38",)),
    ("a customer's lender only exports the old SWIFT format, can we ingest that", ("t39",)),
    ("how should new schema change scripts be named", ("t40",)),
    ("which datacenter city are we hosted in", ("t41",)),
    ("prod is broken and trunk already has unreleased work, what do I base my urgent fix on", ("t42",)),
    ("can I use dot-relative module references inside the package", ("t43",)),
    ("why is there no bot proposing upgrade pull requests", ("t44",)),
    ("for the sterling summary, which day's exchange figure applies to euro holdings", ("t45",)),
    ("where do I post what I worked on yesterday", ("t46",)),
    ("a customer tried sending a compressed bundle of several months", ("t47",)),
    ("if the job runs again after calling the accounting package, how do we avoid doing it twice", ("t48",)),
    ("a bookkeeper made a mistake last week, can I just remove the bad row", ("t49",)),
    ("which nominal code do currency swings at period close get booked to", ("t50",)),
    ("why does the new sterling query need seconds on the bigger customer's books", ("t51",)),
    ("adding a lookup structure without locking writers fails in the db upgrade script", ("t52",)),
    ("how are jobs split between the consumer pools", ("t53",)),
    ("why did the container keep an old OS library even after upstream patched it", ("t54",)),
    ("why do pipeline runs spend two minutes pulling packages every time", ("t55",)),
    ("how do we read a debit written like (45.00) in a bank's spreadsheet", ("t56",)),
    ("how do we rank how serious a production problem is", ("t57",)),
    ("what goes in the parentheses of my change's subject line", ("t58",)),
    ("where do errors from production show up", ("t59",)),
    ("a bank statement with a scanned document inside breaks the xml reader", ("t60",)),
    ("on which dates is no euro reference rate published", ("t61",)),
    ("when I'm repairing a defect, what should my branch contain before the code edit", ("t62",)),
    ("my pushes display as unverified on the hosting site, how do I sort that out", ("t63",)),
    ("do we auto-accept candidates that are a few cents off", ("t64",)),
    ("is there a web ui to see which background jobs are running", ("t65",)),
]
