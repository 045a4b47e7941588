"""A second, held-out set of long prompts over the coding dev vault (bench/coding_set.py's memories).

Written before any tuning of how a long prompt is read (issue 26, session 8): what a developer pastes into
the assistant - a traceback, a log tail, CI output, a diff, a config - with a line of their own. Each
answer is one memory of the coding dev vault; none of these prompts is in coding_set.QUESTIONS. They are
longer than that set's long prompts (most run 8-30 lines), because a real paste is: the error line is a
small part of it, and the rest (frames, timestamps, paths shared with other notes) is what the whole
prompt's vector mostly reads.

    python bench/coding.py --long-set           # memdir / cosine / BM25 on these 24 prompts
    python bench/coding.py --long-set --padded  # the same, each behind 8 kB of a service's access log
"""

from __future__ import annotations

QUESTIONS: list[tuple] = [
    ("Traceback (most recent call last):\n"
     '  File "/usr/local/lib/python3.12/site-packages/uvicorn/protocols/http/httptools_impl.py", line 409, in run_asgi\n'
     "    result = await app(  # type: ignore[func-returns-value]\n"
     '  File "/usr/local/lib/python3.12/site-packages/starlette/middleware/errors.py", line 186, in __call__\n'
     "    raise exc\n"
     '  File "app/api/practitioners.py", line 52, in list_practitioners\n'
     "    \"services\": [s.name for s in p.services],\n"
     '  File "/usr/local/lib/python3.12/site-packages/sqlalchemy/orm/attributes.py", line 566, in __get__\n'
     "    return self.impl.get(state, dict_)\n"
     "sqlalchemy.exc.MissingGreenlet: greenlet_spawn has not been called; can't call await_only() here. "
     "Was IO attempted in an unexpected place? (Background on this error at: https://sqlalche.me/e/20/xd2s)\n"
     "this is the practitioners list page, worked fine before I added the services column",
     ("c080", "c042"), "long", {}),
    ("2026-11-25T07:00:02Z INFO  dramatiq.worker: Worker process is ready for action.\n"
     "2026-11-25T07:00:04Z ERROR app.jobs.reminders: send_reminder failed\n"
     "twilio.base.exceptions.TwilioRestException: HTTP 429 error: Unable to create record: Too Many Requests\n"
     "  code: 20429\n"
     "2026-11-25T07:00:04Z WARNING dramatiq.middleware.retries.Retries: Retrying message "
     "'b7f1c2' in 15000 milliseconds.\n"
     "2026-11-25T07:00:05Z ERROR app.jobs.reminders: send_reminder failed\n"
     "twilio.base.exceptions.TwilioRestException: HTTP 429 error: Unable to create record: Too Many Requests\n"
     "... (same for 1,412 more messages)\n"
     "the morning batch for Kliniek Oost again. how are we supposed to pace these?",
     ("c023",), "long", {}),
    ("$ uv run alembic downgrade -1\n"
     "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
     "INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
     "INFO  [alembic.runtime.migration] Running downgrade 7c1e2f -> 5a9b3d, add waitlist table\n"
     "Traceback (most recent call last):\n"
     '  File "alembic/versions/7c1e2f_add_waitlist_table.py", line 31, in downgrade\n'
     "    pass\n"
     "NotImplementedError: downgrade not written\n"
     "CI job `migrations-roundtrip` is red on my PR, do I really need to write the downgrade for a new table?",
     ("c008",), "long", {}),
    ("Run uv sync --frozen\n"
     "  uv sync --frozen\n"
     "  shell: /usr/bin/bash -e {0}\n"
     "error: The lockfile at `uv.lock` needs to be updated, but `--frozen` was provided. To update the lockfile, "
     "run `uv lock`.\n"
     "Error: Process completed with exit code 2.\n"
     "I added httpx to requirements.txt like I always do in other projects, what's the way here?",
     ("c083",), "long", {}),
    ("diff --git a/app/api/slots.py b/app/api/slots.py\n"
     "@@ -12,6 +12,14 @@ from app.db import get_session\n"
     "+@router.get('/slots')\n"
     "+async def list_slots(clinic_id: int, page: int = 1, session=Depends(get_session)):\n"
     "+    offset = (page - 1) * 50\n"
     "+    rows = await session.execute(\n"
     "+        select(Slot).where(Slot.clinic_id == clinic_id).offset(offset).limit(50)\n"
     "+    )\n"
     "+    return rows.scalars().all()\n"
     "Maya left a comment on this diff saying we don't page like that. what's the convention?",
     ("c064",), "long", {}),
    ("web/src/features/booking/SlotList.tsx\n"
     "  14:3  error  'useDispatch' is defined but never used  @typescript-eslint/no-unused-vars\n"
     "```tsx\n"
     "import { useDispatch, useSelector } from 'react-redux'\n"
     "const slots = useSelector((s: RootState) => s.slots.items)\n"
     "useEffect(() => { dispatch(fetchSlots(clinicId)) }, [clinicId])\n"
     "```\n"
     "I'm adding a redux slice for the slots list so the booking page can share it, is that ok?",
     ("c033",), "long", {}),
    ("$ git log --oneline -3\n"
     "a91f3c2 fixed stuff\n"
     "77d0e1b wip\n"
     "3c2b9aa more fixes\n"
     "release-please: no user facing commits found since 4.12.0, skipping release PR\n"
     "why didn't the release PR get created after my merge?",
     ("c051",), "long", {}),
    ("FAILED tests/jobs/test_reminders.py::test_reminder_uses_clinic_timezone\n"
     "  File \"tests/jobs/test_reminders.py\", line 44, in test_reminder_uses_clinic_timezone\n"
     "    assert sent_at.hour == 18\n"
     "AssertionError: assert 19 == 18\n"
     " +  where 19 = datetime.datetime(2026, 3, 30, 19, 0).hour\n"
     "only fails for dates right after the clocks change in March; we had patients complaining about "
     "getting the same reminder twice that weekend too",
     ("c024",), "long", {}),
    ('[2026-11-24 21:14:09] app.jobs.reminders INFO queued reminder appointment=8812 clinic=17 '
     'send_at=2026-11-24T21:14:09+01:00\n'
     '[2026-11-24 21:14:10] app.jobs.reminders INFO sent reminder appointment=8812 to=+31612345678\n'
     "a patient of clinic 17 complained she got a text after nine in the evening. the log above is from "
     "our worker. isn't there a rule about that?",
     ("c025",), "long", {}),
    ("```python\nclass AppointmentOut(BaseModel):\n    id: UUID\n    starts_at: datetime\n\n"
     "    class Config:\n        orm_mode = True\n```\n"
     "pydantic.errors.PydanticUserError: `orm_mode` is not a valid config key\n"
     "   For further information visit https://errors.pydantic.dev/2.9/u/config-keys\n"
     "copied this schema from an old branch",
     ("c081",), "long", {}),
    ("Warning: 0 of 4 test runs had the expected outcome\n"
     "_______ test_cancel_sends_sms _______\n"
     "E   sqlalchemy.exc.IntegrityError: (psycopg.errors.UniqueViolation) duplicate key value violates unique "
     'constraint "patients_email_key"\n'
     "E   DETAIL:  Key (email)=(test@example.com) already exists.\n"
     "  tests/api/test_cancel.py:18: in test_cancel_sends_sms\n"
     "    session.add(Patient(full_name='Test', email='test@example.com'))\n"
     "should I just randomise the email in my insert?",
     ("c047",), "long", {}),
    ("Name                         Stmts   Miss  Cover\n"
     "------------------------------------------------\n"
     "app/api/waitlist.py             88     41    53%\n"
     "app/jobs/notify_waitlist.py     34     34     0%\n"
     "------------------------------------------------\n"
     "TOTAL                         6120    943    84.6%\n"
     "FAIL Required test coverage of 85% not reached. Total coverage: 84.59%\n"
     "the waitlist PR is red because of this, what counts towards the number?",
     ("c049",), "long", {}),
    ("__________ test_reminder_email_body __________\n"
     "E   AssertionError: assert [+ received] == [- snapshot]\n"
     "E     - <p>Your appointment with {{ practitioner }} is on {{ date }}.</p>\n"
     "E     + <p>Your appointment with {{ practitioner }} is on {{ date }} at {{ time }}.</p>\n"
     "  tests/email/test_templates.py:22: AssertionError\n"
     "--- 1 snapshot failed. ---\n"
     "I changed the reminder mail on purpose to include the time",
     ("c050",), "long", {}),
    ("$ git push\n"
     "To github.com:lumen/lumen.git\n"
     " ! [rejected]        feat/waitlist -> feat/waitlist (non-fast-forward)\n"
     "$ git pull origin main\n"
     "Merge made by the 'ort' strategy.\n"
     " app/api/slots.py | 12 ++++++------\n"
     "my branch was behind main so I pulled main into it, Maya says the PR history is messy now",
     ("c052",), "long", {}),
    ("$ gh pr view 640 --json additions,deletions,files\n"
     '{"additions": 1384, "deletions": 602, "files": 41}\n'
     "the PR renames the slot engine modules and also changes how waitlist notifications are sent. "
     "Maya hasn't reviewed it in three days, anything I should change?",
     ("c055", "c110"), "long", {}),
    ("```ts\nexport function SlotRow({ slot }: { slot: Slot }) {\n"
     "  const days = slot.week.toSorted((a, b) => a.date.localeCompare(b.date))\n"
     "  return <Row days={days} />\n}\n```\n"
     "TypeError: slot.week.toSorted is not a function\n"
     "    at SlotRow (SlotRow.tsx:3:27)\n"
     "reported from the clinic iPad at the front desk, works on my laptop",
     ("c037",), "long", {}),
    ("RuntimeError: Event loop is closed\n"
     '  File "tests/conftest.py", line 61, in db\n'
     "    yield session\n"
     "  File \"tests/api/test_waitlist.py\", line 12, in test_join_waitlist\n"
     "    resp = client.post('/api/v2/waitlist', json=payload)\n"
     "E   AssertionError: assert 'test' in 'lumen_dev'\n"
     "the test somehow hit my dev database; the test before it overrides get_db and everything after it is broken",
     ("c079",), "long", {}),
    ("[build 4/9] RUN pip install -r requirements.txt\n"
     "#8 CACHED? no\n"
     "#8 421.3 Successfully installed ...\n"
     "#12 exporting to image\n"
     "#12 DONE 38.2s\n"
     "Total: 9m 12s\n"
     "every CI image build downloads everything again even when only app code changed. "
     "how do we keep layers between GitHub runs?",
     ("c082",), "long", {}),
    ("Events\n"
     "  Type     Reason     Age   From     Message\n"
     "  Normal   Killing    3m    kubelet  Stopping container periodiq\n"
     "  Normal   Evicted    3m    kubelet  The node was low on resource: memory.\n"
     "kubectl get pods -l app=periodiq\nNo resources found in prod namespace.\n"
     "nobody noticed until Monday that Sunday's reminders never went out",
     ("c077",), "long", {}),
    ('{"level":"info","event":"booking.created","request_id":"9c1e","clinic_id":17,'
     '"patient_name":"Anna de Boer","phone":"+31612345678"}\n'
     "the DPO found lines like this in Datadog logs during the audit. where did we say what may be logged?",
     ("c038",), "long", {}),
    ("  File \"app/domain/slots.py\", line 77, in generate_slots\n"
     "    start = datetime.combine(day, clinic.opens_at, tzinfo=timezone.utc)\n"
     "clinics in Amsterdam see their first slot at 07:00 in winter and 06:00 in summer "
     "but they open at 08:00; the stored starts_at values look right in UTC though",
     ("c097",), "long", {}),
    ("HTTP/2 404\ncf-cache-status: HIT\nage: 11342\ncache-control: public, max-age=14400\n"
     "content-type: application/json\n"
     '{"detail":"Clinic not found"}\n'
     "the clinic was created this morning but the app still says it doesn't exist for some users",
     ("c105",), "long", {}),
    ("$ psql $DATABASE_URL -c \"\\d audit_log\"\n"
     "     Column    |            Type             | Nullable\n"
     "---------------+-----------------------------+---------\n"
     " id            | uuid                        | not null\n"
     " happened_at   | timestamp without time zone | not null\n"
     " actor_id      | uuid                        |\n"
     "finance says the monthly audit report is off by an hour around the end of October",
     ("c046",), "long", {}),
    ("ERROR: duplicate invoice numbers for November\n"
     "2026-11-01T02:00:00.412Z scheduler-0 INFO nightly_invoices started\n"
     "2026-11-01T02:00:00.418Z scheduler-1 INFO nightly_invoices started\n"
     "2026-11-01T02:00:31.902Z scheduler-0 INFO nightly_invoices done: 40 clinics, 40 invoices\n"
     "2026-11-01T02:00:32.117Z scheduler-1 INFO nightly_invoices done: 40 clinics, 40 invoices\n"
     "we scaled the scheduler to two replicas last week for availability",
     ("c086",), "long", {}),
]


def padded(prompt: str, chars: int = 8000) -> str:
    """The prompt behind `chars` of an API's access log, as a paste of a log tail is: the failure and the
    user's line come last, after what a search reads from the beginning of a query."""
    lines = []
    n = 0
    while sum(len(line) + 1 for line in lines) < chars:
        n += 1
        lines.append(f'INFO:     10.4.{n % 7}.{n % 250}:{40000 + n} - "GET /api/v2/clinics/{n % 40}/practitioners?page={n % 5} '
                     f'HTTP/1.1" 200 OK')
    return "\n".join(lines) + "\n" + prompt
