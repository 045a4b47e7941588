"""Every curator write path refuses credentials unless the caller says the user asked for it."""

from __future__ import annotations

import pytest

from indexer.curator import Curator
from tests.indexer.helpers import open_index
from vault import SecretError
from vault.settings import DedupSettings, LifecycleSettings, ScoringSettings

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


@pytest.fixture
def curator(hashing_root):
    index = open_index(hashing_root)
    yield Curator(index, ScoringSettings(), LifecycleSettings(), DedupSettings())
    index.close()


def test_add_record_update_append_and_merge_refuse_a_credential(curator):
    one = curator.add("Deploys run from the release branch.", collection="patterns").memory
    two = curator.add("Release tags are signed.", collection="patterns").memory
    refused = [
        lambda: curator.add(f"CI token {TOKEN}"),
        lambda: curator.record_response(f"it worked with {TOKEN}", "worked"),
        lambda: curator.update(one.id, content=f"use {TOKEN}"),
        lambda: curator.append(one.id, f"token: {TOKEN}"),
        lambda: curator.merge([one.id, two.id], "Releases", f"both need {TOKEN}"),
    ]
    for call in refused:
        with pytest.raises(SecretError, match="GitHub token"):
            call()
    assert curator.index.memory_count() == 2
    assert all(TOKEN not in path.read_text() for path in curator.vault.root.rglob("*.md"))


def test_allow_secrets_lets_an_explicit_request_through(curator):
    memory = curator.add(f"CI token {TOKEN}", allow_secrets=True).memory
    appended = curator.append(memory.id, f"again {TOKEN}", allow_secrets=True)
    assert appended.body.count(TOKEN) == 2


def test_scoring_a_memory_that_a_person_wrote_a_key_into_still_works(curator):
    memory = curator.add("Deploys run from the release branch.", collection="patterns").memory
    path = curator.vault.root / memory.path
    path.write_text(path.read_text() + f"\nhand-written: {TOKEN}\n")
    curator.index.sync([memory.path])
    scored, = curator.score({memory.id: "worked"})
    assert scored.changes["uses"] == 1 and TOKEN in path.read_text()
