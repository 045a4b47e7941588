"""Reference documents into books/: formats, re-ingest in place, bad files reported, found by meaning and token."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.books import ingest
from indexer.convert import convert
from indexer.search import SearchRequest, Searcher
from indexer.settings import SearchSettings
from tests.indexer.helpers import default_curator, empty_real_model_index, open_index
from tests.pdfs import hostile_pdfs, inflating_pdf, pdf_with_pages
from vault import Change
from vault.errors import ValidationError


HTML = b"""<html><head><title>Payments runbook</title><script>track()</script><style>p{}</style></head><body>
<nav>Home | Docs</nav><h1>Payments runbook</h1><p>When <code>capture</code> fails with ERR_PAY_4711, retry once.</p>
<h2>Refunds</h2><ul><li>Refunds over 500 EUR need approval.</li><li>Refunds go out nightly.</li></ul>
<footer>(c) 2026</footer></body></html>"""


def test_html_keeps_headings_lists_and_code_and_drops_scripts_styles_and_navigation():
    doc = convert(Path("runbook.html"), HTML)
    assert doc.title == "Payments runbook" and doc.kind == "html" and doc.parts == 2
    assert "# Payments runbook" in doc.markdown and "## Refunds" in doc.markdown
    assert "- Refunds over 500 EUR need approval.\n- Refunds go out nightly." in doc.markdown
    assert "`capture`" in doc.markdown
    assert not any(word in doc.markdown for word in ("track()", "p{}", "Home | Docs", "(c) 2026"))


def test_text_keeps_paragraphs_and_lists_and_takes_a_lone_first_line_as_title():
    doc = convert(Path("deploy.txt"), b"Deploy checklist\n\nRun the smoke tests\nagainst staging.\n\n- tag\n- announce\n")
    assert doc.title == "Deploy checklist"
    assert "Run the smoke tests against staging." in doc.markdown and "- tag\n- announce" in doc.markdown


def test_a_pdf_becomes_one_section_per_page_and_takes_its_title_from_metadata():
    doc = convert(Path("guide.pdf"), pdf_with_pages(["Install the agent", "Rotate keys with ERR_KEY_17"], "Ops guide"))
    assert doc.title == "Ops guide" and doc.kind == "pdf" and doc.parts == 2
    assert "## Page 1\n\nInstall the agent" in doc.markdown and "## Page 2\n\nRotate keys with ERR_KEY_17" in doc.markdown


@pytest.mark.parametrize("name, data, reason", [
    ("scan.pdf", pdf_with_pages(["", ""]), "no text layer"),
    ("broken.pdf", b"%PDF-1.4\nthis is not a pdf", "not a readable PDF"),
    ("notes.txt", b"\x00\x01\x02binary", "looks binary"),
    ("latin.txt", "café".encode("latin-1"), "not UTF-8"),
    ("slides.pptx", b"PK\x03\x04", "unsupported type .pptx"),
    ("empty.md", b"---\ntitle: x\n---\n\n", "empty"),
])


def test_bad_documents_are_refused_with_the_file_and_the_reason(name: str, data: bytes, reason: str):
    with pytest.raises(ValidationError, match=reason) as caught:
        convert(Path(name), data)
    assert name in str(caught.value)


def test_re_ingest_changes_nothing_and_a_changed_source_updates_in_place_keeping_human_edits(hashing_root: Path,
                                                                                              tmp_path: Path):
    index = open_index(hashing_root)
    curator = default_curator(index)
    source = tmp_path / "project" / "docs" / "runbook.html"
    source.parent.mkdir(parents=True)
    source.write_bytes(HTML)
    first = ingest(curator, [source], project=tmp_path / "project")
    assert [(r.status, r.source, r.parts) for r in first] == [("created", "docs/runbook.html", 2)]
    book = hashing_root / first[0].path
    before = book.read_bytes()
    again = ingest(curator, [source], project=tmp_path / "project")
    assert again[0].status == "unchanged" and book.read_bytes() == before
    curator.vault.edit(index.get(first[0].id), Change(fields={"tags": ["payments"]}))  # a human's edit
    source.write_bytes(HTML.replace(b"retry once", b"retry twice"))
    dry = ingest(curator, [source], project=tmp_path / "project", dry_run=True)
    assert dry[0].status == "would-update" and b"retry once" in book.read_bytes()
    updated = ingest(curator, [source], project=tmp_path / "project")
    assert (updated[0].status, updated[0].id, updated[0].path) == ("updated", first[0].id, first[0].path)
    memory = index.get(first[0].id)
    assert "retry twice" in memory.body and tuple(memory.tags) == ("payments",)
    index.close()


def test_one_bad_file_in_a_folder_is_reported_and_the_others_go_in(hashing_root: Path, tmp_path: Path):
    index = open_index(hashing_root)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nThe alpha service owns invoices.\n")
    (docs / "b.txt").write_bytes(b"\x00binary")
    (docs / "c.pdf").write_bytes(pdf_with_pages(["Gamma runs on Fridays"]))
    (docs / "big.txt").write_text("x" * 2000)
    results = ingest(default_curator(index), [docs], project=tmp_path, max_bytes=1000)
    by_source = {r.source: r for r in results}
    assert [by_source[k].status for k in ("docs/a.md", "docs/b.txt", "docs/big.txt", "docs/c.pdf")] == \
        ["created", "error", "error", "created"]
    assert "over the" in by_source["docs/big.txt"].reason and "looks binary" in by_source["docs/b.txt"].reason
    assert not list((hashing_root / "books").glob("b*.md"))  # nothing half-written for the bad ones
    index.close()


def test_pdfs_that_break_the_reader_in_its_own_ways_are_reported_and_the_files_beside_them_go_in(
        hashing_root: Path, tmp_path: Path):
    """pypdf's RecursionError (100,000 nested arrays) and LimitReachedError (a cross-reference table declaring 10^8
    objects) are no errors ingest expected: on main the first ended the folder's `memdir ingest` in a traceback, and
    nothing after it was read."""
    index = open_index(hashing_root)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, data in hostile_pdfs().items():
        (docs / name).write_bytes(data)
    (docs / "z.txt").write_text("Deploys pin the uv version.\n")
    results = {r.source: r for r in ingest(default_curator(index), [docs], project=tmp_path)}
    assert results["docs/nested.pdf"].status == "error" and "RecursionError" in results["docs/nested.pdf"].reason
    assert results["docs/declared.pdf"].status == "error" and "LimitReachedError" in results["docs/declared.pdf"].reason
    assert results["docs/z.txt"].status == "created"
    index.close()


def test_a_pdf_built_to_exhaust_its_reader_is_refused_once_it_has_had_its_cpu_budget(monkeypatch: pytest.MonkeyPatch):
    """A 240 KB PDF whose page inflates to 70 MB of operators kept pypdf busy for over 5 minutes of CPU on main (and
    the server's worker thread with it). Read in a child with a budget (2 s here, 60 s by default), it is refused."""
    from indexer import pdf_text

    monkeypatch.setattr(pdf_text, "CPU_SECONDS", 2)
    with pytest.raises(ValidationError, match=r"bomb.pdf: reading the PDF took more than 2 s of CPU"):
        convert(Path("bomb.pdf"), inflating_pdf())


def test_a_folder_walk_reads_no_symlink_that_leads_outside_the_folder_and_the_project_and_says_so(
        hashing_root: Path, tmp_path: Path):
    """A cloned repository can carry docs/x.txt -> ~/.ssh/config: the walk must not copy it into books/."""
    index = open_index(hashing_root)
    project = tmp_path / "project"
    docs = project / "docs"
    docs.mkdir(parents=True)
    elsewhere = tmp_path / "home"
    (elsewhere / "private").mkdir(parents=True)
    (elsewhere / "secret.txt").write_text("hunter2 is the root password of the build box\n")
    (elsewhere / "private" / "notes.md").write_text("# Notes\n\nprivate notes\n")
    (docs / "guide.md").write_text("# Guide\n\nThe zephyr queue drains every 5 minutes.\n")
    (project / "README.md").write_text("# Readme\n\nInside the project, reached through a link.\n")
    (docs / "link.txt").symlink_to(elsewhere / "secret.txt")
    (docs / "inside.md").symlink_to(project / "README.md")
    (docs / "dangling.md").symlink_to(tmp_path / "gone.md")
    (docs / "folder").symlink_to(elsewhere / "private", target_is_directory=True)
    results = {r.source: r for r in ingest(default_curator(index), [docs], project=project)}
    assert results["docs/guide.md"].status == "created" and results["README.md"].status == "created"  # the link, read as what it names
    assert results["docs/link.txt"].status == "skipped" and "outside the folder and the project" in results["docs/link.txt"].reason
    assert results["docs/dangling.md"].status == "skipped" and "dangling" in results["docs/dangling.md"].reason
    assert results["docs/folder"].status == "skipped" and "not followed" in results["docs/folder"].reason
    books = "".join(path.read_text() for path in (hashing_root / "books").glob("*.md"))
    assert "hunter2" not in books and "private notes" not in books
    index.close()


def test_ingesting_the_project_folder_never_takes_in_the_vaults_own_memories(tmp_path: Path):
    from tests.conftest import HASHING_TOML
    from vault import init_vault

    project = tmp_path / "project"
    root = project / "memories"  # a vault folder without a leading dot
    init_vault(root, HASHING_TOML)
    (root / "memory_bank" / "fact.md").write_text("---\nid: m-11112222\ntitle: A fact\n---\nThe fact.\n")
    (project / "design.md").write_text("# Design\n\nThe design document.\n")
    index = open_index(root)
    results = ingest(default_curator(index), [project], project=project)
    assert [(r.source, r.status) for r in results] == [("design.md", "created")]
    index.close()


@pytest.mark.model


def test_with_the_real_model_a_book_page_is_found_by_meaning_and_by_exact_token(tmp_path: Path):
    index = empty_real_model_index(tmp_path)
    pdf = tmp_path / "ops.pdf"
    pdf.write_bytes(pdf_with_pages(["The VPN client must be installed before onboarding.",
                                    "Signing keys are rotated every ninety days; failures log ERR_KEY_17."], "Ops guide"))
    ingest(default_curator(index), [pdf], project=tmp_path)
    searcher = Searcher(index, SearchSettings())
    by_meaning = searcher.search(SearchRequest(query="how often do we change the signing keys"))
    by_token = searcher.search(SearchRequest(query="ERR_KEY_17"))
    assert by_meaning and by_meaning[0].memory.collection == "books" and "Page 2" in by_meaning[0].heading
    assert by_token and by_token[0].memory.title == "Ops guide"
    index.close()
