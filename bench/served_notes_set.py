"""Fresh developer notes asked in other words, through the running server: the third hold-out set of issue 26.

Written (session 8) before any search ran on it, and before the losses of the other served set were looked at;
committed before any tuning and never tuned on (`python bench/served_fresh.py --set notes` measures it).
Like bench/served_fresh_set.py it mimics the outside measure: memories just stored in the bundled example vault
(the "tidewater" fintech ledger), each asked for once, later, with no content word in common, through the
served vault.

A third author on purpose: the notes read like a project's working log kept by several developers (a deploy
step, a laptop setup trap, a flaky test, a partner API's quirk, what the team agreed), some one line, some a
short paragraph with a command in it; the questions are how a colleague would ask weeks later, in their own
words. No topic of the two other fresh sets is repeated.

A memory: (key, collection, type, title, content); a question: (text, wanted keys). Every memory is wanted by
exactly one question, and no question shares a content word (after stemming and stop words) with a memory it
wants: bench/served_fresh.py checks both before it measures.
"""

from __future__ import annotations

FRESH: list[tuple[str, str, str, str, str]] = [
    ("n01", "memory_bank", "decision", "No deploys in the last two business days of the month",
     "Finance closes the books in the last two business days of each month. We agreed to freeze production "
     "deploys then; hotfixes only, with Dana's OK in the release thread."),
    ("n02", "history", "learning", "Rolling back a bad release",
     "`fly releases -a tidewater-api` lists the images; `fly deploy --image <previous image ref>` puts the old "
     "one back in about a minute. Migrations are not reversed by this, check them first."),
    ("n03", "history", "learning", "psycopg on Apple Silicon needs libpq from Homebrew",
     "On an M-series Mac the psycopg build fails with `pg_config not found`. `brew install libpq` and add "
     "`/opt/homebrew/opt/libpq/bin` to PATH, then `uv sync` again."),
    ("n04", "patterns", "learning", "test_export_filename fails around midnight",
     "The export filename test called `date.today()` twice, once in the code and once in the assertion; when the "
     "suite ran across 00:00 the two disagreed. The function takes the date as an argument now."),
    ("n05", "memory_bank", "fact", "GoCardless pagination drops the date filter",
     "The GoCardless bank account data API returns a `next` link that leaves out our `date_from` parameter, so "
     "page two starts from the beginning of history. We re-append the filter to every next link."),
    ("n06", "memory_bank", "decision", "Async standup in Slack by 10:00",
     "Standup is written, not a call: post yesterday / today / blockers in the #tw-standup thread before 10:00 "
     "London time."),
    ("n07", "working", "observation", "AirPlay Receiver grabs port 5000 on macOS",
     "On macOS Monterey and later the AirPlay Receiver listens on port 5000, so the admin app fails to bind. We "
     "moved the admin app to 5050 instead of asking everyone to switch AirPlay off."),
    ("n08", "memory_bank", "fact", "Node is pinned by .nvmrc",
     "The web client's Node version is pinned in `.nvmrc` (20.11). Use fnm with `--use-on-cd` and it switches "
     "by itself in the web/ folder."),
    ("n09", "patterns", "learning", "Gunicorn's 30 s timeout killed big statement uploads",
     "Uploading a multi-year statement took longer than gunicorn's default 30 s worker timeout and the worker "
     "was killed mid-parse. Parsing moved to a background job; the request only stores the file."),
    ("n10", "memory_bank", "decision", "Commit messages carry a Jira key",
     "A commit-msg hook rejects messages without a ticket key like `TW-123` at the start; use `TW-0` for chores."),
    ("n11", "patterns", "fact", "respx blocks every unmocked HTTP call in tests",
     "Tests run with respx in strict mode: any outgoing request not explicitly mocked raises, so a forgotten "
     "stub fails loudly instead of hitting a real bank sandbox."),
    ("n12", "memory_bank", "decision", "CSV exports use semicolons for German customers",
     "Excel in a German locale reads commas as decimal separators and puts everything in one column. Exports for "
     "accounts with locale de-* use `;` as the delimiter and a comma in amounts."),
    ("n13", "history", "learning", "Two alembic heads after merging branches",
     "Merging two feature branches that each added a migration left alembic with two heads and `upgrade head` "
     "refused to run. `alembic merge heads -m merge` creates the joining revision."),
    ("n14", "memory_bank", "fact", "Partner bank settlement files land at 06:00",
     "Settlement files from the partner bank are dropped on their SFTP server at 06:00 UK time; our poller "
     "checks every 15 minutes and marks a day late after 09:00."),
    ("n15", "patterns", "learning", "Sort names with ICU collation",
     "A plain `ORDER BY name` in Postgres put Ölund and Åberg after Zimmerman. Customer lists now sort with the "
     "`und-x-icu` collation so accented letters sit where people expect."),
    ("n16", "memory_bank", "decision", "One schema with tenant_id, not a schema per tenant",
     "We dropped the schema-per-tenant idea: migrations across hundreds of schemas were too slow. Every table "
     "gets a `tenant_id` column and row level security."),
    ("n17", "memory_bank", "fact", "Bank sandbox maintenance on Tuesday nights",
     "The partner bank's sandbox is offline every Tuesday 02:00-04:00 UTC for maintenance; nightly integration "
     "runs scheduled in that window fail for no reason of ours."),
    ("n18", "patterns", "learning", "pytest-randomly exposed order-dependent tests",
     "With pytest-randomly installed the suite failed one run in five: two tests relied on state another left "
     "behind. The seed is printed at the top; rerun with `-p randomly -p seed=<n>` to reproduce."),
    ("n19", "working", "observation", "The dev container takes 12 minutes on first open",
     "Opening the repo in the dev container builds the image from scratch, about 12 minutes. A nightly workflow "
     "now prebuilds it and pushes it to GHCR."),
    ("n20", "patterns", "decision", "Interest accrues at 6 decimals, rounded only when posted",
     "Daily interest accrual keeps 6 decimal places; rounding to cents happens once, when the month's interest "
     "is posted. Rounding every day lost up to 15 cents a year per account."),
    ("n21", "memory_bank", "constraint", "Production database access goes through Teleport",
     "Read-only access to the production replica is `tsh db login` through Teleport. Writes need a break-glass "
     "ticket approved by two engineers."),
    ("n22", "memory_bank", "decision", "User-facing errors live in errors.yaml with codes",
     "Every message a customer can see is in `errors.yaml` with a code like TW-E042, so support can look up what "
     "the customer quotes."),
    ("n23", "memory_bank", "fact", "openapi.json is committed and checked in CI",
     "The OpenAPI spec is generated from the FastAPI app and committed as `openapi.json`; CI regenerates it and "
     "fails when the committed file drifts."),
    ("n24", "memory_bank", "constraint", "Image-only PDF statements are rejected",
     "pdfplumber extracts nothing from a scanned statement, so uploads whose PDF has no text layer are refused "
     "with a message asking for the bank's CSV export."),
    ("n25", "history", "fact", "The tw admin CLI",
     "Admin chores go through the `tw` command installed with the backend: `tw users disable <email>`, "
     "`tw ledger rebuild --account <id>`, `tw flags list`."),
    ("n26", "working", "learning", "mkcert for the OAuth callback",
     "The bank's sandbox refuses http redirect URIs, so the local OAuth callback needs HTTPS: `mkcert -install` "
     "then `mkcert localhost` and point uvicorn at the two .pem files."),
    ("n27", "patterns", "learning", "JWT validation failed after the VM's clock drifted",
     "A CI VM's clock ran 40 s ahead and freshly issued JWTs were rejected as not yet valid. The verifier now "
     "allows 30 s of leeway on iat and nbf."),
    ("n28", "memory_bank", "constraint", "No GPL dependencies in the backend",
     "Legal asked for no GPL or AGPL packages in the backend. `pip-licenses` runs in CI against an allow-list."),
    ("n29", "memory_bank", "decision", "Bug bash every second Thursday",
     "Agreed in the retro: the second Thursday of each sprint is a bug bash afternoon, everyone on the triage "
     "board, no feature work."),
    ("n30", "memory_bank", "constraint", "Invoice numbers are gapless per year",
     "Invoice numbers must run without gaps within a calendar year (auditors check). The number is taken from a "
     "counter row locked in the same transaction that writes the invoice."),
    ("n31", "working", "decision", "Sentry ignores ClientDisconnect",
     "Sentry filled up with `ClientDisconnect` from mobile users closing the app mid-upload. Those are dropped in "
     "before_send; everything else still reports."),
    ("n32", "history", "learning", "wkhtmltopdf needs Rosetta on new Macs",
     "The legacy statement renderer shells out to wkhtmltopdf, which only ships an x86 build for macOS; new "
     "laptops need `softwareupdate --install-rosetta` before it runs."),
    ("n33", "patterns", "learning", "Partner webhooks are retried with the same event id",
     "The partner bank retries a webhook up to 5 times with the same event id when we answer slowly. A unique "
     "index on event_id makes the second delivery a no-op."),
    ("n34", "working", "fact", "Staging database is refreshed on Mondays",
     "Staging's database is restored every Monday 05:00 from a pg_dump of production with "
     "`--exclude-table-data=audit_events` and emails scrambled."),
    ("n35", "memory_bank", "preference", "Feature branches live a week at most",
     "A branch older than a week gets split or merged behind a flag; long-lived branches kept causing painful "
     "conflicts in the ledger models."),
    ("n36", "patterns", "learning", "Redis in CI uses database 15 only",
     "The CI Redis is a shared service container; tests use logical database 15 and flush only that one, "
     "never FLUSHALL."),
]

QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("when are we not allowed to ship to prod around accounting's period close", ("n01",)),
    ("how do I return to the previously live version after shipping something broken", ("n02",)),
    ("setting up the python postgres driver breaks on my arm laptop", ("n03",)),
    ("why did a check about the download's name break only late at night", ("n04",)),
    ("the aggregator's later result batches ignore our earliest-day restriction, what's going on", ("n05",)),
    ("how does the daily sync work, do we meet", ("n06",)),
    ("the back-office site won't come up when I launch it on a Mac, address already in use", ("n07",)),
    ("which javascript runtime release does the frontend expect", ("n08",)),
    ("why did sending in huge account histories die halfway through", ("n09",)),
    ("git refused my change description, what does it want in there", ("n10",)),
    ("what stops the suite from accidentally contacting genuine outside services", ("n11",)),
    ("spreadsheet downloads open all jumbled together for users in Berlin", ("n12",)),
    ("the schema migrator complains about diverging tips after combining parallel lines of work", ("n13",)),
    ("when do we receive the daily clearing documents from the institution holding our funds", ("n14",)),
    ("client overviews show umlauted surnames at the bottom, how was that fixed", ("n15",)),
    ("how do we keep each company's records apart", ("n16",)),
    ("the overnight e2e against the aggregator always breaks early in the week, known?", ("n17",)),
    ("the pipeline goes red now and then depending on which sequence things execute in", ("n18",)),
    ("why is launching the project in a containerised workspace so slow initially", ("n19",)),
    ("at what precision do we compute the yield customers earn on balances", ("n20",)),
    ("how can I query live customer data safely", ("n21",)),
    ("where do the messages shown to clients on failure come from", ("n22",)),
    ("is the API description produced automatically or hand written", ("n23",)),
    ("why can't someone submit a photographed paper document", ("n24",)),
    ("is there a terminal tool for operators to deactivate people", ("n25",)),
    ("the login return address must be TLS on my machine, how do I set that up", ("n26",)),
    ("tokens were refused as premature on one build box, why", ("n27",)),
    ("what open source licences are off limits for libraries we pull in", ("n28",)),
    ("when does the team hunt defects together instead of building stuff", ("n29",)),
    ("how do we make sure billing document sequence has no holes", ("n30",)),
    ("the error tracker was flooded by phones losing connections, what did we do", ("n31",)),
    ("the old html-to-document converter won't start on an M3 MacBook", ("n32",)),
    ("how do we avoid processing the same callback from the lender twice", ("n33",)),
    ("how current are the records in the pre-prod environment", ("n34",)),
    ("for how many days may I keep working on a side line of code before integrating", ("n35",)),
    ("which cache keyspace can the automated suite wipe", ("n36",)),
]
