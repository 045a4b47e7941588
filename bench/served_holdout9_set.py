"""Fresh memories asked in other words, through the running server: the ninth hold-out set of issue 26.

Written in session 22 by the lead while a helper tuned how memdir's vector channel ranks notes against notes, and
committed before that work was measured on it, so that it checks such work for overfitting. Nobody tunes on it or
reads its per-question output. `python bench/served_fresh.py --set holdout9 --example-only` measures it the way the
outside measure does. A memory or question is changed after a result only to fix a rule the checker enforces, and
the write-up says so.

The mix is notes against notes: each fresh memory sits next to one or more of the example vault's own notes on a
near topic (money and currencies, imports and bank files, Celery, locks, migrations, git habits, code style, tests,
deploys, the ledger v2 plan), so that a neighbour note, not only a book section, competes with it; a fifth or so is
on topics the books also cover. No memory repeats a fact of the eight other fresh sets. The questions are typed the
way a developer types into an assistant: short, lower case, often a task rather than a question.

A memory: (key, collection, type, title, content); a question: (text, wanted keys). Every memory is wanted by
exactly one question, and no question shares a content word (after stemming and stop words) with a memory it
wants: bench/served_fresh.py checks both before it measures.
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    # -- money, currencies, bank files (next to decimal-for-money, fx-rates-from-ecb, the OFX and CAMT notes) ------
    ("j01", "patterns", "fact", "Fee rates are whole basis points",
     "A tenant's card and FX fees are stored as integers in basis points (`fee_bps = 35` is 0.35 %), never as a "
     "Decimal fraction, so a rate typed as 0.35 instead of 0.0035 cannot slip through."),
    ("j02", "history", "learning", "Floats crept into the FX revaluation through json.loads",
     "Rates read with plain `json.loads` became floats before they reached Decimal, so 1.1 turned into "
     "1.100000000000000088817. The ECB fetcher now passes `parse_float=Decimal`."),
    ("j03", "patterns", "fact", "Zero-value statement lines are skipped and counted",
     "Some banks emit 0.00 lines for card authorisations that never settled. The importer drops them and shows "
     "`skipped_zero` on the import's summary, so the line count still adds up."),
    ("j04", "patterns", "fact", "Wise puts the conversion fee on a row of its own",
     "Wise's CSV lists the fee for a currency conversion as a separate row sharing the payment's reference; the "
     "importer folds it into that payment's journal entry as a second posting on the fees account."),
    ("j05", "history", "learning", "Lloyds dates came out as month-first",
     "`csv.Sniffer`-style guessing read 03/04/2026 the American way for a Lloyds file. Each bank profile now "
     "names its date format (`%d/%m/%Y` for Lloyds) and nothing is guessed."),
    ("j06", "patterns", "fact", "split_by_account() for CSVs that hold several accounts",
     "Some banks export several accounts in one CSV; `split_by_account()` groups rows by the IBAN column and "
     "makes one import per account, each under its own lock."),
    ("j07", "history", "learning", "IBAN validation refused lower case and spaces",
     "Clients pasted IBANs in lower case with spaces and the form's regex rejected them. We now strip spaces "
     "and upper-case before the mod-97 check."),
    ("j08", "memory_bank", "decision", "Each tenant has its own KMS key for stored statements",
     "The bucket encrypts with SSE-KMS under one key per tenant. Closing an account schedules that key's "
     "deletion, which makes every statement it ever sent unreadable at once (crypto-shredding)."),
    # -- Celery, Redis, locks (next to the celery and job-locking notes) ------------------------------------------
    ("j09", "patterns", "fact", "Celery tasks take ids, never ORM objects",
     "A task receives `statement_id: int` and loads the row itself; pickling a SQLAlchemy object sent stale "
     "state and fails under the JSON serializer anyway."),
    ("j10", "patterns", "fact", "Imports have a soft time limit of nine minutes",
     "`task_soft_time_limit=540`, `task_time_limit=600` on the imports queue: the soft limit raises inside the "
     "parser, which marks the import `failed_timeout` so the dashboard can say why."),
    ("j11", "history", "learning", "Upstash cut idle broker connections after five minutes",
     "The next publish after a quiet spell hung until a TCP timeout. `broker_transport_options` now sets "
     "`health_check_interval: 30`, which pings Redis before the socket goes stale."),
    ("j12", "history", "learning", "Beat ran close_day twice on the October clock change",
     "On 27 Oct the Celery beat schedule ran `close_day` twice, because 01:30 happened twice in Europe/London. "
     "Beat now runs in UTC and the task checks for a `closed_days` row first."),
    ("j13", "memory_bank", "decision", "Closed tenants are purged after thirty days",
     "Closing marks the tenant `closing`; a daily task deletes its rows and files 30 days later unless support "
     "reopens it. The 30 days are in the terms of service, so they are not shortened for anyone."),
    # -- migrations, the ledger, Postgres (next to alembic-enum, ledger-v2 plan, the books) -----------------------
    ("j14", "patterns", "preference", "Migration files carry a date prefix",
     "alembic.ini's `file_template` names revisions `2026_11_03_1412-add_fx_rate.py`, so `ls` shows them in the "
     "order they were written and two branches rarely pick clashing names."),
    ("j15", "history", "learning", "Autogenerate added an index that op.execute had already made",
     "An index created with raw `op.execute` was invisible to autogenerate, which added a second one under "
     "another name. Revisions are now compared with `\\d+` on staging before merging."),
    ("j16", "working", "plan", "Drop the v1 postings columns after fourteen clean days",
     "When dual-write has run 14 days with zero diffs from `compare_ledgers`, migration step 5 drops "
     "`postings.amount_minor` and `postings.currency_code`."),
    ("j17", "patterns", "fact", "web/ may not import ledger internals",
     "An import-linter contract allows `web` to import only `ledger.api`; reaching into `ledger.models` fails "
     "CI with the contract's name in the message."),
    ("j18", "patterns", "fact", "Merchant names are cleaned through merchant_aliases",
     "`AMZN MKTP UK*2K4` and `AMAZON.CO.UK` both map to Amazon through the `merchant_aliases` table (regex, "
     "canonical name); Priya's team adds rows from the admin page, no deploy needed."),
    ("j19", "patterns", "constraint", "Dashboard CSV exports stop at 100,000 rows",
     "A bigger export is built by a task and sent as a download link by email, valid for 24 hours; the "
     "synchronous endpoint would otherwise hold a web worker for minutes."),
    ("j20", "memory_bank", "fact", "Staging sits behind Tailscale",
     "`staging.tidewater.app` resolves only on the tailnet; join with `tailscale up` and the auth key from "
     "1Password's Engineering vault. Nothing on staging is reachable from the open internet."),
    ("j21", "memory_bank", "decision", "Staging is restored from an anonymised dump every Monday",
     "Each Monday at 06:00 a job restores last night's production dump into staging with names, IBANs and "
     "emails replaced by `anonymise.sql`."),
    # -- git, review, style (next to force-push, squash merges, code style, ruff, uv) ----------------------------
    ("j22", "history", "learning", "A force-push to release/2026.10 dropped Tomasz's hotfix",
     "On 3 Oct a rebased `release/2026.10` was pushed with --force and lost a hotfix commit. Branch protection "
     "now covers `release/*`, and `--force-with-lease` is the only form allowed on personal branches."),
    ("j23", "memory_bank", "preference", "Pull requests stay under about 400 changed lines",
     "Lockfiles and migrations are not counted. Anything larger is split before review: Dana reviews in the "
     "mornings and will not start a 2,000-line diff."),
    ("j24", "memory_bank", "preference", "No review while checks are red",
     "Dana does not read a pull request whose CI is failing. Keep it a draft until every check passes, then "
     "request her."),
    ("j25", "memory_bank", "decision", "Reports run on their own Celery queue and Machine",
     "The `reports` queue has a dedicated 2 GB worker Machine, so a quarter-end PDF run cannot starve statement "
     "imports of memory or slots."),
    ("j26", "patterns", "fact", "uv lock --upgrade-package moves one library alone",
     "`uv lock --upgrade-package httpx` and commit uv.lock by itself; `uv lock --upgrade` bumps everything and "
     "belongs in the monthly checklist PR."),
    ("j27", "memory_bank", "decision", "Python 3.12 waits for python:3.12-slim-bookworm to pass the CAMT suite",
     "The move happens when that image runs the CAMT parser's suite green under lxml 5, aimed at February. "
     "Until then requires-python stays `==3.11.*`."),
    ("j28", "patterns", "preference", "Value objects are frozen slotted dataclasses",
     "`@dataclass(frozen=True, slots=True)` inside the core; pydantic only at the API edge, because validating "
     "every internal construction cost 15 % of an import's time."),
    ("j29", "patterns", "fact", "Sentry issues are routed by CODEOWNERS",
     "Sentry's ownership rules read `.github/CODEOWNERS`, so a crash in `reports/` is assigned to Priya and one "
     "in `ledger/` to Dana without anyone triaging."),
    # -- tests (next to the flaky-test note and the dependency checklist) ------------------------------------------
    ("j30", "patterns", "preference", "Tests over ten seconds carry pytest.mark.slow",
     "CI prints `--durations=20`; anything above 10 s must be marked slow, and the default local run (`-m 'not "
     "slow'`) leaves those out."),
    ("j31", "patterns", "preference", "gitleaks runs before every commit",
     "The pre-commit config includes gitleaks; a finding blocks the commit. A false positive goes into "
     "`.gitleaksignore` with its fingerprint, never by skipping the hook."),
    ("j32", "memory_bank", "fact", "Import filenames are kept for support, not parsed",
     "The original name of an uploaded file is stored in `imports.original_name` only to help support find it; "
     "the bank and account are always read from the contents."),
    ("j33", "patterns", "fact", "make replay ID= reruns a production import locally",
     "`make replay ID=<import id>` downloads the original file from the bucket with the read-only role and runs "
     "the parser against a local database with that tenant's settings."),
    # -- deploys, infrastructure, observability (next to fly-io quirks and the runbook) ----------------------------
    ("j34", "history", "learning", "The Docker build reinstalled dependencies on every code change",
     "The Dockerfile copied `.` before `uv sync`, so each edit cost a four-minute reinstall. It now copies "
     "pyproject.toml and uv.lock first."),
    ("j35", "history", "learning", "The statement PDF used the server clock for its date",
     "Statements generated just after midnight UTC carried the previous day for clients in Asia. The generator "
     "now takes the tenant's zone and prints the local date of issue."),
    ("j36", "memory_bank", "fact", "Sentry samples 20 % of transactions, all errors",
     "`traces_sample_rate=0.2`; errors are always sent. Raising it for a day to chase one endpoint is fine, "
     "leaving it raised is not (the quota runs out mid-month)."),
    ("j37", "memory_bank", "constraint", "No customer data reaches Sentry",
     "`send_default_pii=False`, and a `before_send` hook drops request bodies and scrubs IBANs; a statement "
     "line leaked into an event counts as an incident."),
    ("j38", "patterns", "fact", "The Imports / throughput board in Grafana",
     "Queued, parsing and failed per minute, and p95 parse time by bank; the alert on more than 5 failures a "
     "minute lives on that board too."),
    ("j39", "patterns", "preference", "Feature flags live in a Postgres table",
     "`flag_enabled(name, tenant)` reads the `flags` table through a 30 s cache: an env var needs a redeploy to "
     "flip, a row does not."),
    # -- product, clients, process (next to the project context and multi-currency objective) ----------------------
    ("j40", "working", "plan", "Multi-currency order: revaluation, then display, then reports",
     "Weeks 1-2 the nightly revaluation of foreign balances, week 3 each account shown in its own currency, the "
     "reports last."),
    ("j41", "memory_bank", "decision", "Transactional email is written in MJML",
     "Every email template is MJML compiled at build time to inline-styled HTML, because Outlook desktop "
     "ignored the stylesheet and rendered the old templates unstyled."),
    ("j42", "memory_bank", "decision", "API keys start with tw_live_ or tw_test_",
     "The prefix tells environments apart at a glance and lets GitHub's secret scanning recognise a leaked key; "
     "we registered the pattern with GitHub's partner programme."),
    ("j43", "memory_bank", "fact", "Journals export to Xero now, QuickBooks later",
     "The Xero integration has pushed journals through its API since September; QuickBooks Online comes after "
     "multi-currency, not before."),
    ("j44", "memory_bank", "constraint", "We never hold a client's bank password",
     "Only uploaded files and Open Banking tokens through TrueLayer; storing credentials or screen-scraping is "
     "outside our FCA permissions."),
    ("j45", "history", "learning", "Statement emails to outlook.com went to spam until DKIM",
     "Postmark mail from mail.tidewater.app bounced or landed in junk until the SPF and DKIM records were "
     "added; DMARC is p=quarantine now."),
    ("j46", "memory_bank", "decision", "Teams above 20 seats may pay yearly by invoice",
     "Everyone else pays by card through Stripe Billing; Finance raises the yearly invoices by hand."),
    ("j47", "memory_bank", "fact", "Priya Raman owns reports/",
     "She wrote the PDF statement generator and reviews every change to it; layout questions go to her, not "
     "Dana."),
    ("j48", "memory_bank", "fact", "Fly Machines restart on failure, at most ten times",
     '`restart.policy = "on-failure"` with `max_retries = 10` in fly.toml; after that the Machine stays stopped '
     "and the health check alert fires."),
    ("j49", "working", "observation", "Rounding differences in the VAT report",
     "The quarterly VAT figure differs from the accountant's by a few pence: we round each line, they round the "
     "total. Undecided which one HMRC expects; asked Dana."),
    ("j50", "history", "learning", "A Redis failover lost the Celery beat schedule lock",
     "After Upstash failed over, two beat processes ran for an hour because the lock key was gone; beat now "
     "runs on one dedicated Machine with no lock at all."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("what unit do we keep commission percentages in", ("j01",)),
    ("tiny cents errors after converting euros to dollars", ("j02",)),
    ("why does the upload report list some entries as ignored", ("j03",)),
    ("how do we book the charge for changing currencies on a transfer app export", ("j04",)),
    ("a uk lender's entries showed the 3rd of april as the 4th of march", ('j05',)),
    ("a spreadsheet mixed entries from someone's savings and checking", ("j06",)),
    ("people typing their account numbers with gaps got an error", ("j07",)),
    ("how do we make a departing customer's documents unrecoverable", ('j08',)),
    ("what should i pass to a background job, whole records or keys", ("j09",)),
    ("what happens when reading an enormous upload never ends", ("j10",)),
    ("sending a job hangs after nothing has happened for a while", ("j11",)),
    ("why did the nightly wrap-up fire two times when daylight saving ended", ("j12",)),
    ("how long do we keep an account's data after they leave", ('j13',)),
    ("how are schema upgrade scripts titled so they sort chronologically", ("j14",)),
    ("why are there two identical lookup structures on a table after a generated upgrade script", ("j15",)),
    ("when do we delete the legacy money fields", ("j16",)),
    ("which parts of the core can the http layer use", ("j17",)),
    ("how does one online retailer appear consistently whatever the bank calls it", ("j18",)),
    ("why did my big spreadsheet arrive later in my inbox instead of right away", ("j19",)),
    ("how do i reach the pre-release site from my laptop", ("j20",)),
    ("how fresh is the test environment's data and is it real people's", ("j21",)),
    ("why did a colleague's urgent fix vanish from the shipping line", ("j22",)),
    ("how large can my pr get before it's sent back to be cut up", ("j23",)),
    ("will someone look at my change while the pipeline is broken", ("j24",)),
    ("what keeps heavy quarterly paperwork jobs from hogging resources needed for uploads", ("j25",)),
    ("raise only a single dependency's version without the others", ("j26",)),
    ("when can we start using the newer interpreter release", ("j27",)),
    ("what do we use for immutable little records in the domain code", ("j28",)),
    ("who is handed a new exception alert without anyone sorting it", ("j29",)),
    ("how do i leave out the long-running specs on my machine", ("j30",)),
    ("what stops a password getting into git history", ("j31",)),
    ("do we trust what a customer's document is called", ("j32",)),
    ("how can i repeat a customer's broken upload on my laptop", ("j33",)),
    ("why does the image rebuild take ages after a one-line tweak", ("j34",)),
    ("why did singapore customers see yesterday on their monthly paperwork", ("j35",)),
    ("what share of request timings do we keep in the exception monitoring tool", ("j36",)),
    ("can bank account numbers end up in our crash tracker", ("j37",)),
    ("where can i watch how many uploads are stuck or broken right now", ("j38",)),
    ("how do i switch something on for one customer without shipping again", ("j39",)),
    ("which piece of the eur/usd work lands first", ("j40",)),
    ("how are our messages built so they look right in microsoft's mail client", ("j41",)),
    ("how can someone distinguish a production credential from a sandbox one", ("j42",)),
    ("which bookkeeping software can customers send their entries to", ("j43",)),
    ("may we keep people's internet login secrets to fetch activity automatically", ("j44",)),
    ("our periodic messages were ending up flagged at microsoft", ("j45",)),
    ("can big companies settle annually by transfer", ("j46",)),
    ("who should look at modifications to the printable summaries", ("j47",)),
    ("what happens when a crashed server keeps crashing", ("j48",)),
    ("why is tax owed a few pennies off from what the bookkeeper says", ("j49",)),
    ("both schedulers were firing periodic jobs after the managed store switched over", ("j50",)),
]
