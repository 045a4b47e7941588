"""Fresh memories asked in other words: the hold-out set of issue 26, written before any search ran on it.

The situation it measures: a memory was stored minutes or hours ago (no uses, no outcomes, no score), in
a vault where older memories have outcome records and many share its topic; later the developer asks for
it in their own words, sharing no content word with it. Plain cosine over whole memories finds most of
these; a hybrid that lets an empty keyword channel, the quality prior or recency push a confident vector
hit down does not. Nobody tunes on this set; bench/fresh_paraphrase.py measures it.

The older population is the bundled example vault (.memories-example/, a fintech ledger project,
"tidewater") plus the coding development set (bench/coding_set.py, a clinic-booking product, "Lumen").
The fresh memories belong to the same two projects and to their neighbours, as a real project vault
collects them.

A fresh memory: (id, collection, type, title, body, age in hours).
A question: (text, wanted ids, kind, near_proven). kind is "short" or "long" (a pasted paragraph, a log
or a traceback around the ask); near_proven says that older memories with outcome records share the
question's topic (the prior could bury the fresh one). No question shares a content word with a memory
it wants: bench/fresh_paraphrase.py checks that before it measures anything (`--check`).
"""

from __future__ import annotations

FRESH: list[tuple] = [
    ("f001", "memory_bank", "decision", "Feature flags live in Unleash",
     "Feature flags moved from environment variables to a self-hosted Unleash instance. Toggle them in its "
     "admin UI; the SDK caches flags for 15 seconds, so a change is not instant.", 3),
    ("f002", "memory_bank", "constraint", "Staging resets every Sunday night",
     "The staging environment is wiped and reseeded every Sunday at 23:00 UTC by the `staging-reset` cron. "
     "Anything created there over the week disappears.", 5),
    ("f003", "memory_bank", "fact", "Grafana dashboards are provisioned from git",
     "Grafana dashboards are provisioned from JSON files under `ops/grafana/`; edits made in the Grafana web "
     "editor are overwritten on the next deploy.", 2),
    ("f004", "patterns", "learning", "Celery beat must run as a single replica",
     "Running two beat schedulers duplicated every periodic task. Beat runs as exactly one replica with a "
     "Recreate rollout strategy.", 6),
    ("f005", "memory_bank", "preference", "Commit messages in imperative mood",
     "Commit subjects are written in imperative mood, at most 72 characters, with the ticket key as prefix: "
     "`LUM-123 Add reminder opt-out`.", 1),
    ("f006", "memory_bank", "fact", "Sentry releases are tagged by the CI pipeline",
     "The deploy workflow creates the Sentry release and uploads source maps; errors are grouped by release "
     "so a regression shows which deploy introduced it.", 8),
    ("f007", "memory_bank", "decision", "Dependabot replaced by Renovate",
     "Renovate now opens dependency update PRs, grouped weekly on Monday mornings; Dependabot is switched off. "
     "Patch updates of dev tooling automerge when CI is green.", 4),
    ("f008", "memory_bank", "constraint", "Patient phone numbers are stored in E.164",
     "Phone numbers are normalized to E.164 (`+14155550123`) with the phonenumbers library before saving; "
     "the SMS provider rejects anything else.", 2),
    ("f009", "patterns", "learning", "Alembic migrations need a lock timeout",
     "Every Alembic migration sets `lock_timeout = '5s'` first. An ALTER TABLE waiting on a long transaction "
     "queued all writes behind it and took the API down for four minutes.", 7),
    ("f010", "memory_bank", "fact", "The on-call rotation lives in PagerDuty",
     "Primary and secondary on-call rotate weekly on Tuesdays at 10:00 in PagerDuty; swaps are done there, "
     "not in Slack.", 10),
    ("f011", "memory_bank", "decision", "Timestamps are stored as timestamptz",
     "All new columns holding instants use `timestamptz`; naive `timestamp` columns are being converted. "
     "The application converts to the clinic's zone only when rendering.", 3),
    ("f012", "working", "observation", "Redis memory spikes come from the rate limiter keys",
     "Redis memory spikes at 09:00 are the rate limiter's per-IP keys; they had no TTL. Added a 60 s expiry "
     "to each key.", 1),
    ("f013", "memory_bank", "preference", "Prefer dataclasses over dicts for internal records",
     "Internal records passed between modules are frozen dataclasses, not dicts with string keys; Pydantic "
     "models only at the API boundary.", 12),
    ("f014", "memory_bank", "fact", "The mobile app pins TLS certificates",
     "The iOS and Android apps pin the API's intermediate certificate. Rotating it needs an app release "
     "first, at least two weeks ahead.", 6),
    ("f015", "patterns", "learning", "Stripe webhooks must be verified against the raw body",
     "Signature checks failed because FastAPI parsed the JSON first. Verify the Stripe-Signature header "
     "against `await request.body()` before any parsing.", 9),
    ("f016", "memory_bank", "constraint", "Backups are restored monthly as a drill",
     "On the first Monday of each month the latest Postgres backup is restored into a scratch instance and "
     "row counts compared; an unrestorable backup is a sev-2.", 20),
    ("f017", "memory_bank", "fact", "Translations are managed in Crowdin",
     "UI strings are extracted to `web/locales/en.json` and synced with Crowdin nightly; translators work "
     "there, never in the repo.", 5),
    ("f018", "memory_bank", "decision", "GraphQL was dropped in favour of REST",
     "The experimental GraphQL gateway is removed; the public API stays REST with OpenAPI, because clients "
     "generated from the spec were simpler to support.", 15),
    ("f019", "working", "journal", "Load test reached 800 requests per second",
     "k6 run against staging: 800 rps with p95 at 180 ms before the connection pool saturated at 50. "
     "Next: raise pgbouncer's pool to 100 and retry.", 2),
    ("f020", "memory_bank", "constraint", "Uploaded documents are scanned with ClamAV",
     "Files patients upload go to a quarantine bucket; a ClamAV worker scans them and only clean files move "
     "to the documents bucket.", 4),
    ("f021", "patterns", "learning", "React Query keys must include the tenant",
     "Switching clinics showed the previous clinic's appointments: cached queries were keyed by route only. "
     "Every query key now starts with the clinic id.", 3),
    ("f022", "memory_bank", "fact", "Emails are sent through Postmark",
     "Transactional email (confirmations, password resets) goes through Postmark's API; marketing email is "
     "not sent from this codebase at all.", 11),
    ("f023", "memory_bank", "preference", "Squash WIP commits before review",
     "Before asking for review, fold fixup commits with `git rebase -i --autosquash` so reviewers read "
     "coherent steps.", 7),
    ("f024", "memory_bank", "decision", "Terraform state is kept in S3 with DynamoDB locking",
     "Terraform state lives in the `lumen-tfstate` S3 bucket with a DynamoDB lock table; never run apply "
     "from a laptop with local state.", 9),
    ("f025", "working", "observation", "Slow appointment search is a missing composite index",
     "EXPLAIN showed a sequential scan on appointments filtered by clinic and start time; a composite index "
     "on (clinic_id, starts_at) took it from 1.2 s to 8 ms.", 1),
    ("f026", "memory_bank", "constraint", "No PII in log lines",
     "Log lines never carry names, phone numbers or emails; log the patient's opaque id. A structlog "
     "processor masks fields named like PII as a backstop.", 14),
    ("f027", "memory_bank", "fact", "The design system lives in Storybook",
     "Reusable components are documented in Storybook, published on every merge to main; check it before "
     "writing a new button or modal.", 6),
    ("f028", "patterns", "learning", "Kubernetes liveness probes must not touch the database",
     "A database blip made every pod fail its liveness probe and restart at once. Liveness only checks the "
     "process; readiness may check dependencies.", 8),
    ("f029", "memory_bank", "decision", "Money is formatted by the client locale, stored in minor units",
     "Amounts are stored as integer cents with an ISO currency code and formatted with Intl.NumberFormat in "
     "the user's locale.", 16),
    ("f030", "memory_bank", "preference", "Type hints checked with mypy strict on new modules",
     "New Python modules are added to the mypy strict list in `pyproject.toml`; older modules are migrated "
     "one at a time.", 5),
    ("f031", "working", "journal", "Twilio delivery receipts arrive out of order",
     "Status callbacks can deliver 'delivered' before 'sent'. Store the furthest status reached instead of "
     "the latest callback.", 2),
    ("f032", "memory_bank", "fact", "Secrets come from Vault via the CSI driver",
     "Pods read secrets mounted by the Vault CSI driver under `/mnt/secrets`; nothing sensitive goes into "
     "ConfigMaps or env files in the repo.", 13),
    ("f033", "memory_bank", "constraint", "API responses must stay under 1 MB",
     "The gateway rejects responses over 1 MB; list endpoints paginate with a cursor and a maximum page of "
     "200 items.", 7),
    ("f034", "patterns", "learning", "Time zone of recurring slots follows the clinic, not UTC",
     "Weekly recurring slots drifted an hour after daylight saving changed: they were expanded in UTC. They "
     "are expanded in the clinic's zone, then converted.", 10),
    ("f035", "memory_bank", "decision", "Playwright replaces Cypress for browser tests",
     "End-to-end browser tests are written with Playwright; the Cypress suite is frozen and being ported "
     "spec by spec.", 4),
    ("f036", "memory_bank", "fact", "Product analytics go to PostHog",
     "Frontend events are captured with PostHog, self-hosted in the EU region; event names are snake_case "
     "verbs like `booking_confirmed`.", 18),
    ("f037", "working", "observation", "Docker builds are slow because the cache is busted by COPY",
     "Image builds took 9 minutes: `COPY . .` came before installing dependencies. Copying only the lock "
     "files first brought it to 90 seconds.", 1),
    ("f038", "memory_bank", "constraint", "Appointments cannot be booked less than two hours ahead",
     "Clinics require a two-hour notice; the booking API refuses later requests with error code "
     "`BOOKING_TOO_LATE`, and the UI hides those slots.", 6),
    ("f039", "memory_bank", "preference", "Small pull requests under 400 lines",
     "Pull requests stay below about 400 changed lines; larger work is split behind a flag so each piece "
     "can ship.", 3),
    ("f040", "patterns", "learning", "Decimal rounding must be banker's rounding for FX",
     "Converted amounts were off by a cent against the bank's statement: it rounds half to even. Use "
     "ROUND_HALF_EVEN when converting currencies.", 9),
    ("f041", "memory_bank", "fact", "The ledger exports to the accountant as CSV every quarter",
     "At each quarter end a job writes the ledger to CSV with one row per posting and emails the "
     "accounting firm a signed link valid for seven days.", 12),
    ("f042", "memory_bank", "decision", "Statement imports are processed by a queue, one account at a time",
     "Imports for the same account are serialized through a per-account queue, so two uploads can never "
     "interleave their postings.", 5),
    ("f043", "working", "journal", "Reconciliation mismatch traced to a reversed sign",
     "The bank marks debits positive in its CAMT files; our parser assumed the opposite. Flipped the sign "
     "for that bank's format and added a fixture.", 2),
    ("f044", "memory_bank", "constraint", "Exchange rates older than one business day are refused",
     "A conversion must use a rate published at most one business day earlier; otherwise the posting waits "
     "and an alert fires.", 8),
    ("f045", "patterns", "learning", "SQLAlchemy sessions must not be shared between threads",
     "A shared session across a thread pool produced 'This session is in prepared state' errors. Each "
     "worker thread opens its own session from the sessionmaker.", 11),
    ("f046", "memory_bank", "fact", "The repository uses pre-commit hooks",
     "Formatting, linting and a secrets scan run through pre-commit; run `pre-commit install` once after "
     "cloning.", 4),
    ("f047", "memory_bank", "decision", "Account numbers are shown masked except the last four digits",
     "Everywhere in the interface an IBAN or card number appears as dots followed by its final four "
     "characters; the full value only in the export.", 7),
    ("f048", "working", "observation", "The nightly job overlaps with the backup window",
     "The 02:00 reconciliation job competes with pg_dump for I/O; moved the job to 04:30.", 1),
    ("f049", "memory_bank", "preference", "Dana reviews database changes",
     "Any schema change needs Dana Okafor's approval on the pull request, even small ones.", 6),
    ("f050", "patterns", "learning", "HTTP clients need explicit timeouts",
     "A bank API that hung kept workers blocked forever: httpx has a default timeout but requests does not. "
     "Every outbound call sets connect and read timeouts.", 10),
    ("f051", "memory_bank", "fact", "Customer support uses Zendesk macros for refunds",
     "Support agents answer refund questions with Zendesk macros that link to the refund policy page; "
     "engineering is paged only for amounts above 500 EUR.", 15),
    ("f052", "memory_bank", "constraint", "Data is hosted in Frankfurt only",
     "Production data and backups stay in the eu-central-1 region; no replica, log sink or analytics export "
     "may leave it.", 9),
    ("f053", "working", "journal", "Upgraded Node to 22 in the web build",
     "CI image bumped from Node 20 to 22; `pnpm` needed corepack enabling again. Vitest passed unchanged.", 2),
    ("f054", "memory_bank", "decision", "Invoices are rendered to PDF with WeasyPrint",
     "Invoice PDFs are produced from HTML templates with WeasyPrint in a worker, not in the request; the "
     "fonts are vendored in `assets/fonts`.", 13),
    ("f055", "patterns", "learning", "Pagination by offset skipped rows under concurrent inserts",
     "Offset pages missed and repeated items when new rows arrived mid-scroll. Keyset pagination on "
     "(created_at, id) fixed it.", 8),
    ("f056", "memory_bank", "fact", "The status page is hosted on Instatus",
     "Incidents are announced on the public status page at Instatus; the incident commander posts the "
     "first update within 15 minutes.", 17),
    ("f057", "memory_bank", "constraint", "Passwords hashed with Argon2id",
     "User passwords are hashed with Argon2id (argon2-cffi defaults); bcrypt hashes from the old system are "
     "rehashed on next login.", 6),
    ("f058", "working", "observation", "Websocket connections drop behind the corporate proxy",
     "Some clinics' networks kill idle websockets after 30 seconds; a ping every 20 seconds keeps the live "
     "calendar connected.", 1),
    ("f059", "memory_bank", "decision", "Search over patients uses Postgres trigram indexes",
     "Patient lookup by name uses pg_trgm GIN indexes instead of Elasticsearch; one fewer service to run, "
     "fast enough below a million rows.", 11),
    ("f060", "patterns", "learning", "Cron expressions in Kubernetes run in UTC",
     "A CronJob scheduled for '0 7 * * *' fired at 08:00 local in winter: the controller reads schedules in "
     "UTC unless timeZone is set.", 7),
    ("f061", "memory_bank", "fact", "The API is versioned in the URL path",
     "Breaking changes get a new `/v2/` prefix; `/v1/` stays served for twelve months after the new one "
     "ships.", 14),
    ("f062", "memory_bank", "preference", "Use ripgrep and fd in scripts",
     "Helper scripts call `rg` and `fd` rather than grep -r and find; they respect .gitignore and are much "
     "quicker in this monorepo.", 3),
    ("f063", "working", "journal", "Onboarding doc written for the new contractor",
     "Wrote docs/onboarding.md: access requests, local setup, first ticket. Priya starts Monday.", 2),
    ("f064", "memory_bank", "constraint", "Refunds above 500 EUR need a second approver",
     "A refund above 500 EUR is created in a pending state and needs approval from a second finance person "
     "before money moves.", 10),
    ("f065", "patterns", "learning", "Flaky test came from dict ordering in a snapshot",
     "A snapshot test failed now and then because a set was serialized; sorting before serializing made "
     "the snapshot stable.", 5),
    ("f066", "memory_bank", "fact", "Mobile releases go out through Fastlane",
     "iOS and Android builds are signed and uploaded to the stores with Fastlane lanes `beta` and "
     "`release`, run from CI on a tag.", 12),
]

QUESTIONS: list[tuple] = [
    ("where do I switch an experimental behaviour on or off without redeploying", ["f001"], "short", False),
    ("why did my test record on the pre-production box vanish after the weekend", ["f002"], "short", False),
    ("I tweaked a chart panel in the monitoring UI and my change got lost", ["f003"], "short", False),
    ("our cron-like background jobs fire double since we scaled the deployment out", ["f004"], "short", True),
    ("how should I phrase the summary line when I save my work to version control", ["f005"], "short", True),
    ("how can I tell which rollout broke things in the crash tracker", ["f006"], "short", False),
    ("which bot proposes library upgrades these days", ["f007"], "short", True),
    ("what shape must a caller's mobile contact be in before persisting it", ["f008"], "short", False),
    ("how do I keep a schema change from freezing production while it sits in line", ["f009"], "short", True),
    ("who carries the pager right now and how do I trade shifts", ["f010"], "short", False),
    ("which database field kind do we pick for moments in time", ["f011"], "short", True),
    ("why does the cache server balloon in the morning", ["f012"], "short", False),
    ("what should I use to pass structured values around inside the backend", ["f013"], "short", False),
    ("what must happen before we change the HTTPS chain the handset clients trust", ["f014"], "short", False),
    ("payment provider callback keeps getting rejected as forged", ["f015"], "short", False),
    ("do we ever practise recovering the database from a dump", ["f016"], "short", True),
    ("where do people who localize the interface text do their job", ["f017"], "short", False),
    ("why didn't we keep the query language endpoint layer", ["f018"], "short", False),
    ("what throughput did the stress benchmark attain and what capped it", ["f019"], "short", False),
    ("is anything checking attachments users send us for malware", ["f020"], "short", False),
    ("after picking a different practice the calendar lists stale bookings from the old one", ["f021"], "short", False),
    ("which vendor delivers our automated notices like forgotten-login links", ["f022"], "short", False),
    ("should I tidy up my branch history before requesting someone look at it", ["f023"], "short", True),
    ("where is infrastructure-as-code bookkeeping stored and how is it protected", ["f024"], "short", False),
    ("why is looking up visits by practice and date so sluggish", ["f025"], "short", True),
    ("can I print a person's details when debugging", ["f026"], "short", False),
    ("where can I browse the existing UI widgets", ["f027"], "short", False),
    ("a short outage of our SQL server took down the whole cluster in a reboot storm", ["f028"], "short", True),
    ("how do we keep prices and display them to customers in their own style", ["f029"], "short", True),
    ("how thorough is static analysis of annotations for a freshly created backend source", ["f030"], "short", True),
    ("SMS statuses come back in a weird sequence, which one wins", ["f031"], "short", False),
    ("how does a container get hold of credentials", ["f032"], "short", False),
    ("the edge proxy throws away big payloads, how many rows may a collection call return", ["f033"], "short", False),
    ("repeating availability shifted by sixty minutes when clocks moved", ["f034"], "short", True),
    ("which framework drives Chromium for our automated UI checks", ["f035"], "short", True),
    ("where does clickstream tracking from the web client end up", ["f036"], "short", False),
    ("producing our container takes ages, why", ["f037"], "short", True),
    ("how close to the start can someone still reserve a visit", ["f038"], "short", False),
    ("how big may a diff be before I should break it up", ["f039"], "short", True),
    ("exchanged sums come out a penny different from what the lender reports", ["f040"], "short", True),
    ("how does the bookkeeper receive our figures", ["f041"], "short", True),
    ("what keeps simultaneous files from the same customer from getting jumbled together", ["f042"], "short", True),
    ("why were plus and minus swapped when matching against a certain lender's exports", ["f043"], "short", True),
    ("how recent must the currency quote be before we book an FX transfer", ["f044"], "short", True),
    ("ORM complains about a transaction phase when we parallelize the backend jobs", ["f045"], "short", True),
    ("what do I need to configure after a fresh checkout so style fixes happen automatically", ["f046"], "short", True),
    ("how should bank identifiers be displayed in the product", ["f047"], "short", False),
    ("the 2am balance-matching run crawls because the database snapshot happens then", ["f048"], "short", True),
    ("who must sign off when I alter tables", ["f049"], "short", True),
    ("a third-party endpoint froze and our background processes never came back", ["f050"], "short", True),
    ("how does the help desk respond to people wanting money back", ["f051"], "short", False),
    ("where geographically must customer information reside", ["f052"], "short", False),
    ("what broke when we moved the JavaScript runtime up a major", ["f053"], "short", False),
    ("how are bills turned into printable documents", ["f054"], "short", False),
    ("endless feed shows doubles and loses entries while others get added", ["f055"], "short", True),
    ("where do we tell customers about an ongoing outage", ["f056"], "short", False),
    ("which algorithm protects account credentials at rest", ["f057"], "short", False),
    ("real-time schedule view goes dead at some practices' offices", ["f058"], "short", False),
    ("how do we find a person by a fuzzy surname match", ["f059"], "short", False),
    ("my timed k8s task triggers sixty minutes late in December", ["f060"], "short", True),
    ("how do we introduce incompatible endpoint revisions", ["f061"], "short", False),
    ("which CLI utilities belong in our automation for searching text and locating files", ["f062"], "short", False),
    ("is there a guide for people joining the team", ["f063"], "short", False),
    ("can a single employee return a big sum to a customer alone", ["f064"], "short", True),
    ("a golden-file check breaks intermittently", ["f065"], "short", True),
    ("how do handset binaries get published for Apple and Google", ["f066"], "short", False),
    # -- long prompts: the ask inside a pasted paragraph, log or traceback --------------------------
    ("I'm picking up the ticket about the scheduling widget. Product wants people to be able to grab a visit "
     "right up to the last minute, e.g. twenty minutes before it begins. Before I change the frontend, is "
     "there some rule I'd be breaking by letting that happen?", ["f038"], "long", False),
    ("Traceback (most recent frame last):\n  File \"importer.py\", line 88, in handle\n    resp = "
     "session.get(url)\n  ... (stuck here for 40 min, no exception, the process never picked up another "
     "job)\nWhat did we agree to do about remote fetches like this one?", ["f050"], "long", True),
    ("We got a complaint from a practice manager: she reserved a Tuesday 9:00 physio session every seven days "
     "back in October and since early November it shows 10:00. Nothing in the DB moved for her. Have we hit "
     "this before?", ["f034"], "long", True),
    ("[2026-11-24 08:58:03] WARN cache used_bytes=3.8G cap=4G evicting\n[2026-11-24 08:58:04] "
     "WARN evicted=18234\nthis happens right after the practices open, daily. what is eating it?",
     ["f012"], "long", False),
    ("New teammate here. I checked out the monorepo, started the app, opened a PR and the bot complained "
     "about style and a possible key in a fixture. I never saw those checks on my machine. What did I miss "
     "during setup?", ["f046"], "long", True),
    ("Writing the runbook for a datacenter outage. If our German site went down, could we fail over to a "
     "copy in Ireland or the US, or ship our diagnostics to a US vendor while it lasts? Legal will ask what "
     "we promised.", ["f052"], "long", False),
    ("Finance pinged me: the quarter close numbers we sent out don't match theirs by a penny on the "
     "USD-to-EUR figures, always when the third digit after the point is exactly 5. Is there a known "
     "reason for that?", ["f040"], "long", True),
    ("Our ops checklist says 'swap the CA cert' for Friday because the current one expires on 3 December. "
     "Ops is ready to change it on the load balancer. Anything that could go wrong for customers on phones?",
     ["f014"], "long", False),
]
