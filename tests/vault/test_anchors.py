"""Code anchors: a memory remembers the content of the files it cites and notices when the code moves on."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import HASHING_TOML, memory_text, write
from vault import Vault, init_vault
from vault.anchors import AnchorError, Anchors, blob_id, citations, parse_anchor, project_root
from vault.frontmatter import split


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with code and a memory vault inside it, one commit in."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "services/auth.py", "TTL_MINUTES = 15\n\ndef issue_token(user):\n    return sign(user, TTL_MINUTES)\n")
    write(root, "web/api.ts", "export const API_VERSION = 'v3';\nexport function call() {}\n")
    write(root, "docs/deploy.md", "Deploy with make release.\n")
    write(root, "tools/lint.sh", "#!/bin/sh\nruff check .\n")
    init_vault(root / ".memories", HASHING_TOML)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code")
    return root


def anchors_key(vault: Vault, relative: str) -> list[str] | None:
    return vault.writer.read(relative).frontmatter.get("anchors")


def test_the_blob_id_is_what_git_computes_and_the_project_is_the_work_tree(project: Path) -> None:
    for name in ("services/auth.py", "web/api.ts"):
        assert blob_id(project / name) == git(project, "hash-object", name).strip()
    assert project_root(project / ".memories") == project


def test_a_huge_binary_file_is_hashed_in_chunks_like_git(project: Path) -> None:
    data = bytes(range(256)) * 20_000  # 5 MB with NUL bytes, several read chunks
    write(project, "assets/blob.bin", data)
    assert blob_id(project / "assets/blob.bin") == git(project, "hash-object", "assets/blob.bin").strip()


def test_every_citation_form_is_found() -> None:
    body = ("Tokens live in `services/auth.py` ([[services/auth.py|auth]]); the version is pinned at "
            "web/api.ts::API_VERSION and called from `web/api.ts:2`. See [[docs/deploy.md#steps]].")
    found = [(c.path, c.symbol) for c in citations(body)]
    assert found == [("services/auth.py", None), ("docs/deploy.md", None), ("web/api.ts", None),
                     ("web/api.ts", "API_VERSION")]


def test_a_written_memory_anchors_the_project_files_it_cites_in_one_flow_key(project: Path) -> None:
    vault = Vault(project / ".memories")
    memory = vault.add("Tokens are issued in `services/auth.py` with a 15 minute TTL; the API version is "
                       "web/api.ts::API_VERSION. A `missing/file.py` and [[some other note]] are no code.")
    auth = git(project, "hash-object", "services/auth.py").strip()[:12]
    api = git(project, "hash-object", "web/api.ts").strip()[:12]
    assert memory.frontmatter["anchors"] == [f"services/auth.py@{auth}", f"web/api.ts::API_VERSION@{api}"]
    lines = (project / ".memories" / memory.path).read_text().splitlines()
    assert [line for line in lines if "anchors" in line] == [
        f'anchors: [services/auth.py@{auth}, "web/api.ts::API_VERSION@{api}"]']  # one line, one key


def test_a_memory_citing_nothing_gets_no_key(project: Path) -> None:
    vault = Vault(project / ".memories")
    memory = vault.add("We prefer small pull requests.")
    assert "anchors" not in memory.frontmatter
    assert "anchors" not in (project / ".memories" / memory.path).read_text()


def test_paths_outside_the_project_are_never_read(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = write(tmp_path, "outside/secret.py", "PASSWORD = 1\n")
    os.symlink(secret, project / "services/leak.py")
    vault = Vault(project / ".memories")
    opened: list[str] = []
    real_open = open

    def spying_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(os.path.realpath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", spying_open)
    memory = vault.add(f"See `../outside/secret.py`, `{secret}`, [[../../outside/secret.py]], `services/leak.py` "
                       "and `.git/config`.")
    assert "anchors" not in memory.frontmatter
    assert str(secret.resolve()) not in opened
    assert not any("/.git/" in path for path in opened)


def test_a_hand_edited_outside_anchor_is_never_read_or_judged(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = Vault(project / ".memories")
    write(project / ".memories", "history/odd.md", memory_text(
        "m-0dd0dd01", "Odd", "Body.", extra="anchors: [../../etc/passwd@1a2b3c4d5e6f, services/auth.py@000000000000]\n"))
    memory = vault.load("history/odd.md")
    stale = vault.stale(memory)
    assert [s["path"] for s in stale] == ["services/auth.py"]  # the valid entry is still checked


def replay(project: Path, vault: Vault) -> dict[str, set[tuple[str, str]]]:
    """Every memory's stale flags as (path, reason) pairs."""
    return {m.title: {(s["path"], s["reason"]) for s in vault.stale(m)} for m in vault.scan().memories}


def test_a_scripted_history_flags_exactly_the_memories_whose_code_moved_on(project: Path) -> None:
    vault = Vault(project / ".memories")
    vault.add("Tokens last `services/auth.py::TTL_MINUTES` minutes.", title="ttl")
    vault.add("issue_token lives in services/auth.py::issue_token", title="issuer")
    vault.add("The API version is pinned in `web/api.ts`.", title="api")
    vault.add("Deploys follow [[docs/deploy.md]].", title="deploy")
    vault.add("Lint with `tools/lint.sh`.", title="lint")
    vault.add("We prefer small pull requests.", title="plain")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "memories")
    assert all(not flags for flags in replay(project, vault).values())

    # history: a value changes, a symbol is renamed, a file moves, one is deleted, one is untouched
    write(project, "services/auth.py", "TTL_MINUTES = 30\n\ndef mint_token(user):\n    return sign(user, TTL_MINUTES)\n")
    git(project, "commit", "-q", "-am", "longer tokens, issue_token renamed")
    git(project, "mv", "web/api.ts", "web/client.ts")
    git(project, "commit", "-q", "-m", "move the api module")
    git(project, "rm", "-q", "docs/deploy.md")
    git(project, "commit", "-q", "-m", "drop the deploy doc")

    expected = {
        "ttl": {("services/auth.py", "changed")},
        "issuer": {("services/auth.py", "symbol-missing")},
        "api": {("web/api.ts", "deleted")},
        "deploy": {("docs/deploy.md", "deleted")},
        "lint": set(),
        "plain": set(),
    }
    flagged = replay(project, vault)
    predicted = {(title, flag) for title, flags in flagged.items() for flag in flags}
    truth = {(title, flag) for title, flags in expected.items() for flag in flags}
    precision = len(predicted & truth) / len(predicted)
    recall = len(predicted & truth) / len(truth)
    assert (precision, recall) == (1.0, 1.0)

    # a checkout back to the first state makes every memory fresh again
    git(project, "checkout", "-q", "HEAD~3", "--", "services", "web", "docs")
    os.remove(project / "web/client.ts") if (project / "web/client.ts").exists() else None
    assert all(not flags for flags in replay(project, vault).values())


def test_verify_re_anchors_a_stale_memory_and_an_unrelated_edit_does_not(project: Path) -> None:
    vault = Vault(project / ".memories")
    memory = vault.add("Tokens last `services/auth.py::TTL_MINUTES` minutes.", title="ttl")
    write(project, "services/auth.py", "TTL_MINUTES = 30\n")
    from vault import Change
    edited = vault.edit(memory, Change(append="Also see the `web/api.ts` client."))
    assert [s["reason"] for s in vault.stale(edited)] == ["changed"]  # editing is not confirming
    assert len(edited.frontmatter["anchors"]) == 2
    verified = vault.verify(edited)
    assert vault.stale(verified) == []
    assert verified.frontmatter["anchors"][0] == f"services/auth.py::TTL_MINUTES@{blob_id(project / 'services/auth.py')[:12]}"


def test_a_stale_check_stats_files_and_hashes_only_what_changed(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = Vault(project / ".memories")
    memory = vault.add("Tokens last `services/auth.py::TTL_MINUTES` minutes.")
    anchors: Anchors = vault.anchors  # type: ignore[assignment]
    vault.stale(memory)
    hashed: list[str] = []
    monkeypatch.setattr("vault.anchors.blob_id", lambda path: hashed.append(str(path)) or "0" * 40)
    for _ in range(3):
        assert vault.stale(memory) == []
    assert hashed == []
    write(project, "services/auth.py", "TTL_MINUTES = 30\n")
    assert [s["reason"] for s in vault.stale(memory)] == ["changed"]
    assert len(hashed) == 1
    assert anchors.project == project


def test_frontmatter_of_an_anchored_memory_stays_valid_yaml(project: Path) -> None:
    vault = Vault(project / ".memories")
    memory = vault.add("Pinned in `web/api.ts`.")
    doc = split((project / ".memories" / memory.path).read_text())
    assert doc.frontmatter is not None and doc.frontmatter.count("anchors") == 1


def test_a_file_cited_with_and_without_a_symbol_gets_one_anchor(project: Path) -> None:
    vault = Vault(project / ".memories")
    memory = vault.add("TTL is services/auth.py::TTL_MINUTES, issued by `services/auth.py`.")
    assert [a.split("@")[0] for a in memory.frontmatter["anchors"]] == ["services/auth.py::TTL_MINUTES"]


def test_an_absolute_anchor_path_is_refused_with_a_reason_that_names_the_project():
    with pytest.raises(AnchorError, match="relative to the project"):
        parse_anchor("/etc/passwd@1a2b3c4d5e6f")
