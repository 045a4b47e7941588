"""Fresh memories asked in other words, through the running server: the second hold-out set of issue 26.

Written before any search ran on it, and never tuned on (bench/served_fresh.py measures it). It mimics the
outside measure: memories a developer has just stored in the bundled example vault (a fintech ledger,
"tidewater"), each asked for once, later, with no content word in common, through the served vault.

It is a different author from bench/fresh_paraphrase_set.py on purpose: these notes are one developer's own,
first person and terse ("I", "we", "my laptop"), about their machine, their habits and the project's
plumbing, and the questions are how that developer or a teammate would ask a week later. No topic of
fresh_paraphrase_set.py is repeated.

A memory: (key, collection, type, title, content). The key only names it in this file; the server gives it
its id when it is added (`memdir add` / the add_memory tool).
A question: (text, wanted keys). Every memory is wanted by exactly one question, and no question shares a
content word with a memory it wants (bench/served_fresh.py checks both before it measures).
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    ("s01", "memory_bank", "decision", "Local Postgres through docker compose",
     "I run the dev stack with docker compose and the postgres:16 image; `make up` starts it on port 5433 so it "
     "does not clash with a Homebrew install."),
    ("s02", "memory_bank", "preference", "I do reviews first thing in the morning",
     "I batch PR reviews into the first hour of my day. Ping me after lunch and it waits until tomorrow."),
    ("s03", "patterns", "learning", "pytest-xdist workers collided on the sqlite fixture",
     "Running with `-n auto` made the session-scoped sqlite fixture collide across workers. Each worker now "
     "gets its own file from `tmp_path_factory` plus the worker id."),
    ("s04", "memory_bank", "fact", "Plaid sandbox allows 100 calls a minute",
     "The Plaid sandbox allows 100 calls per minute per client id; the nightly sync script sleeps between "
     "institutions to stay under it."),
    ("s05", "memory_bank", "decision", "We log with structlog, JSON in prod",
     "We switched from stdlib logging formatters to structlog. Prod emits one JSON object per line; local dev "
     "gets coloured key=value output."),
    ("s06", "working", "observation", "uv lock crawls on the VPN",
     "`uv lock` takes about 40 s when I'm on the company VPN because PyPI goes through the proxy; "
     "disconnecting drops it to 3 s."),
    ("s07", "memory_bank", "preference", "VS Code formats with ruff on save",
     "My VS Code runs `ruff format` on save and organises imports. Don't commit files formatted by black, the "
     "diffs fight."),
    ("s08", "patterns", "learning", "A bare except hid dropped CSV rows",
     "A broad `except Exception` in the CSV importer swallowed a KeyError for weeks and silently dropped rows. "
     "Catch the specific parse errors and let everything else crash."),
    ("s09", "memory_bank", "fact", "Seed fixtures come from the anonymised March dump",
     "Seed data for local dev is `fixtures/seed_2026_03.sql.gz`, an anonymised snapshot of production from "
     "March. Load it with `make seed`."),
    ("s10", "memory_bank", "decision", "Celery retries back off exponentially, capped at 10 minutes",
     "Failed Celery tasks retry with exponential backoff starting at 30 s, capped at 10 minutes, at most 8 "
     "attempts; after that they land in the dead-letter queue."),
    ("s11", "memory_bank", "constraint", "IBANs are validated with schwifty",
     "Every IBAN is checked with the `schwifty` library before it is saved; an invalid checksum is rejected "
     "with a 422."),
    ("s12", "working", "journal", "Paired with Priya on the reconciliation screen",
     "Spent the afternoon pairing with Priya on the reconciliation screen. We agreed the unmatched column "
     "sorts by amount, biggest first."),
    ("s13", "memory_bank", "fact", "The CI cache is keyed on the uv.lock hash",
     "GitHub Actions caches the virtualenv keyed on the hash of `uv.lock`; bump any dependency and the first "
     "run rebuilds it from scratch (about 4 min)."),
    ("s14", "patterns", "learning", "Quantize Decimals before using them as keys",
     "Two amounts that print alike can differ in exponent (`Decimal('1.0')` vs `Decimal('1.00')`), and as dict "
     "keys they split one bucket in two. Quantize to 2 places first."),
    ("s15", "memory_bank", "preference", "An ADR before any ledger table change",
     "Any change to the ledger tables needs a short architecture decision record in `docs/adr/` before the PR; "
     "Dana won't review without one."),
    ("s16", "memory_bank", "fact", "Statement cutoff is midnight Europe/London",
     "The daily statement cutoff is midnight Europe/London, not UTC: a transaction at 00:30 BST belongs to the "
     "next statement."),
    ("s17", "working", "observation", "The PDF export worker leaks memory",
     "The PDF export worker grows about 200 MB per hundred renders. Restarting it with "
     "`--max-tasks-per-child 50` keeps it flat until we find the leak."),
    ("s18", "memory_bank", "decision", "Every PR gets a preview app on Fly.io",
     "Each PR gets a throwaway preview app `tidewater-pr-<n>` on Fly.io, torn down when the PR closes."),
    ("s19", "memory_bank", "fact", "Our SLO is 99.5 % monthly",
     "The SLO is 99.5 % of API requests succeeding over a rolling 30 days; below that we freeze feature work."),
    ("s20", "patterns", "learning", "Reuse one httpx AsyncClient per process",
     "Creating a new `httpx.AsyncClient` per call leaked sockets and hit the file descriptor limit under load. "
     "One client per process, closed on shutdown."),
    ("s21", "memory_bank", "preference", "I rebase my own branches onto main",
     "On my own branches I rebase onto main rather than merging main in; it keeps the history readable for Dana."),
    ("s22", "memory_bank", "fact", "Local .env comes from the 1Password CLI",
     "`make env` writes the local `.env` from the Tidewater vault in 1Password with `op inject`. Never paste "
     "keys into Slack."),
    ("s23", "memory_bank", "decision", "Money goes over the API as strings",
     "The public API serialises money as strings (`\"12.50\"`) with a separate currency field, so JavaScript "
     "clients never see float rounding."),
    ("s24", "working", "journal", "Moved the CI runners to ARM",
     "Moved the GitHub Actions runners to ubuntu-24.04-arm: the build got 30 % faster, but the psycopg wheel had "
     "to be built from source until 3.2.4."),
    ("s25", "patterns", "learning", "Hypothesis found a negative zero",
     "A property-based test with Hypothesis showed `-0.00` balances rendering as '-£0.00'. We normalise signed "
     "zeros before formatting now."),
    ("s26", "memory_bank", "constraint", "audit_events is append-only",
     "The `audit_events` table has no UPDATE or DELETE grant for the app role; a correction is a new row that "
     "references the old one."),
    ("s27", "memory_bank", "preference", "Bank connectors are typing.Protocol, not ABCs",
     "For pluggable bank connectors I use `typing.Protocol` rather than abstract base classes; an "
     "implementation does not inherit anything."),
    ("s28", "memory_bank", "fact", "Mailpit catches outgoing email in dev",
     "In dev every email goes to Mailpit at http://localhost:8025; nothing leaves the laptop."),
    ("s29", "working", "observation", "Seq scan on transactions after a bulk import",
     "After a big statement import the planner switched to a sequential scan on `transactions`; a manual "
     "`ANALYZE transactions` fixed it. Autovacuum hadn't caught up."),
    ("s30", "memory_bank", "decision", "Dashboard state moved from Redux to Zustand",
     "We dropped Redux for Zustand in the dashboard; there is one store per feature, under `web/src/stores/`."),
    ("s31", "patterns", "learning", "Pin the Docker base image by digest",
     "The Docker base image is pinned by sha256 digest, not tag: a silent `python:3.11-slim` update once "
     "changed the OpenSSL version and broke TLS to the bank."),
    ("s32", "memory_bank", "fact", "Make targets",
     "`make up` starts the services, `make test` runs pytest with coverage, `make lint` runs ruff and mypy, "
     "`make seed` loads fixtures."),
    ("s33", "memory_bank", "constraint", "GDPR erasure within 30 days",
     "An erasure request has to be done within 30 days. Ledger entries stay, but the person's name and email "
     "are replaced by a tombstone id."),
    ("s34", "working", "journal", "Tried Polars for the month-end report",
     "Rewrote the month-end report with Polars instead of pandas: 6x faster and half the memory. Keeping it "
     "behind a flag for one cycle."),
    ("s35", "memory_bank", "preference", "Guard clauses and early returns",
     "I like guard clauses and early returns over nested ifs; a function that scrolls off the screen gets split."),
    ("s36", "patterns", "learning", "freezegun hung the async tests",
     "freezegun froze the event loop's clock too and hung async tests forever; switched to `time-machine`, which "
     "leaves the monotonic clock alone."),
    ("s37", "memory_bank", "fact", "QA has three Starling sandbox accounts",
     "QA uses three sandbox accounts at Starling (GBP, EUR, USD); their credentials are in 1Password under "
     "'QA banking'."),
    ("s38", "memory_bank", "decision", "Outbound webhooks are signed with HMAC-SHA256",
     "Outbound webhooks carry an `X-Tidewater-Signature` header, the HMAC-SHA256 of the body with the "
     "customer's secret; we retry 5 times over 24 h."),
    ("s39", "working", "observation", "The reconcile e2e flake is the modal's fade-in",
     "The Playwright reconcile flow flakes because the modal fades in over 300 ms; waiting for "
     "`toBeVisible()` instead of clicking at once fixed it."),
    ("s40", "memory_bank", "fact", "Production Postgres runs on Neon",
     "Production Postgres runs on Neon; each preview app gets its own Neon branch copied from staging."),
    ("s41", "patterns", "learning", "COPY beats executemany for bulk inserts",
     "Inserting 200k transactions with `executemany` took 9 minutes; `COPY ... FROM STDIN` through psycopg "
     "does it in 14 s."),
    ("s42", "memory_bank", "preference", "Incidents go in the channel, never in DMs",
     "Incidents go in #tidewater-incidents, never in DMs, so the timeline can be reconstructed afterwards."),
    ("s43", "memory_bank", "fact", "Currencies come from the ISO 4217 table",
     "Supported currencies are rows in `currencies`, seeded from ISO 4217 with their minor-unit exponents "
     "(JPY 0, KWD 3); never hard-code two decimals."),
    ("s44", "working", "journal", "Renamed Account.kind to Account.category",
     "Renamed the `kind` column to `category` across models and API; the old field is still accepted in "
     "requests until January, with a deprecation header."),
    ("s45", "patterns", "learning", "mypy needs the pydantic plugin",
     "Without the pydantic mypy plugin, model constructors were typed as `**Any` and bad field names passed the "
     "checks. Enabled `pydantic.mypy` in pyproject."),
    ("s46", "memory_bank", "constraint", "Uploads go to S3 through presigned URLs",
     "Uploads go straight to S3 through presigned URLs; the API itself rejects bodies over 10 MB."),
    ("s47", "memory_bank", "decision", "Dates are shown as 27 Nov 2026",
     "The UI shows dates as `27 Nov 2026` everywhere, no numeric day/month order, because our users are in both "
     "the UK and the US."),
    ("s48", "memory_bank", "fact", "Dana is off on Fridays",
     "Dana doesn't work Fridays; anything needing her approval should be in her queue by Thursday noon."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("how do I get a database going on my own machine", ("s01",)),
    ("when should a teammate expect feedback on something they opened", ("s02",)),
    ("why do concurrent suites clobber each other's scratch storage", ("s03",)),
    ("how many requests can we fire at the aggregator's test environment before being throttled", ("s04",)),
    ("what shape do our application's event records take once deployed", ("s05",)),
    ("resolving packages is painfully slow from the office network, why", ("s06",)),
    ("which tool tidies up python source whenever I hit ctrl-s", ("s07",)),
    ("why were lines from an uploaded spreadsheet vanishing without any warning", ("s08",)),
    ("where do I grab realistic sample records to populate my environment", ("s09",)),
    ("what happens when an asynchronous worker job keeps blowing up", ("s10",)),
    ("how do we make sure a customer's bank number is legit before storing it", ("s11",)),
    ("how did we decide to order the items that don't line up", ("s12",)),
    ("why is the initial pipeline after an upgrade so sluggish", ("s13",)),
    ("why did identical-looking sums end up as separate groups", ("s14",)),
    ("what paperwork is required before I alter how the books are kept in the db", ("s15",)),
    ("which clock decides what day a payment counts towards", ("s16",)),
    ("the process making printable reports is ballooning in RAM, what's the stopgap", ("s17",)),
    ("can reviewers click around a proposed change somewhere before it merges", ("s18",)),
    ("how much downtime are we allowed before new development stops", ("s19",)),
    ("too many open connections crashing the service during traffic peaks, what was the cause", ("s20",)),
    ("how do I bring my work up to date with the trunk", ("s21",)),
    ("where do I fetch credentials when setting up a computer", ("s22",)),
    ("why does the frontend receive prices in quotes instead of numbers", ("s23",)),
    ("did switching processor architecture for the pipeline machines pay off", ("s24",)),
    ("why did a customer see a minus symbol on nothing owed", ("s25",)),
    ("can the service edit or remove entries in the compliance trail", ("s26",)),
    ("how should a new integration for a financial institution declare its interface", ("s27",)),
    ("where can I see messages the app would have mailed to users on my computer", ("s28",)),
    ("lookups got really slow right after loading a huge file, why", ("s29",)),
    ("which library holds client-side data for the UI", ("s30",)),
    ("why did our container suddenly fail to talk securely to a partner with no code edited", ("s31",)),
    ("what shortcuts exist for common chores in this repo", ("s32",)),
    ("someone asked us to forget them, what's the deadline and what gets wiped", ("s33",)),
    ("did the dataframe library swap speed up the closing summary", ("s34",)),
    ("how deeply should conditionals be indented in my style", ("s35",)),
    ("why did faking the date make coroutine specs stall", ("s36",)),
    ("which pretend customers can testers try money flows with", ("s37",)),
    ("how can partners trust that notifications we push really came from us", ("s38",)),
    ("why does the browser check intermittently miss the popup", ("s39",)),
    ("what hosts our live data store", ("s40",)),
    ("fastest way to load hundreds of thousands of rows", ("s41",)),
    ("where should I raise an alarm when something is on fire", ("s42",)),
    ("how many digits after the point does yen get in our system", ("s43",)),
    ("is the previous attribute name still taken by the endpoints", ("s44",)),
    ("why didn't static analysis catch a typo in a schema argument", ("s45",)),
    ("how do large files get from the browser into storage", ("s46",)),
    ("how should calendar values appear on screen to avoid american vs british confusion", ("s47",)),
    ("when's the last chance in the week to get sign-off from the maintainer", ("s48",)),
]
