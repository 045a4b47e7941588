"""Text that repeats a private memory shown in the conversation never reaches a shared file."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server.service.app import App
from mcp_server.clients.hooks_server import HookHandler
from mcp_server.service.leaks import shared_fragment
from mcp_server.service.memory_service import MemoryService
from vault import ValidationError

from ..conftest import memory_text, write
from mcp_server.service import operations as ops

RELOCATION = "Dana relocates to Berlin in December; she has not told the team yet."
CONTACT = "Dana's phone number is +31 6 1234 5678 and her personal mail is dana.okafor@fastmail.com."
LEAVE = "Dana is on medical leave from 3 to 14 February for knee surgery."
REVIEWS = "Dana prefers to be reviewed by Tom, not Priya, after the argument in October."
PRIVATE = (RELOCATION, CONTACT, LEAVE, REVIEWS)

# (text the model writes, the private memory it repeats); measured by the first test.
COPIES = [
    ("Note for later: Dana relocates to Berlin in December.", RELOCATION),
    ("Remember that Dana is moving to Berlin soon, plan the handover.", RELOCATION),
    ("If the deploy fails, call her on +31 6 1234 5678.", CONTACT),
    ("Send the report to dana.okafor@fastmail.com.", CONTACT),
    ("Dana is away until 14 February.", LEAVE),
    ("Ask for reviews from Tom rather than Priya when Dana is the author.", REVIEWS),
    ("Dana has knee surgery, so she is on medical leave from 3 to 14 February.", LEAVE),
]
PARAPHRASES = [  # no shared phrase and no distinctive token: not caught (the known limit)
    ("She is moving abroad at the end of the year.", RELOCATION),
    ("She will be out for an operation in early spring.", LEAVE),
]
UNRELATED = [
    "Use Decimal for money amounts in the ledger.",
    "Statement imports take a Postgres advisory lock inside the import transaction.",
    "Run alembic upgrade head before the deploy, never by hand on production.",
    "Dana asked to squash-merge pull requests.",
    "The flaky ledger test sorted rows by insertion order; sort by id.",
    "Celery tasks must be idempotent before retries are added.",
    "Deploys go through the blue-green switch.",
    "Pin Python 3.11 in CI and in the Docker image.",
]


def test_the_detector_catches_every_copied_phrase_or_token_and_leaves_unrelated_notes_shared():
    caught = [shared_fragment(text, private) is not None for text, private in COPIES]
    assert all(caught), [c for c, ok in zip(COPIES, caught) if not ok]
    false_alarms = [t for t in UNRELATED if any(shared_fragment(t, p) for p in PRIVATE)]
    assert false_alarms == []
    assert [shared_fragment(t, p) for t, p in PARAPHRASES] == [None, None], "paraphrase is the documented limit"


@pytest.fixture
def service(hashing_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMDIR_USER_VAULT", str(tmp_path / "user-vault"))
    write(hashing_root, "patterns/handover.md", memory_text(
        "m-5ea0c101", "Team handover notes", "Who covers which service during holidays.", collection="patterns"))
    write(hashing_root, "patterns/review-rota.md", memory_text(
        "m-5ea0c102", "Review rota", "Reviews rotate weekly between the backend developers.", collection="patterns"))
    app = App(hashing_root)
    service = MemoryService(app)
    private = service.add(ops.Add(content=RELOCATION, type="fact", privacy="private")).memory
    service.search(ops.Search(id=private.id, session="s"))  # the conversation has been shown it
    yield service
    app.close()


def project_files(root: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in root.rglob("*.md"))


def test_a_takeaway_repeating_a_shown_private_memory_is_stored_privately(service: MemoryService, hashing_root: Path):
    stored = service.record_response(ops.RecordResponse(key_takeaway="Dana relocates to Berlin in December, so plan the handover.", session="s"))
    assert stored.source == "user" and stored.privacy == "private" and stored.kept_private
    plain = service.record_response(ops.RecordResponse(key_takeaway="Handover notes live in patterns/handover.md.", session="s"))
    assert plain.source == "project" and plain.kept_private is None
    assert "Berlin" not in project_files(hashing_root)


def test_a_takeaway_of_another_conversation_is_not_judged_by_this_ones_private_memories(service: MemoryService):
    assert service.record_response(ops.RecordResponse(key_takeaway="Dana relocates to Berlin in December.", session="other")).source == "project"


@pytest.mark.parametrize("write_it", [
    lambda s: s.update(ops.Update(memory_id="m-5ea0c101", content="Dana relocates to Berlin in December: Tom covers billing.", session="s")),
    lambda s: s.append(ops.Append(memory_id="m-5ea0c101", content="From December Dana works from Berlin.", session="s")),
    lambda s: s.merge(ops.Merge(ids=["m-5ea0c101", "m-5ea0c102"], title="Handover and reviews",
                      content="Reviews rotate weekly. Dana relocates to Berlin in December.", session="s")),
])
def test_an_edit_that_would_copy_private_text_into_a_shared_file_is_refused(service: MemoryService, hashing_root: Path,
                                                                           write_it):
    before = project_files(hashing_root)
    with pytest.raises(ValidationError, match="repeats text of private memory"):
        write_it(service)
    assert project_files(hashing_root) == before


def test_an_edit_without_private_content_goes_through(service: MemoryService):
    assert "Tom covers billing" in service.append(ops.Append(memory_id="m-5ea0c101", content="Tom covers billing in December.", session="s")).content


def test_a_captured_exchange_is_private_only_when_it_repeats_a_private_memory_shown(service: MemoryService,
                                                                                     hashing_root: Path):
    handler = HookHandler(service)
    handler.prompt({"session_id": "t", "prompt": "who covers billing when Dana leaves for Berlin?"})
    private_id = next(m.id for side in service.app.sides() for m in side.index.all_memories() if m.source == "user")
    service.search(ops.Search(id=private_id, session="t"))
    leaked = handler.stop({"session_id": "t", "last_assistant_message": "Tom, from December."})
    assert service.find(leaked["stored"]).source == "user"
    handler.prompt({"session_id": "t", "prompt": "how do reviews rotate?"})
    plain = handler.stop({"session_id": "t", "last_assistant_message": "Weekly, between the backend developers."})
    assert service.find(plain["stored"]).source == "project", "private memories shown, none repeated: shared"
    assert "Berlin" not in project_files(hashing_root)


def test_add_to_memory_bank_keeps_a_repeated_private_memory_private(
        service: MemoryService, hashing_root: Path):
    # record_response, update, append, merge and the Stop capture check this; add (the
    # add_to_memory_bank tool) takes no session and writes the private sentence to the project.
    service.add(ops.Add(content=RELOCATION + " Plan the handover.", type="fact", session="s"))
    assert "Berlin" not in project_files(hashing_root)
